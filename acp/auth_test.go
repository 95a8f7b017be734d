package acp_test

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
)

// TestTerminalAuthMethod: the terminal method is offered, in the schema's
// shape, to a client that advertises terminal auth (auth.terminal, or
// _meta["terminal-auth"], which also gets the legacy _meta form), to no
// other client; authenticate with its ID says to run it in a terminal.
func TestTerminalAuthMethod(t *testing.T) {
	t.Parallel()
	method := &acp.TerminalAuth{ID: "setup", Name: "Set up a model provider", Description: "Pick a provider", Args: []string{"setup"}, Command: "/opt/acpgate"}
	typed := `{"args":["setup"],"description":"Pick a provider","id":"setup","name":"Set up a model provider","type":"terminal"}`
	legacy := `{"_meta":{"terminal-auth":{"args":["setup"],"command":"/opt/acpgate","label":"Set up a model provider"}},"args":["setup"],"description":"Pick a provider","id":"setup","name":"Set up a model provider","type":"terminal"}`
	for _, tc := range []struct {
		name   string
		opts   *acp.TerminalAuth
		caps   acpsdk.ClientCapabilities
		offers string
	}{
		{"auth.terminal", method, acpsdk.ClientCapabilities{Auth: acpsdk.AuthCapabilities{Terminal: true}}, `[` + typed + `]`},
		{"_meta terminal-auth", method, acpsdk.ClientCapabilities{Terminal: true, Meta: map[string]any{"terminal-auth": true, "terminal_output": true}}, `[` + legacy + `]`},
		{"no terminal auth", method, acpsdk.ClientCapabilities{Terminal: true, Meta: map[string]any{"terminal-auth": "yes"}}, `[]`},
		{"no method configured", nil, acpsdk.ClientCapabilities{Auth: acpsdk.AuthCapabilities{Terminal: true}}, `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, acp.Options{Name: "acpgate", TerminalAuth: tc.opts}, nil)
			if _, err := h.conn.Initialize(h.ctx(), acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: tc.caps}); err != nil {
				t.Fatal(err)
			}
			var resp struct {
				Result struct {
					AuthMethods json.RawMessage `json:"authMethods"`
				} `json:"result"`
			}
			line, _, _ := strings.Cut(h.wire.String(), "\n")
			if err := json.Unmarshal([]byte(line), &resp); err != nil {
				t.Fatal(err)
			}
			if got := string(resp.Result.AuthMethods); got != tc.offers {
				t.Errorf("authMethods %s\nwant %s", got, tc.offers)
			}
		})
	}
	t.Run("authenticate", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, acp.Options{Name: "acpgate", TerminalAuth: method}, nil)
		_, err := h.conn.Authenticate(h.ctx(), acpsdk.AuthenticateRequest{MethodId: "setup"})
		if reqCode(err) != -32602 || !strings.Contains(err.Error(), "run `acpgate setup` in a terminal") {
			t.Errorf("authenticate setup: %v", err)
		}
		_, err = h.conn.Authenticate(h.ctx(), acpsdk.AuthenticateRequest{MethodId: "oauth"})
		if reqCode(err) != -32602 || !strings.Contains(err.Error(), "unknown auth method") {
			t.Errorf("authenticate oauth: %v", err)
		}
	})
}
