package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/mcpclient"
)

// This file is a session's MCP servers as the editor sees them: the cards
// of servers that failed or are still connecting, and waiting for
// connecting servers within the startup budget.

// waitServers waits for the session's servers that are still connecting,
// at most until the startup budget of the session ends (a server that
// never initializes must not stall every prompt for its whole connect
// timeout). Servers still connecting then get a card saying their tools
// are not available yet; the card is closed when they settle.
func (pe *peer) waitServers(ctx context.Context, s peerSession) {
	// The wait ends once the session's tool view has seen every change of
	// the servers so far; the shared servers were launched at start-up
	// and have usually settled long before.
	err := s.waitSettled(ctx)
	if err == nil || ctx.Err() != nil {
		return
	}
	for _, st := range s.statuses() {
		if st.State == mcpclient.StateConnecting {
			pe.connectingCard(s, st)
		}
	}
}

// waitFor waits, like waitServers, for the session's servers still
// connecting, but only until found reports true (checked after each of
// their events): /call of a tool, or a prompt command, whose server is
// ready goes on while another server is still connecting.
func (pe *peer) waitFor(ctx context.Context, s peerSession, found func() bool) {
	if found() {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		pe.waitServers(wctx, s)
	}()
	for {
		next := s.nextNews()
		if found() {
			cancel()
			<-settled
			return
		}
		select {
		case <-next:
		case <-settled:
			return
		}
	}
}

// connectingCardID is the tool-call id of a server's "still connecting"
// card.
func connectingCardID(server string) acpsdk.ToolCallId {
	return acpsdk.ToolCallId("mcp-server-connecting-" + server)
}

// connectingCard shows, once per connection attempt, that a server is
// still connecting and its tools are absent.
func (pe *peer) connectingCard(s peerSession, st mcpclient.Status) {
	if s.isClosed() || !s.openConnecting(st.Name) {
		return
	}
	text := fmt.Sprintf("MCP server %s has been connecting since %s; its tools are not available until it is ready.",
		st.Name, st.Since.Format("15:04:05"))
	pe.update(s, acpsdk.StartToolCall(connectingCardID(st.Name), fmt.Sprintf("MCP server %s is still connecting", st.Name),
		acpsdk.WithStartKind(acpsdk.ToolKindOther),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusInProgress),
		acpsdk.WithStartContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}),
	))
}

// settledCard closes the "still connecting" card of a server that is now
// ready (completed) or not (failed).
func (pe *peer) settledCard(s peerSession, st mcpclient.Status) {
	if !s.closeConnecting(st.Name) {
		return
	}
	status, text := acpsdk.ToolCallStatusCompleted, fmt.Sprintf("MCP server %s is ready: %d tools.", st.Name, st.Tools)
	if st.State != mcpclient.StateReady {
		status, text = acpsdk.ToolCallStatusFailed, fmt.Sprintf("MCP server %s is %s: %s", st.Name, st.State, st.Error)
	}
	pe.update(s, acpsdk.UpdateToolCall(connectingCardID(st.Name), acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))})))
}

// failureCard shows a failed server in the session as a failed tool call.
func (pe *peer) failureCard(s peerSession, st mcpclient.Status) {
	if s.isClosed() || !s.markFailed(st.Name) {
		return // announce sends the cards of servers failed before it
	}
	title := fmt.Sprintf("MCP server %s failed to start", st.Name)
	if st.WasReady || errors.Is(st.Err, mcpclient.ErrGaveUp) {
		title = fmt.Sprintf("MCP server %s failed", st.Name)
	}
	text := st.Error
	if line := sandboxLine(st); st.Sandbox != nil {
		text += "\n\n" + line
	}
	if st.Stderr != "" {
		text += "\n\nstderr (last lines):\n" + st.Stderr
	}
	pe.update(s, acpsdk.StartToolCall(acpsdk.ToolCallId("mcp-server-failed-"+st.Name), title,
		acpsdk.WithStartKind(acpsdk.ToolKindOther),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusFailed),
		acpsdk.WithStartContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}),
		acpsdk.WithStartRawOutput(failureOutput(st)),
	))
}

// failureOutput is the raw output of a failed server's card: its state,
// error, stderr and sandbox.
func failureOutput(st mcpclient.Status) map[string]any {
	out := map[string]any{"server": st.Name, "state": string(st.State), "error": st.Error, "stderr": st.Stderr}
	if sb := st.Sandbox; sb != nil {
		out["sandbox"] = map[string]any{"policy": sb.Policy, "enforced": sb.Enforced, "note": sb.Note, "hint": sb.Hint}
	}
	return out
}

// serversInfo tells the client, once it knows the session, the states of
// the session's servers as the session/new response's _meta gives them
// (_meta.acpgate.mcpServers of a session_info_update) when they differ
// from what it was last told: a server that was connecting when the
// session opened is reported ready or failed when it settles. Updates are
// serialised and each carries the state at its sending, so the last one
// is never older than the last change.
func (pe *peer) serversInfo(s peerSession) {
	if !s.known() {
		return
	}
	s.tellNews(func(meta map[string]any) {
		pe.update(s, acpsdk.SessionUpdate{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{Meta: meta}})
	})
}

// serverNews is what a session tells of its servers' changes: to those
// waiting for the next one (next, changed), and to the client, the states
// it was last told (tell). Safe for concurrent use.
type serverNews struct {
	mu     sync.Mutex
	change chan struct{} // closed at the next change; nil when no one waits

	tellMu sync.Mutex // serialises what the client is told
	told   string     // the servers' states it was last told (JSON)
}

// next returns a channel closed at the next event of the session's
// servers (own or shared), once the session's tool view has taken it in.
func (n *serverNews) next() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.change == nil {
		n.change = make(chan struct{})
	}
	return n.change
}

// changed wakes those waiting on next (after each server event).
func (n *serverNews) changed() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.change != nil {
		close(n.change)
		n.change = nil
	}
}

// known reads the servers' states (meta), records them as what the
// client is told (by a response), and returns them.
func (n *serverNews) known(meta func() map[string]any) map[string]any {
	n.tellMu.Lock()
	defer n.tellMu.Unlock()
	m := meta()
	n.told = metaKey(m)
	return m
}

// tell reads the servers' states (meta) and, when they differ from what
// the client was last told, records them and passes them to send, all in
// one critical section: the client is told changes in order, and the last
// thing told is never older than the last change.
func (n *serverNews) tell(meta func() map[string]any, send func(map[string]any)) {
	n.tellMu.Lock()
	defer n.tellMu.Unlock()
	m := meta()
	if key := metaKey(m); key != n.told {
		n.told = key
		send(m)
	}
}

// serverCards is what the client has been shown of a session's servers:
// whether it knows the session yet, the "still connecting" cards open,
// the servers whose failure card was sent. The zero value knows nothing
// yet; safe for concurrent use (its own lock).
type serverCards struct {
	mu        sync.Mutex
	announced bool            // the client knows the session (announce)
	known     chan struct{}   // closed at announce; made on first use
	waiting   map[string]bool // servers whose "still connecting" card is open
	failed    map[string]bool // servers whose failure card was sent
}

// announce records that the client knows the session; first reports
// whether this is the first time.
func (sc *serverCards) announce() (first bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.announced {
		return false
	}
	sc.announced = true
	if sc.known == nil {
		sc.known = make(chan struct{})
	}
	close(sc.known)
	return true
}

// isAnnounced reports whether the client knows the session.
func (sc *serverCards) isAnnounced() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.announced
}

// knownCh is closed once the client knows the session (sign-in prompts
// wait for it).
func (sc *serverCards) knownCh() <-chan struct{} {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.known == nil {
		sc.known = make(chan struct{})
	}
	return sc.known
}

// openConnecting records server's "still connecting" card as open; false
// if it already was.
func (sc *serverCards) openConnecting(server string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.waiting[server] {
		return false
	}
	if sc.waiting == nil {
		sc.waiting = map[string]bool{}
	}
	sc.waiting[server] = true
	return true
}

// closeConnecting records server's "still connecting" card as closed;
// false if none was open.
func (sc *serverCards) closeConnecting(server string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	open := sc.waiting[server]
	delete(sc.waiting, server)
	return open
}

// markFailed records that server's failure card is sent: false when it
// was already, or the client does not know the session yet (announce
// sends the cards of servers failed before it).
func (sc *serverCards) markFailed(server string) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.failed[server] || !sc.announced {
		return false
	}
	if sc.failed == nil {
		sc.failed = map[string]bool{}
	}
	sc.failed[server] = true
	return true
}
