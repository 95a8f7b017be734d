package acp

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// This file is the notices a session's client gets about its MCP servers
// (its own, and the shared ones it uses) when it advertised
// session.notices: a server failed, needs sign-in, is restarting, or is
// ready again after one of those. They are live (never recorded, so
// never replayed) and come alongside the cards, /mcp and the
// session_info_update _meta every client gets.

// maxNoticeRunes bounds a notice's description (an error, one line).
const maxNoticeRunes = 300

// serverNotices remembers, per server of a session, the state its client
// was last sent a notice about, so that each change of state gives one
// notice and a state repeated gives none. Safe for concurrent use.
type serverNotices struct {
	mu   sync.Mutex
	last map[string]mcpclient.State // by server name; absent: none sent
}

// tell reads the servers' states (read) and passes each notice they call
// for to send, all in one critical section: notices go out in the order
// of the changes, and a state read by one caller is never notified again
// by another. A closed server (removed, or the session closing) is
// forgotten: one of that name added later starts afresh.
func (n *serverNotices) tell(read func() []mcpclient.Status, send func(Notice)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, st := range read() {
		if st.State == mcpclient.StateClosed {
			delete(n.last, st.Name)
			continue
		}
		notice, ok := noticeFor(n.last[st.Name], st)
		if !ok {
			continue
		}
		if n.last == nil {
			n.last = map[string]mcpclient.State{}
		}
		n.last[st.Name] = st.State
		send(notice)
	}
}

// noticeFor returns the notice a server's new status st calls for, given
// the state last notified (last; "" for none), and whether it calls for
// one: failed, needs-auth and restarting each give one unless they were
// the last notified; ready gives one only after one of those (a server
// that connects normally gives none); connecting gives none.
func noticeFor(last mcpclient.State, st mcpclient.Status) (Notice, bool) {
	name := bridge.ServerLabel(st.Name)
	switch st.State {
	case mcpclient.StateFailed:
		if last == st.State {
			return Notice{}, false
		}
		title := fmt.Sprintf("MCP server %s failed to start", name)
		if st.WasReady || errors.Is(st.Err, mcpclient.ErrGaveUp) {
			title = fmt.Sprintf("MCP server %s failed", name)
		}
		return Notice{Severity: NoticeError, Title: title, Description: noticeLine(st.Error)}, true
	case mcpclient.StateNeedsAuth:
		if last == st.State {
			return Notice{}, false
		}
		desc := "Its tools are not available until you sign in (see /mcp)."
		if errors.Is(st.Err, oauth.ErrAuthServerChanged) || errors.Is(st.Err, oauth.ErrClientIssuer) {
			desc = noticeLine(st.Error) // names both authorization servers
		}
		return Notice{Severity: NoticeWarning, Title: fmt.Sprintf("MCP server %s needs sign-in", name), Description: desc}, true
	case mcpclient.StateRestarting:
		if last == st.State {
			return Notice{}, false
		}
		return Notice{Severity: NoticeWarning, Title: fmt.Sprintf("MCP server %s is restarting", name), Description: noticeLine(st.Error)}, true
	case mcpclient.StateReady:
		if sb := st.Sandbox; sb != nil && !sb.Enforced && sb.Note != "" && last != mcpclient.StateReady {
			return Notice{Severity: NoticeWarning, Title: fmt.Sprintf("MCP server %s runs without its sandbox", name),
				Description: noticeLine(sb.Note)}, true
		}
		if last != mcpclient.StateFailed && last != mcpclient.StateNeedsAuth && last != mcpclient.StateRestarting {
			return Notice{}, false
		}
		return Notice{Severity: NoticeInfo, Title: fmt.Sprintf("MCP server %s is ready", name),
			Description: plural(st.Tools, "tool", "tools") + " available."}, true
	}
	return Notice{}, false
}

// noticeLine is text (an error, which may span lines) as a notice's
// description: one line, at most maxNoticeRunes characters.
func noticeLine(text string) string {
	return cutTitle(strings.Join(strings.Fields(text), " "), maxNoticeRunes)
}

// notifyServers sends session s the notices the states read calls for,
// when the client advertised session.notices and knows the session (it
// is announced, and not closed).
func (pe *peer) notifyServers(s peerSession, read func() []mcpclient.Status) {
	if !pe.sessionCapabilities().notices {
		return
	}
	if !s.known() {
		return
	}
	s.tellNotices(read, func(n Notice) { pe.updateOwn(s, n) })
}

// statusOf returns a read function for notifyServers giving st.
func statusOf(st mcpclient.Status) func() []mcpclient.Status {
	return func() []mcpclient.Status { return []mcpclient.Status{st} }
}
