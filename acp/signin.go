package acp

import (
	"context"
	"errors"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/config"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// signInState is a sign-in of one of a session's servers that the user
// was shown: through a URL elicitation, or as a card.
type signInState struct {
	prompt oauth.Prompt
	elicit bool // sent as elicitation/create (its id is the prompt's); else a card
	cardID acpsdk.ToolCallId
}

// presentSignIn is the session's mcpclient.Options.SignIn: it shows a
// server's sign-in prompt once the client knows the session, as a URL
// elicitation where the client supports them (returning when the user
// accepted, or with oauth.ErrDeclined), else as a card with the link
// (returning at once: the sign-in waits for the redirect).
func (a *Agent) presentSignIn(s *liveSession) func(ctx context.Context, server string, p oauth.Prompt) error {
	return func(ctx context.Context, server string, p oauth.Prompt) error {
		select {
		case <-s.known:
		case <-ctx.Done():
			return ctx.Err()
		}
		link := p.URL
		if p.UserCode != "" {
			link = p.VerificationURI
		}
		st := signInState{prompt: p, cardID: acpsdk.ToolCallId("mcp-signin-" + server + "-" + p.ID)}
		if _, url := a.clientElicitation(); url {
			st.elicit = true
			s.setSignIn(server, &st)
			resp, err := a.clientElicit(ctx, s, gateway.CallInfo{}, acpsdk.UnstableCreateElicitationRequest{Url: &acpsdk.UnstableCreateElicitationUrl{
				ElicitationId: acpsdk.UnstableElicitationId(p.ID), Mode: "url", Url: link, Message: signInMessage(server, p),
			}})
			switch {
			case err != nil:
				return fmt.Errorf("asking the client to open the sign-in page: %w", err)
			case resp.Accept == nil:
				return fmt.Errorf("%w: the sign-in to %s was not accepted in the editor", oauth.ErrDeclined, server)
			}
			return nil
		}
		s.setSignIn(server, &st)
		text := signInMessage(server, p) + fmt.Sprintf("\n\n[Sign in to %s](%s)\n\n%s\n\nThe sign-in waits for you; `/mcp login %s` starts it again.", server, link, link, server)
		a.update(s, acpsdk.StartToolCall(st.cardID, fmt.Sprintf("Sign in to MCP server %s", server),
			acpsdk.WithStartKind(acpsdk.ToolKindFetch),
			acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending),
			acpsdk.WithStartContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}),
		))
		return nil
	}
}

// signInMessage says what the user is asked to do.
func signInMessage(server string, p oauth.Prompt) string {
	if p.UserCode != "" {
		return fmt.Sprintf("MCP server %s needs you to sign in: open %s and enter the code %s.", server, p.VerificationURI, p.UserCode)
	}
	return fmt.Sprintf("MCP server %s needs you to sign in; its tools are available once you have.", server)
}

// setSignIn records the sign-in shown for server (nil: none).
func (s *liveSession) setSignIn(server string, st *signInState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st == nil {
		delete(s.signIns, server)
		return
	}
	s.signIns[server] = st
}

// signInEvent finishes what the user was shown of a server's sign-in.
// When the sign-in ends, a failed one fails the card (saying why); a
// successful one waits for the server to be ready, then the elicitation
// is completed or the card marked done. A sign-in replaced by a new one
// closes its card.
func (a *Agent) signInEvent(s *liveSession, st mcpclient.Status) {
	s.mu.Lock()
	shown := s.signIns[st.Name]
	var failed error
	finish := false
	switch {
	case shown == nil:
	case st.SignIn.ID != "" && st.SignIn.ID != shown.prompt.ID:
		failed, finish = errReplaced, true
	case st.SignIn.ID == "" && st.SignInErr != nil:
		failed, finish = st.SignInErr, true
	case st.SignIn.ID == "" && st.State == mcpclient.StateReady:
		finish = true
	}
	if finish {
		delete(s.signIns, st.Name)
	}
	s.mu.Unlock()
	if !finish {
		return
	}
	if shown.elicit {
		if failed == nil {
			if err := a.conn.UnstableCompleteElicitation(s.ctx, acpsdk.UnstableCompleteElicitationNotification{ElicitationId: acpsdk.UnstableElicitationId(shown.prompt.ID)}); err != nil {
				a.logger.Warn("telling the client a sign-in completed", "session", s.id, "server", st.Name, "err", err)
			}
		}
		return
	}
	status, text := acpsdk.ToolCallStatusCompleted, fmt.Sprintf("Signed in to MCP server %s: %d tools.", st.Name, st.Tools)
	if failed != nil {
		status, text = acpsdk.ToolCallStatusFailed, fmt.Sprintf("Sign-in to MCP server %s did not complete: %v\n\n`/mcp login %s` tries again.", st.Name, failed, st.Name)
	}
	a.update(s, acpsdk.UpdateToolCall(shown.cardID, acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))})))
}

// errReplaced is why a sign-in card closes when a new sign-in replaced it.
var errReplaced = errors.New("replaced by a new sign-in")

// login is /mcp login <server>: it signs in (the prompt is shown as a
// URL elicitation or a card) and waits for the sign-in, or the turn's
// cancellation (the sign-in then goes on).
func (a *Agent) login(ctx context.Context, s *liveSession, server string) string {
	if server == "" {
		return "Usage: /mcp login <server>. /mcp lists the servers and which need a sign-in."
	}
	err := s.mgr.Login(ctx, server)
	switch {
	case err == nil:
		st, _ := s.mgr.Status(server)
		return fmt.Sprintf("Signed in to MCP server %s (%s).", server, st.State)
	case ctx.Err() != nil:
		return fmt.Sprintf("Stopped waiting; the sign-in to %s goes on until it completes or times out.", server)
	case errors.Is(err, mcpclient.ErrUnknownServer), errors.Is(err, mcpclient.ErrNoOAuth):
		return fmt.Sprintf("Cannot sign in to %s: %v", server, err)
	}
	return fmt.Sprintf("Sign-in to MCP server %s failed: %v", server, err)
}

// logout is /mcp logout <server>: it removes the server's stored tokens.
func (a *Agent) logout(ctx context.Context, s *liveSession, server string) string {
	if server == "" {
		return "Usage: /mcp logout <server>."
	}
	if err := s.mgr.Logout(ctx, server); err != nil {
		return fmt.Sprintf("Cannot sign out of %s: %v", server, err)
	}
	return fmt.Sprintf("Signed out of MCP server %s: its stored tokens are removed. `/mcp login %s` signs in again.", server, server)
}

// UnstableLogout implements the ACP logout method: every stored token of
// every MCP server is removed, and the servers of open sessions that were
// signed in wait for a new sign-in.
func (a *Agent) UnstableLogout(ctx context.Context, _ acpsdk.UnstableLogoutRequest) (acpsdk.UnstableLogoutResponse, error) {
	for _, s := range a.liveSessions() {
		for _, st := range s.mgr.Statuses() {
			if st.Transport != mcpclient.TransportStdio {
				if err := s.mgr.Logout(ctx, st.Name); err != nil && !errors.Is(err, mcpclient.ErrNoOAuth) {
					a.logger.Warn("logout", "session", s.id, "server", st.Name, "err", err)
				}
			}
		}
	}
	if store := a.opts.MCP.OAuthStore; store != nil {
		if err := store.RemoveAll(); err != nil {
			return acpsdk.UnstableLogoutResponse{}, internalError("removing the stored tokens: %v", err)
		}
	}
	return acpsdk.UnstableLogoutResponse{}, nil
}

// oauthSpec converts a configured server's oauth settings; its secret
// references are resolved by prepare when the server starts.
func oauthSpec(o *config.OAuth) *oauth.Config {
	if o == nil {
		return nil
	}
	return &oauth.Config{
		Disabled: o.Disabled, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes,
		ClientMetadataURL: o.ClientMetadataURL, GrantType: o.GrantType, TokenEndpointAuthMethod: o.TokenEndpointAuthMethod,
		PrivateKey: []byte(o.PrivateKey), SigningAlgorithm: o.SigningAlgorithm, DeviceCode: o.DeviceCode,
		IdentityAssertion: o.IdentityAssertion, IDPClientID: o.IDPClientID, IDPIssuer: o.IDPIssuer, IDPTokenEndpoint: o.IDPTokenEndpoint,
	}
}

// resolveOAuth resolves the secret references of a spec's oauth settings
// into a copy (the spec's own are left as they are).
func (a *Agent) resolveOAuth(ctx context.Context, o *oauth.Config) (*oauth.Config, error) {
	if o == nil {
		return nil, nil
	}
	out := *o
	for _, f := range []struct {
		key string
		v   *string
	}{{"clientSecret", &out.ClientSecret}, {"identityAssertion", &out.IdentityAssertion}} {
		if *f.v == "" {
			continue
		}
		v, err := a.opts.Secrets.ResolveKey(ctx, f.key, *f.v)
		if err != nil {
			return nil, fmt.Errorf("resolving oauth.%s: %w", f.key, err)
		}
		*f.v = v
	}
	if len(out.PrivateKey) > 0 {
		v, err := a.opts.Secrets.ResolveKey(ctx, "privateKey", string(out.PrivateKey))
		if err != nil {
			return nil, fmt.Errorf("resolving oauth.privateKey: %w", err)
		}
		out.PrivateKey = []byte(v)
	}
	return &out, nil
}
