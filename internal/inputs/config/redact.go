package config

import (
	"bytes"
	"encoding/json"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
)

// RedactedValue replaces literal values in [Config.Redacted].
const RedactedValue = "[REDACTED]"

// Redacted returns a deep copy of c in which every non-empty env, headers
// and apiKey value that is not a reference (a secret:// reference or exactly
// one ${VAR}) is replaced by [RedactedValue]; "Bearer ${TOKEN}" is redacted
// too, as it may hold literal text. It is meant for showing the
// configuration, as `acpgate config show` does. A nil Config yields an empty
// one. Redacted is safe for concurrent use on an unmodified Config.
func (c *Config) Redacted() *Config {
	if c == nil {
		return &Config{}
	}
	out := c.clone()
	for _, m := range out.models() {
		m.v.APIKey = redact(m.v.APIKey)
		redactMap(m.v.Headers)
	}
	redactMap(out.Telemetry.Headers)
	for _, set := range out.serverSets() {
		for _, s := range set.v {
			redactMap(s.Env) // the maps are the copy's own
			redactMap(s.Headers)
		}
	}
	return out
}

func redactMap(m map[string]string) {
	for k, v := range m {
		m[k] = redact(v)
	}
}

func redact(v string) string {
	if v == "" || secrets.IsReference(v) {
		return v
	}
	return RedactedValue
}

// JSON returns c in the file format, indented by two spaces, with object
// keys in a stable order (struct fields in file-format order, map keys
// sorted) and no trailing newline. Unset fields are left out, a "type" is
// written as "transport", and parsing the result yields an equal Config. A
// nil Config yields "{}". JSON is safe for concurrent use on an unmodified
// Config.
func (c *Config) JSON() []byte {
	if c == nil {
		c = &Config{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		// Unreachable: a Config holds only strings, ints, bools, slices and maps.
		return []byte("{}")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
