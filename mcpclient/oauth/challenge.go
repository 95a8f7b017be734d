package oauth

import (
	"net/http"
	"strings"
)

// challenge is the Bearer challenge of a WWW-Authenticate header (RFC 6750
// §3, RFC 9728 §5.1).
type challenge struct {
	// Scheme is "Bearer" or "DPoP" (as the server spelled it).
	Scheme           string
	ResourceMetadata string
	Scope            string
	Error            string // e.g. "invalid_token", "insufficient_scope"
}

// parseChallenge returns the Bearer or DPoP challenge of h's
// WWW-Authenticate headers (the first one; zero if there is none).
func parseChallenge(h http.Header) challenge {
	for _, v := range h.Values("WWW-Authenticate") {
		for _, c := range parseAuthenticate(v) {
			if strings.EqualFold(c.scheme, "Bearer") || strings.EqualFold(c.scheme, tokenTypeDPoP) {
				return challenge{
					Scheme:           c.scheme,
					ResourceMetadata: c.params["resource_metadata"],
					Scope:            c.params["scope"],
					Error:            c.params["error"],
				}
			}
		}
	}
	return challenge{}
}

// authChallenge is one challenge of a WWW-Authenticate value.
type authChallenge struct {
	scheme string
	params map[string]string // names lower-cased
}

// parseAuthenticate splits a WWW-Authenticate value into its challenges
// (RFC 9110 §11.6.1): an auth-scheme, then comma-separated auth-params or
// a token68 (skipped). After a comma, a token not followed by "=" starts
// the next challenge. Malformed input yields what could be parsed.
func parseAuthenticate(v string) []authChallenge {
	var out []authChallenge
	p := &headerParser{s: v}
	for {
		p.skip(" \t,")
		if p.i >= len(p.s) {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token: skip the byte
			continue
		}
		c := authChallenge{scheme: scheme, params: map[string]string{}}
		if !p.isParam() {
			p.skipToken68()
		}
		for p.isParam() {
			name := p.token()
			p.skip(" \t")
			p.eat('=')
			p.skip(" \t")
			if p.peek() == '"' {
				c.params[strings.ToLower(name)] = p.quoted()
			} else {
				c.params[strings.ToLower(name)] = p.bare()
			}
			p.skip(" \t")
			if !p.eat(',') {
				break
			}
			p.skip(" \t,")
		}
		out = append(out, c)
	}
}

// headerParser walks a header value.
type headerParser struct {
	s string
	i int
}

func (p *headerParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *headerParser) eat(b byte) bool {
	if p.peek() == b && p.i < len(p.s) {
		p.i++
		return true
	}
	return false
}

func (p *headerParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads an RFC 9110 token.
func (p *headerParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// bare reads an unquoted value: a token, leniently up to the next comma or
// blank (servers send URLs unquoted).
func (p *headerParser) bare() string {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(", \t", p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

// isParam reports whether an auth-param ("token =" but not a token68's
// "==" padding) starts here, after blanks (which it skips).
func (p *headerParser) isParam() bool {
	p.skip(" \t")
	save := p.i
	defer func() { p.i = save }()
	if p.token() == "" {
		return false
	}
	p.skip(" \t")
	return p.peek() == '=' && !strings.HasPrefix(p.s[p.i:], "==")
}

// skipToken68 skips a token68 (or other junk) up to the next comma.
func (p *headerParser) skipToken68() {
	p.skip(" \t")
	if p.peek() == ',' {
		return
	}
	for p.i < len(p.s) && p.s[p.i] != ',' {
		p.i++
	}
}

// quoted reads a quoted-string, unescaping quoted-pairs.
func (p *headerParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if p.i < len(p.s) {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
