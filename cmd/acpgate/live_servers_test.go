package main_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// /mcp add, remove and restart through the binary: the added server's
// process starts and its tools join, the removed one's process is gone,
// a restart replaces the process, and session/load restores the change
// on top of the servers its request passes.
func TestLiveServerChangesThroughTheBinary(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	a := startAgent(t, state)
	recA, recordA := recordFile(t)
	recB, recordB := recordFile(t)
	cwd := t.TempDir()
	resp, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("alpha", "-record", recA)}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	say := func(line string) string {
		from := len(a.client.all())
		prompt(t, a, sid, line)
		return agentText(a.client.all()[from:])
	}

	if got := say("/mcp add beta -- " + mustJSON(serverBin) + " -name beta -record " + mustJSON(recB)); !strings.HasPrefix(got, "Added MCP server beta: ready, ") {
		t.Fatalf("/mcp add: %q", got)
	}
	if got := say("/tools mcp__beta__echo"); !strings.Contains(got, "`mcp__beta__echo`") {
		t.Fatalf("/tools after add: %q", got)
	}
	alpha := pids(recordA())
	if got := say("/mcp remove alpha"); !strings.HasPrefix(got, "Removed MCP server alpha") {
		t.Fatalf("/mcp remove: %q", got)
	}
	for _, pid := range alpha {
		if testbin.Alive(pid) {
			t.Errorf("alpha's process %d outlived /mcp remove", pid)
		}
	}
	if got := say("/mcp restart beta"); !strings.HasPrefix(got, "Restarted MCP server beta: ready") {
		t.Fatalf("/mcp restart: %q", got)
	}
	if beta := pids(recordB()); len(beta) != 2 || testbin.Alive(beta[0]) || !testbin.Alive(beta[1]) {
		t.Errorf("beta's processes after the restart: %v", beta)
	}

	if _, err := a.conn.CloseSession(ctx30(t), acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids(recordB()) {
		if testbin.Alive(pid) {
			t.Errorf("beta's process %d outlived session/close", pid)
		}
	}
	before := len(pids(recordA()))
	if _, err := a.conn.LoadSession(ctx30(t), acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{stdioServer("alpha", "-record", recA)}}); err != nil {
		t.Fatal(err)
	}
	got := say("/mcp")
	if !strings.Contains(got, "**beta**") || strings.Contains(got, "**alpha**") {
		t.Errorf("/mcp after load: %q", got)
	}
	if n := len(pids(recordA())); n != before {
		t.Errorf("the removed server was started again by load (%d starts, %d before)", n, before)
	}
}
