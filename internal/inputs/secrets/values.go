package secrets

import (
	"errors"
	"fmt"
)

// This file is which values are secrets worth redacting, and which key
// or header values can be sent at all.

// Plausible reports whether v could be a secret worth redacting: at least
// MinSecretLen bytes, and not a plain word (ASCII letters only, shorter
// than 16 bytes), which would be far likelier to be a protocol's member
// name, a tool's name or a word of text (`json`, `result`, `sessionId`,
// `echo`, `true`) than a key, and whose redaction would mangle every
// message that holds it. [Redactor.Register] registers only what it
// accepts.
func Plausible(v string) bool {
	if len(v) < MinSecretLen {
		return false
	}
	if len(v) >= 16 {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i] | 0x20; c < 'a' || c > 'z' {
			return true
		}
	}
	return false
}

// Register registers the values that could be secrets (Plausible) as Add
// does, and returns how many it ignored. Values from outside acpgate —
// the client's headers, the configuration's secrets, the environment's
// keys, tokens — are registered with Register.
func (r *Redactor) Register(values ...string) (ignored int) {
	keep := make([]string, 0, len(values))
	for _, v := range values {
		if Plausible(v) {
			keep = append(keep, v)
		} else {
			ignored++
		}
	}
	return ignored + r.Add(keep...)
}

// ErrControlChar is wrapped by CheckHeaderValue's error: a key or header
// value holds a control character, which no HTTP request can carry.
var ErrControlChar = errors.New("holds a control character")

// CheckHeaderValue returns an error wrapping ErrControlChar, saying which
// character and where (never the value), when v cannot be sent as an HTTP
// field value — an API key with a pasted CR, say — so that it is refused
// where it is given instead of failing every request as a transport error
// that blames the URL. Tabs are allowed, as HTTP allows them.
func CheckHeaderValue(v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return fmt.Errorf("%w (U+%04X at byte %d)", ErrControlChar, c, i+1)
		}
	}
	return nil
}
