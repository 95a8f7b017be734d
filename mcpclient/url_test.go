package mcpclient_test

import (
	"errors"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
)

// TestCheckURL: every rule of the one URL rule, decided by its sentinel.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url      string
		insecure bool
		want     error // nil = ok
	}{
		{"http://127.0.0.1:8080/mcp", false, nil},
		{"http://127.1.2.3/mcp", false, nil},
		{"http://localhost/mcp", false, nil},
		{"http://LOCALHOST:9/mcp", false, nil},
		{"http://[::1]:9/mcp", false, nil},
		{"https://example.com/mcp", false, nil},
		{"http://example.com/mcp", false, mcpclient.ErrInsecureHTTP},
		{"http://10.0.0.1/mcp", false, mcpclient.ErrInsecureHTTP},
		{"http://localhost.example.com/mcp", false, mcpclient.ErrInsecureHTTP},
		{"http://example.com/mcp", true, nil},
		{"ftp://127.0.0.1/x", false, mcpclient.ErrURLScheme},
		{"ftp://127.0.0.1/x", true, mcpclient.ErrURLScheme},
		{"localhost:11434", true, mcpclient.ErrURLScheme},
		{"/just/a/path", true, mcpclient.ErrURLScheme},
		{"", false, mcpclient.ErrURLMissing},
		{"http:///nohost", false, mcpclient.ErrURLHost},
		{"https:///nohost", true, mcpclient.ErrURLHost},
		{"http://%zz/", false, mcpclient.ErrURLSyntax},
	} {
		err := mcpclient.CheckURL(tc.url, tc.insecure)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("CheckURL(%q, %v): unexpected error %v", tc.url, tc.insecure, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("CheckURL(%q, %v) = %v, want %v", tc.url, tc.insecure, err, tc.want)
		}
	}
}
