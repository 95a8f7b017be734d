package bridge

import (
	"encoding/json"
	"strings"
)

// MaxSchemaStringBytes caps each string of a tool's input schema
// (descriptions, titles, enum values, defaults, examples) as the model
// sees it.
const MaxSchemaStringBytes = MaxDescriptionBytes

// untrustedSchema returns raw, a server's input schema, with marker
// look-alikes neutralised and strings longer than MaxSchemaStringBytes cut
// in every string value (property names are left alone: they are what the
// model's arguments must use). A schema that needs neither is returned as
// it is, byte for byte.
func untrustedSchema(raw json.RawMessage) json.RawMessage {
	if !schemaNeedsWork(raw) {
		return raw
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	out, err := json.Marshal(cleanSchemaValue(v))
	if err != nil {
		return raw
	}
	return out
}

// schemaNeedsWork reports whether raw may hold a string over the cap or a
// marker: the raw bytes are longer than the cap, or hold a marker once
// normalised.
func schemaNeedsWork(raw json.RawMessage) bool {
	if len(raw) > MaxSchemaStringBytes {
		return true
	}
	n := normalize(string(raw))
	return (strings.Contains(n, "untrusted") || strings.Contains(n, "detsurtnu")) && markerShuffled().MatchString(n)
}

// cleanSchemaValue applies untrustedSchema's rules to a decoded value.
func cleanSchemaValue(v any) any {
	switch v := v.(type) {
	case string:
		return capText(neutralizeMarkers(v, normalize(v)), MaxSchemaStringBytes, "schema text")
	case []any:
		for i := range v {
			v[i] = cleanSchemaValue(v[i])
		}
	case map[string]any:
		for k, e := range v {
			v[k] = cleanSchemaValue(e)
		}
	}
	return v
}
