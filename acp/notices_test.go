package acp_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/oauthtest"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient/oauth"
)

// sessionHarness is a harness whose client advertises, in initialize,
// the clientCapabilities.session members caps ("notices", "compaction"),
// which acp-go-sdk's types lack; ups records every session/update as the
// agent wrote it, for the update kinds the SDK's client side does not
// decode. fc nil is a default fake client.
func sessionHarness(t *testing.T, opts acp.Options, fc *fakeClient, caps ...string) (*harness, *testbin.Updates) {
	t.Helper()
	if fc == nil {
		fc = &fakeClient{}
	}
	ups := testbin.NewUpdates()
	h := newHarnessWrapped(t, opts, fc, fc, func(in io.Writer, out io.Reader) (io.Writer, io.Reader) {
		return in, io.TeeReader(out, ups)
	})
	session := map[string]any{}
	for _, c := range caps {
		session[c] = map[string]any{}
	}
	if r := h.call("initialize", map[string]any{"protocolVersion": acpsdk.ProtocolVersionNumber, "clientCapabilities": map[string]any{"session": session}}); r.Error != nil {
		t.Fatalf("initialize: %s", r.Raw)
	}
	return h, ups
}

// notices returns the notices among the updates of session sid from
// index from on.
func notices(t *testing.T, ups *testbin.Updates, from int, sid acpsdk.SessionId) []acp.Notice {
	t.Helper()
	var out []acp.Notice
	for _, u := range ups.Since(from, string(sid), "notice") {
		var n acp.Notice
		u.Decode(t, &n)
		out = append(out, n)
	}
	return out
}

// noticeIs matches a notice by its severity and title.
func noticeIs(severity acp.NoticeSeverity, title string) func(testbin.Update) bool {
	return func(u testbin.Update) bool {
		if u.Kind != "notice" {
			return false
		}
		var n acp.Notice
		if err := json.Unmarshal(u.Raw, &n); err != nil {
			return false
		}
		return n.Severity == severity && n.Title == title
	}
}

// wantNotice is a notice expected, by severity and title.
type wantNotice struct {
	severity acp.NoticeSeverity
	title    string
}

// checkNotices fails unless got are exactly want, in order, each with a
// one-line description.
func checkNotices(t *testing.T, got []acp.Notice, want []wantNotice) {
	t.Helper()
	same := len(got) == len(want)
	for i := range min(len(got), len(want)) {
		same = same && got[i].Severity == want[i].severity && got[i].Title == want[i].title
	}
	for _, n := range got {
		if n.Description == "" || strings.ContainsAny(n.Description, "\r\n") {
			t.Errorf("notice %q: description %q, want one line", n.Title, n.Description)
		}
	}
	if !same {
		t.Errorf("notices %+v\nwant %+v", got, want)
	}
}

// waitServerState waits for a session_info_update from index from on
// that reports server in state, and returns the index after it.
func (h *harness) waitServerState(from int, sid acpsdk.SessionId, server, state string) int {
	h.t.Helper()
	h.fc.rec.waitFor(h.t, from, sid, server+" "+state, func(u acpsdk.SessionUpdate) bool {
		if u.SessionInfoUpdate == nil {
			return false
		}
		return slices.ContainsFunc(serversOf(u.SessionInfoUpdate.Meta), func(s map[string]any) bool { return s["name"] == server && s["state"] == state })
	})
	return h.fc.rec.len()
}

// TestServerNotices: a client that advertised session.notices gets one
// notice per change of a server's state — failed (at start, or after
// giving up restarting), restarting, ready again — in order, never twice
// for one state, none for a server that connects normally; a client that
// did not gets none, and both get the cards. Notices are not replayed by
// session/load.
func TestServerNotices(t *testing.T) {
	t.Parallel()
	for _, opted := range []bool{true, false} {
		name := map[bool]string{true: "notices", false: "no notices"}[opted]
		t.Run(name+"/at start", func(t *testing.T) {
			t.Parallel()
			noticesAtStart(t, opted)
		})
		t.Run(name+"/restarts", func(t *testing.T) {
			t.Parallel()
			noticesOfRestarts(t, opted)
		})
	}
}

// noticeCaps are the session capabilities of a client that opted in to
// notices, or not.
func noticeCaps(opted bool) []string {
	if opted {
		return []string{"notices"}
	}
	return nil
}

// noticesAtStart: a server fails to start, another connects; then
// session/load replays the session.
func noticesAtStart(t *testing.T, opted bool) {
	h, ups := sessionHarness(t, acp.Options{}, nil, noticeCaps(opted)...)
	sid := h.openSession(stdioServer("bad", "-exit-at-start", "7"), stdioServer("good")).SessionId
	h.fc.rec.waitFor(t, 0, sid, "failure card", isCard("mcp-server-failed-bad", acpsdk.ToolCallStatusFailed))
	h.settledServers(sid)
	var want []wantNotice
	if opted {
		want = []wantNotice{{acp.NoticeError, "MCP server bad failed to start"}}
		ups.WaitFor(t, 0, string(sid), "the notice", noticeIs(want[0].severity, want[0].title))
	}
	// Nothing is sent once the session is closed, and its servers'
	// events have all been handled when the close is answered.
	h.closeSession(sid)
	checkNotices(t, notices(t, ups, 0, sid), want)

	// session/load replays the session's log: no notice.
	from := ups.Len()
	if _, err := h.conn.LoadSession(h.ctx(), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	checkNotices(t, notices(t, ups, from, sid), nil)
}

// noticesOfRestarts: a server crashes twice within its restart budget,
// each time restarted, and a third time, when it gives up.
func noticesOfRestarts(t *testing.T, opted bool) {
	cfg := configOf(t, `{"mcpServers": {"crashy": {"command": `+mustJSON(serverBin)+`, "maxRestarts": 2}}}`)
	opts := acp.Options{Config: cfg}
	// The server stays restarting until the test lets it go on.
	backoff, release := make(chan int), make(chan struct{})
	opts.MCP.Backoff = func(n int) time.Duration {
		backoff <- n
		<-release
		return time.Millisecond
	}
	h, ups := sessionHarness(t, opts, nil, noticeCaps(opted)...)
	sid := h.newSession().SessionId
	h.setMode(sid, "auto")
	for range 2 {
		from := h.fc.rec.len()
		h.prompt(sid, "/call mcp__crashy__crash {}")
		recv(t, backoff)
		from = h.waitServerState(from, sid, "crashy", "restarting")
		release <- struct{}{}
		h.waitServerState(from, sid, "crashy", "ready")
	}
	from := h.fc.rec.len()
	h.prompt(sid, "/call mcp__crashy__crash {}")
	h.fc.rec.waitFor(t, from, sid, "failure card", isCard("mcp-server-failed-crashy", acpsdk.ToolCallStatusFailed))
	h.waitServerState(from, sid, "crashy", "failed")
	if opted {
		// The servers' state may reach the client (session_info_update,
		// from another event's report) before the failed event's notice:
		// the notice is waited for, so that the close does not overtake it.
		ups.WaitFor(t, 0, string(sid), "the failed notice", noticeIs(acp.NoticeError, "MCP server crashy failed"))
	}
	h.closeSession(sid)
	var want []wantNotice
	if opted {
		restarting, ready := wantNotice{acp.NoticeWarning, "MCP server crashy is restarting"}, wantNotice{acp.NoticeInfo, "MCP server crashy is ready"}
		// mcpclient marks a crashed server restarting at once, before it
		// decides to give up: the third crash is a change to restarting
		// too.
		want = []wantNotice{restarting, ready, restarting, ready, restarting, {acp.NoticeError, "MCP server crashy failed"}}
	}
	checkNotices(t, notices(t, ups, 0, sid), want)
}

// TestSharedServerNotice: a shared server that failed before the session
// opened is told of once, when the session is announced.
func TestSharedServerNotice(t *testing.T) {
	t.Parallel()
	cfg := configOf(t, `{"mcpServers": {"sh": {"command": `+mustJSON(serverBin)+`, "args": ["-exit-at-start", "3"], "shared": true}}}`)
	h, ups := sessionHarness(t, acp.Options{Config: cfg}, nil, "notices")
	sid := h.openSession().SessionId
	ups.WaitFor(t, 0, string(sid), "the shared server's notice", noticeIs(acp.NoticeError, "MCP server sh failed to start"))
	h.closeSession(sid)
	checkNotices(t, notices(t, ups, 0, sid), []wantNotice{{acp.NoticeError, "MCP server sh failed to start"}})
}

// TestSignInNotices: a server that asks for a sign-in (a card: the client
// has no URL elicitation) gives a notice, and another once it is ready
// after the sign-in.
func TestSignInNotices(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Config{})
	opts := acp.Options{}
	opts.MCP.OAuthStore = oauth.NewStore(t.TempDir())
	h, ups := sessionHarness(t, opts, nil, "notices")
	sid := h.openSession(httpServer("prot", srv.MCPURL())).SessionId
	card := h.fc.rec.waitFor(t, 0, sid, "sign-in card", func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && strings.HasPrefix(string(u.ToolCall.ToolCallId), "mcp-signin-prot-")
	}).ToolCall
	link := linkRe.FindStringSubmatch(toolText([]acpsdk.SessionUpdate{{ToolCall: card}}, string(card.ToolCallId)))
	if link == nil {
		t.Fatalf("no link in the card: %s", dump([]acpsdk.SessionUpdate{{ToolCall: card}}))
	}
	ups.WaitFor(t, 0, string(sid), "the sign-in notice", noticeIs(acp.NoticeWarning, "MCP server prot needs sign-in"))
	if err := oauthtest.Follow(context.Background(), link[1]); err != nil {
		t.Fatal(err)
	}
	ups.WaitFor(t, 0, string(sid), "the ready notice", noticeIs(acp.NoticeInfo, "MCP server prot is ready"))
	h.closeSession(sid)
	checkNotices(t, notices(t, ups, 0, sid), []wantNotice{{acp.NoticeWarning, "MCP server prot needs sign-in"}, {acp.NoticeInfo, "MCP server prot is ready"}})
}
