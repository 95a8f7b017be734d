package fakeanthropic

import (
	"bytes"
	"encoding/json"
)

// CachePrefix returns the request's prompt as the API's prompt cache
// sees it, in its order: each tool, then each system block, then each
// message (its role, then each content block), one after the other. Each
// is the JSON the client sent, with its cache_control removed (a
// breakpoint says where to cache, it is not part of the prompt) and its
// keys sorted, so that one block is the same bytes whether or not a
// request marks it. breakpoints are the offsets in prompt where an
// element that carried cache_control ends: the prefixes a cache could
// store and serve. Elements that do not decode are taken as sent.
func (r Request) CachePrefix() (prompt []byte, breakpoints []int) {
	var buf bytes.Buffer
	add := func(raw json.RawMessage) {
		out, marked := canonical(raw)
		buf.Write(out)
		if marked {
			breakpoints = append(breakpoints, buf.Len())
		}
	}
	for _, t := range r.Tools {
		add(t)
	}
	for _, s := range r.System {
		add(s)
	}
	for _, m := range r.Messages {
		role, _ := json.Marshal(map[string]string{"role": m.Role})
		buf.Write(role)
		for _, c := range m.Content {
			add(c)
		}
	}
	return buf.Bytes(), breakpoints
}

// canonical is raw, a JSON object, without its cache_control and with its
// keys sorted; marked says whether it had a cache_control.
func canonical(raw json.RawMessage) (out []byte, marked bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var obj map[string]any
	if d.Decode(&obj) != nil || obj == nil {
		return raw, false
	}
	cc, marked := obj["cache_control"]
	marked = marked && cc != nil
	delete(obj, "cache_control")
	out, err := json.Marshal(obj)
	if err != nil {
		return raw, marked
	}
	return out, marked
}
