package main_test

import (
	"os"
	"path/filepath"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// everythingDist is the dist directory of the pinned reference server
// (testdata/everything); the test fails when it is not installed.
func everythingDist(t *testing.T) string {
	t.Helper()
	dist := filepath.Join(testbin.ModuleRoot(), "testdata", "everything", "node_modules", "@modelcontextprotocol", "server-everything", "dist")
	if _, err := os.Stat(filepath.Join(dist, "index.js")); err != nil {
		t.Fatalf("the reference server is not installed (%v): run `make npm` (or `make test`)", err)
	}
	return dist
}

// everythingSession opens a session in cwd whose one MCP server "e" is the
// reference server over stdio.
func everythingSession(t *testing.T, a *agent, cwd string) acpsdk.SessionId {
	t.Helper()
	index := filepath.Join(everythingDist(t), "index.js")
	sess, err := a.conn.NewSession(ctx30(t), acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "e", Command: "node", Args: []string{index, "stdio"}, Env: []acpsdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return sess.SessionId
}

// progressCards returns the texts of the tool call updates among notes
// that report progress (their _meta has "progress").
func progressCards(notes []acpsdk.SessionNotification) []string {
	var cards []string
	for _, n := range notes {
		if u := n.Update.ToolCallUpdate; u != nil && u.Meta["progress"] != nil {
			for _, c := range u.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					cards = append(cards, c.Content.Content.Text.Text)
				}
			}
		}
	}
	return cards
}
