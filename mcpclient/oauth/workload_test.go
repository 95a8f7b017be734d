package oauth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// Workload identity federation (SEP-1933): the JWT bearer grant with the
// workload's token, read from a file or printed by a command, afresh for
// each grant; no user, no registration.
func TestWorkloadToken(t *testing.T) {
	const token = "eyJ.workload.token"
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]oauth.Config{
		"file":    {GrantType: oauth.GrantJWTBearer, WorkloadTokenFile: file},
		"command": {GrantType: oauth.GrantJWTBearer, ClientID: "workload", WorkloadTokenCommand: []string{"cat", file}},
	} {
		t.Run(name, func(t *testing.T) {
			s := oauthtest.New(t, oauthtest.Config{WorkloadToken: token, NoRegistration: true})
			c := newClient(t, s, cfg, &oauth.Options{RunCommand: run})
			mustOK(t, c, s) // the 401 is answered by the grant, without a sign-in
			tok := s.Requests("token")
			if len(tok) != 1 || tok[0].Form.Get("grant_type") != oauth.GrantJWTBearer || tok[0].Form.Get("assertion") != token {
				t.Fatalf("token requests %+v", tok)
			}
		})
	}
}

// A source that fails is an error naming it, wrapping ErrWorkloadToken;
// a configuration without exactly one source is refused.
func TestWorkloadTokenErrors(t *testing.T) {
	s := oauthtest.New(t, oauthtest.Config{WorkloadToken: "x", NoRegistration: true})
	missing := filepath.Join(t.TempDir(), "absent")
	for name, cfg := range map[string]oauth.Config{
		"missing file":   {GrantType: oauth.GrantJWTBearer, WorkloadTokenFile: missing},
		"failed command": {GrantType: oauth.GrantJWTBearer, WorkloadTokenCommand: []string{"false"}},
	} {
		c := newClient(t, s, cfg, &oauth.Options{RunCommand: run})
		err := c.SignIn(context.Background(), nil)
		if !errors.Is(err, oauth.ErrWorkloadToken) || stepOf(t, err) != oauth.StepToken {
			t.Errorf("%s: SignIn: %v, want ErrWorkloadToken at the token step", name, err)
		}
	}
	for name, cfg := range map[string]oauth.Config{
		"no source":   {GrantType: oauth.GrantJWTBearer},
		"two sources": {GrantType: oauth.GrantJWTBearer, WorkloadTokenFile: missing, WorkloadTokenCommand: []string{"cat"}},
		"no runner":   {GrantType: oauth.GrantJWTBearer, WorkloadTokenCommand: []string{"cat"}},
	} {
		if _, err := oauth.New(s.MCPURL(), cfg, oauth.Options{}); !errors.Is(err, oauth.ErrConfig) {
			t.Errorf("%s: New: %v, want ErrConfig", name, err)
		}
	}
	if len(s.Requests("token")) != 0 {
		t.Fatal("a token request was made without a workload token")
	}
}

// run is Options.RunCommand for the tests, as acpgate passes it.
func run(ctx context.Context, limit int, name string, args ...string) ([]byte, error) {
	return secrets.RunCommandLimit(ctx, limit, name, args...)
}
