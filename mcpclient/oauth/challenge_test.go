package oauth

import (
	"net/http"
	"testing"
)

func TestParseChallenge(t *testing.T) {
	for _, tc := range []struct {
		headers []string
		want    challenge
	}{
		{[]string{`Bearer resource_metadata="https://s/.well-known/oauth-protected-resource/mcp", scope="a b"`},
			challenge{Scheme: "Bearer", ResourceMetadata: "https://s/.well-known/oauth-protected-resource/mcp", Scope: "a b"}},
		{[]string{`Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://s/prm", error_description="more \"scope\""`},
			challenge{Scheme: "Bearer", ResourceMetadata: "https://s/prm", Scope: "mcp:basic mcp:write", Error: "insufficient_scope"}},
		{[]string{`Basic realm="x", Bearer scope="s"`}, challenge{Scheme: "Bearer", Scope: "s"}},
		{[]string{`Basic abc==, bearer Scope=s, resource_metadata=https://s/prm`}, challenge{Scheme: "bearer", Scope: "s", ResourceMetadata: "https://s/prm"}},
		{[]string{`Negotiate`, `Bearer realm="r"`}, challenge{Scheme: "Bearer"}},
		{[]string{`Bearer`}, challenge{Scheme: "Bearer"}},
		{[]string{`Bearer error="invalid_token"`, `Bearer scope="second"`}, challenge{Scheme: "Bearer", Error: "invalid_token"}},
		// RFC 9449 §7.1: the DPoP scheme, with its nonce error.
		{[]string{`DPoP resource_metadata="https://s/prm"`}, challenge{Scheme: "DPoP", ResourceMetadata: "https://s/prm"}},
		{[]string{`Negotiate, DPoP error="use_dpop_nonce", algs="ES256"`}, challenge{Scheme: "DPoP", Error: "use_dpop_nonce"}},
		{nil, challenge{}},
	} {
		h := http.Header{}
		for _, v := range tc.headers {
			h.Add("WWW-Authenticate", v)
		}
		if got := parseChallenge(h); got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.headers, got, tc.want)
		}
	}
}

func TestResourceCovers(t *testing.T) {
	for _, tc := range []struct {
		resource, server string
		want             bool
	}{
		{"https://s/mcp", "https://s/mcp", true},
		{"https://S/mcp/", "https://s/mcp", true},
		{"https://s", "https://s/mcp", true},
		{"https://s/m", "https://s/mcp", false},
		{"https://evil.example.com/mcp", "https://s/mcp", false},
		{"http://s/mcp", "https://s/mcp", false},
		{"https://s/mcp#x", "https://s/mcp", false},
	} {
		if got := resourceCovers(tc.resource, tc.server); got != tc.want {
			t.Errorf("resourceCovers(%q, %q) = %v", tc.resource, tc.server, got)
		}
	}
}
