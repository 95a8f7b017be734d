package acp

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"
)

// This file is the editor as every role sees it (peer): session/update,
// the cards acpgate shows as tool calls of its own, and what the client
// declared in initialize.

// peer is the ACP client on the other end of the connection, shared by the
// agent's roles: its connection (set once by Serve, before any request is
// read), the frame writer, the card counter and the client's capabilities.
// Safe for concurrent use.
type peer struct {
	conn   clientCalls
	out    *lockedWriter
	logger *slog.Logger
	cards  atomic.Uint64 // numbers the cards of server requests

	mu sync.Mutex
	// caps is what the client said it can do, in initialize; session its
	// clientCapabilities.session.
	caps    acpsdk.ClientCapabilities
	session clientSession
}

// setCapabilities keeps what the client declared in initialize.
func (pe *peer) setCapabilities(c acpsdk.ClientCapabilities, session clientSession) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	pe.caps, pe.session = c, session
}

// sessionCapabilities returns what the client said in initialize about
// sessions (notices, compaction).
func (pe *peer) sessionCapabilities() clientSession {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return pe.session
}

// cardStatus updates a card (or a tool call): its status and text.
func (pe *peer) cardStatus(s peerSession, id string, status acpsdk.ToolCallStatus, text string) {
	pe.update(s, acpsdk.UpdateToolCall(acpsdk.ToolCallId(id), acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))})))
}

// nextCard returns a new card id with prefix.
func (pe *peer) nextCard(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, pe.cards.Add(1))
}

// capabilities returns what the client said it can do in initialize.
func (pe *peer) capabilities() acpsdk.ClientCapabilities {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return pe.caps
}

// clientElicitation returns what the client said in initialize about
// elicitation (form and URL mode).
func (pe *peer) clientElicitation() (form, url bool) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	e := pe.caps.Elicitation
	return e != nil && e.Form != nil, e != nil && e.Url != nil
}

// update sends one session/update; failures are logged (the client is
// gone). Resolved secrets are redacted from every frame on its way out
// (lockedWriter).
func (pe *peer) update(s peerSession, u acpsdk.SessionUpdate) { pe.send(s, u) }

// sessionNotification is session/update's params with an update of any
// type that marshals as the schema's SessionUpdate: acp-go-sdk's, or one
// of the types for what it lacks (toolUpdate, a stored update's JSON).
type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// send sends one session/update whose update is u (see
// sessionNotification); failures are logged.
func (pe *peer) send(s peerSession, u any) {
	if err := pe.conn.notify(s.lifetime(), acpsdk.ClientMethodSessionUpdate, sessionNotification{SessionID: s.sessionID(), Update: encodable(u)}); err != nil {
		pe.logger.Debug("session/update not sent", "session", s.sessionID(), "err", err)
	}
}

// card shows a card of its own in session s: a tool call with id, title,
// status and text content (and extra content blocks).
func (pe *peer) card(s peerSession, id, title string, status acpsdk.ToolCallStatus, text string, extra ...acpsdk.ToolCallContent) {
	content := append([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}, extra...)
	pe.update(s, acpsdk.StartToolCall(acpsdk.ToolCallId(id), title,
		acpsdk.WithStartKind(acpsdk.ToolKindOther),
		acpsdk.WithStartStatus(status),
		acpsdk.WithStartContent(content)))
}
