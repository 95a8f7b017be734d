package main_test

import (
	"encoding/json"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// noticeTitled matches a notice titled title.
func noticeTitled(title string) func(testbin.Update) bool {
	return func(u testbin.Update) bool {
		var n acp.Notice
		return u.Kind == "notice" && json.Unmarshal(u.Raw, &n) == nil && n.Title == title
	}
}

// TestServerNoticesThroughTheBinary: a client that advertised
// session.notices is told, once each, that a server failed to start,
// that another crashed and is restarting, and that it is ready again (the
// one that connected normally gave no notice of its own); every frame
// passes the ACP schema check.
func TestServerNoticesThroughTheBinary(t *testing.T) {
	t.Parallel()
	ups := testbin.NewUpdates()
	a := startAgentWith(t, t.TempDir(), agentSetup{session: []string{"notices"}, updates: ups})
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		stdioServer("bad", "-exit-at-start", "3"), stdioServer("good")}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	a.serversUntil(t, resp, "servers settled", settled)
	ups.WaitFor(t, 0, string(sid), "bad's notice", noticeTitled("MCP server bad failed to start"))
	if _, err := a.conn.SetSessionMode(ctx30(t), acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	prompt(t, a, sid, "/call mcp__good__crash {}")
	// The restart comes after the first backoff (1 s).
	ups.WaitFor(t, 0, string(sid), "good ready again", noticeTitled("MCP server good is ready"))
	if _, err := a.conn.CloseSession(ctx30(t), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	var got []acp.Notice
	for _, u := range ups.Since(0, string(sid), "notice") {
		var n acp.Notice
		u.Decode(t, &n)
		got = append(got, n)
	}
	want := []struct {
		severity acp.NoticeSeverity
		title    string
	}{
		{acp.NoticeError, "MCP server bad failed to start"},
		{acp.NoticeWarning, "MCP server good is restarting"},
		{acp.NoticeInfo, "MCP server good is ready"},
	}
	ok := len(got) == len(want)
	for i := range min(len(got), len(want)) {
		ok = ok && got[i].Severity == want[i].severity && got[i].Title == want[i].title && got[i].Description != ""
	}
	if !ok {
		t.Errorf("notices %+v\nwant %+v", got, want)
	}
}
