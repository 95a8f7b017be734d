package fakellm

import "encoding/json"

// CachePrefix returns what a prompt cache sees of r, in the order the
// prompt is built from it: the request's "tools" array, then its
// "messages" array, byte for byte as the client sent them (nil for one
// that is absent). A prefix cache can serve the part of a request that
// begins with a byte-identical copy of the previous request's: see
// internal/testsupport/cachekit. Nil if the body is not a JSON object.
func (r Request) CachePrefix() []byte {
	var body struct {
		Tools    json.RawMessage `json:"tools"`
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(r.Raw, &body) != nil {
		return nil
	}
	return append(body.Tools, body.Messages...)
}
