package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// Tokens are stored mode 0600, reused by a later Client without a new
// sign-in, told to Secrets, and removed by Logout.
func TestStoreReuseAndLogout(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{RefreshTokens: true})
	dir := filepath.Join(t.TempDir(), "tokens")
	store := oauth.NewStore(dir)
	var mu sync.Mutex
	var secrets []string
	tell := func(v string) { mu.Lock(); secrets = append(secrets, v); mu.Unlock() }
	c := newClient(t, s, oauth.Config{}, &oauth.Options{Store: store, Secrets: tell})
	mustNeedAuth(t, c, s)
	signIn(t, c)

	files, err := os.ReadDir(dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("store holds %v (%v), want one file", files, err)
	}
	path := filepath.Join(dir, files[0].Name())
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("store directory mode %v", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	mu.Lock()
	told := strings.Join(secrets, "\n")
	mu.Unlock()
	for _, field := range []string{"access_token", "refresh_token"} {
		i := strings.Index(string(b), `"`+field+`": "`)
		if i < 0 {
			t.Fatalf("stored file has no %s", field)
		}
		v := strings.SplitN(string(b[i+len(field)+5:]), `"`, 2)[0]
		if !strings.Contains(told, v) {
			t.Fatalf("the %s was not told to Secrets", field)
		}
	}

	second := newClient(t, s, oauth.Config{}, &oauth.Options{Store: store})
	if !second.SignedIn() {
		t.Fatal("a second Client does not see the stored token")
	}
	mustOK(t, second, s)
	if n := len(s.Requests("authorize")); n != 1 {
		t.Fatalf("%d authorizations; the stored token was not reused", n)
	}

	if err := second.Logout(context.Background()); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Fatalf("Logout left %v", files)
	}
	if second.SignedIn() {
		t.Fatal("SignedIn after Logout")
	}
	mustNeedAuth(t, second, s)
	third := newClient(t, s, oauth.Config{}, &oauth.Options{Store: store})
	if third.SignedIn() {
		t.Fatal("a Client after Logout is signed in")
	}
}

// A Client without a token adopts the one another Client (another
// session) stored meanwhile, instead of needing a sign-in of its own.
func TestAdoptsTokenStoredMeanwhile(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{})
	store := oauth.NewStore(t.TempDir())
	a := newClient(t, s, oauth.Config{}, &oauth.Options{Store: store})
	b := newClient(t, s, oauth.Config{}, &oauth.Options{Store: store})
	mustNeedAuth(t, a, s)
	signIn(t, a)
	mustOK(t, b, s)
	if n := len(s.Requests("authorize")); n != 1 {
		t.Fatalf("%d authorizations", n)
	}
}

// The token goes to the server's origin only: not to another port of the
// same host, not to another name of it.
func TestTokenStaysWithItsOrigin(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{})
	c := newClient(t, s, oauth.Config{}, nil)
	mustNeedAuth(t, c, s)
	signIn(t, c)
	mustOK(t, c, s)
	seen := make(chan string, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Authorization")
	}))
	defer other.Close()
	for _, u := range []string{other.URL + "/mcp", strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/mcp"} {
		if _, err := post(t, c, u, initialize); err != nil {
			t.Fatal(err)
		}
		if h := <-seen; h != "" {
			t.Fatalf("%s got Authorization %q", u, h)
		}
	}
}
