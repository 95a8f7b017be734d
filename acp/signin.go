package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// This file is OAuth sign-in through the editor: the sign-in prompt (a URL
// elicitation or a card), its completion, and ACP's logout.

// signInState is a sign-in of one of a session's servers that the user
// was shown: through a URL elicitation, or as a card.
type signInState struct {
	prompt oauth.Prompt
	elicit bool // sent as elicitation/create (its id is the prompt's); else a card
	cardID acpsdk.ToolCallId
	seen   bool // a status event named its prompt: later ones can end it
}

// endedSignIn is a shown sign-in that ended, with why it failed (nil: it
// succeeded).
type endedSignIn struct {
	shown  *signInState
	failed error
}

// signIns are the sign-ins shown in a session, by server. The zero value
// has none; safe for concurrent use (its own lock).
//
// A sign-in is shown (set) from the sign-in's goroutine right after its
// prompt's status event was queued, while the events are delivered (end)
// later, in order, from another goroutine: when one sign-in ends and the
// next starts at once, the next can be shown before the event saying the
// first ended is delivered. So a server can have several sign-ins shown,
// and an event ends only those whose prompt an earlier event named (seen):
// the others are newer than it.
type signIns struct {
	mu    sync.Mutex
	shown map[string]*serverSignIns
}

// serverSignIns are the sign-ins shown for one server, oldest first, and
// the prompt the last status event named ("" when it said none is under
// way).
type serverSignIns struct {
	list  []*signInState
	named string
}

// set records the sign-in shown for server.
func (si *signIns) set(server string, st *signInState) {
	si.mu.Lock()
	defer si.mu.Unlock()
	ss := si.server(server)
	st.seen = st.prompt.ID == ss.named
	ss.list = append(ss.list, st)
}

// server returns the sign-ins of server, made on first use. Called with
// si.mu held.
func (si *signIns) server(name string) *serverSignIns {
	if si.shown == nil {
		si.shown = map[string]*serverSignIns{}
	}
	ss := si.shown[name]
	if ss == nil {
		ss = &serverSignIns{}
		si.shown[name] = ss
	}
	return ss
}

// end applies status st to the sign-ins shown for its server and returns
// those it ended: a status naming a prompt ends, as replaced, the ones an
// earlier event named; one naming none ends them with its SignInErr, or
// as succeeded once the server is ready. The others go on.
func (si *signIns) end(st mcpclient.Status) []endedSignIn {
	si.mu.Lock()
	defer si.mu.Unlock()
	ss := si.server(st.Name)
	ss.named = st.SignIn.ID
	var failed error
	switch {
	case st.SignIn.ID != "":
		failed = errReplaced
	case st.SignInErr != nil:
		failed = st.SignInErr
	case st.State == mcpclient.StateReady:
	default:
		return nil // signed in, not ready yet; or no sign-in
	}
	var ended []endedSignIn
	kept := ss.list[:0]
	for _, shown := range ss.list {
		switch {
		case shown.prompt.ID == st.SignIn.ID:
			shown.seen = true
			kept = append(kept, shown)
		case shown.seen:
			ended = append(ended, endedSignIn{shown: shown, failed: failed})
		default:
			kept = append(kept, shown)
		}
	}
	clear(ss.list[len(kept):])
	ss.list = kept
	return ended
}

// presentSignIn is the session's mcpclient.Options.SignIn: it shows a
// server's sign-in prompt once the client knows the session, as a URL
// elicitation where the client supports them (returning when the user
// accepted, or with oauth.ErrDeclined), else as a card with the link
// (returning at once: the sign-in waits for the redirect).
func (ur *userRequests) presentSignIn(s askSession) func(ctx context.Context, server string, p oauth.Prompt) error {
	return func(ctx context.Context, server string, p oauth.Prompt) error {
		select {
		case <-s.knownCh():
		case <-ctx.Done():
			return ctx.Err()
		}
		link := p.URL
		if p.UserCode != "" {
			link = p.VerificationURI
		}
		st := signInState{prompt: p, cardID: acpsdk.ToolCallId("mcp-signin-" + server + "-" + p.ID)}
		if _, url := ur.peer.clientElicitation(); url {
			st.elicit = true
			s.setSignIn(server, &st)
			resp, err := ur.clientElicit(ctx, s, gateway.CallInfo{}, createElicitation{ElicitationID: p.ID, Mode: string(mcpclient.ElicitURL), URL: link, Message: signInMessage(server, p)})
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
		ur.peer.update(s, acpsdk.StartToolCall(st.cardID, fmt.Sprintf("Sign in to MCP server %s", server),
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

// signInEvent finishes what the user was shown of a server's sign-ins.
// When a sign-in ends, a failed one fails the card (saying why); a
// successful one waits for the server to be ready, then the elicitation
// is completed or the card marked done. A sign-in replaced by a new one
// closes its card.
func (ur *userRequests) signInEvent(s askSession, st mcpclient.Status) {
	for _, e := range s.endSignIn(st) {
		ur.endSignIn(s, st, e)
	}
}

// endSignIn finishes what the user was shown of one ended sign-in of the
// server of status st: the elicitation is completed, or the card marked
// done or failed.
func (ur *userRequests) endSignIn(s askSession, st mcpclient.Status, e endedSignIn) {
	if e.shown.elicit {
		if e.failed == nil {
			if err := ur.peer.conn.CompleteElicitation(s.lifetime(), acpsdk.UnstableCompleteElicitationNotification{ElicitationId: acpsdk.UnstableElicitationId(e.shown.prompt.ID)}); err != nil {
				ur.logger.Warn("telling the client a sign-in completed", "session", s.sessionID(), "server", st.Name, "err", err)
			}
		}
		return
	}
	status, text := acpsdk.ToolCallStatusCompleted, fmt.Sprintf("Signed in to MCP server %s: %d tools.", st.Name, st.Tools)
	if e.failed != nil {
		status, text = acpsdk.ToolCallStatusFailed, fmt.Sprintf("Sign-in to MCP server %s did not complete: %v\n\n`/mcp login %s` tries again.", st.Name, e.failed, st.Name)
	}
	ur.peer.update(s, acpsdk.UpdateToolCall(e.shown.cardID, acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))})))
}

// errReplaced is why a sign-in card closes when a new sign-in replaced it.
var errReplaced = errors.New("replaced by a new sign-in")

// logout answers the ACP logout method: every stored token of
// every MCP server is removed, and the servers of open sessions that were
// signed in wait for a new sign-in.
func (au *auth) logout(ctx context.Context, _ acpsdk.UnstableLogoutRequest) (acpsdk.UnstableLogoutResponse, error) {
	for _, s := range au.sessions() {
		s.logoutAll(ctx, func(server string, err error) {
			au.logger.Warn("logout", "session", s.sessionID(), "server", server, "err", err)
		})
	}
	if store := au.opts.MCP.OAuthStore; store != nil {
		if err := store.RemoveAll(); err != nil {
			return acpsdk.UnstableLogoutResponse{}, internalError("removing the stored tokens: %v", err)
		}
	}
	return acpsdk.UnstableLogoutResponse{}, nil
}
