package acp_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// A resource of a shared server that two sessions mention is subscribed
// to once; both sessions' models are told it changed; the subscription
// ends when the last of them closes, not before.
func TestSharedServerSubscriptions(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record")
	m := scripted(says("ok"))
	cfg := configOf(t, `{"mcpServers": {"sh": {"command": `+mustJSON(serverBin)+`, "args": ["-live", "-record", `+mustJSON(rec)+`], "shared": true}}}`)
	opts := acp.Options{Provider: m, Config: cfg}
	updated := resourceUpdates(&opts)
	h := newHarness(t, opts, allowing())
	one, two := h.newSession().SessionId, h.newSession().SessionId
	for _, sid := range []acpsdk.SessionId{one, two} {
		h.promptBlocks(sid, acpsdk.TextBlock("look at"), acpsdk.ResourceLinkBlock("counter", "test://counter"))
		if got := lastUser(t, m); !strings.Contains(got, "counter 0") {
			t.Fatalf("the model did not get the resource:\n%s", got)
		}
	}
	if n := testbin.Count(readRecord(t, rec), "subscribe test://counter"); n != 1 {
		t.Fatalf("subscribed %d times: %q", n, readRecord(t, rec))
	}

	h.prompt(one, "/call mcp__sh__bump_counter {}")
	select {
	case <-updated:
	case <-h.ctx().Done():
		t.Fatal("no resources/updated event")
	}
	for _, sid := range []acpsdk.SessionId{one, two} {
		h.prompt(sid, "and now?")
		if got := lastUser(t, m); !strings.Contains(got, "- test://counter (MCP server sh)") {
			t.Fatalf("session %s was not told the resource changed:\n%s", sid, got)
		}
	}
	// A session that never mentioned it is not told.
	three := h.newSession().SessionId
	h.prompt(three, "hi")
	if got := lastUser(t, m); strings.Contains(got, "have changed") {
		t.Fatalf("a session that did not mention the resource was told:\n%s", got)
	}

	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: one}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(readRecord(t, rec), "unsubscribe test://counter") {
		t.Fatalf("unsubscribed while a session still follows it: %q", readRecord(t, rec))
	}
	if _, err := h.conn.CloseSession(h.ctx(), acpsdk.CloseSessionRequest{SessionId: two}); err != nil {
		t.Fatal(err)
	}
	if n := testbin.Count(readRecord(t, rec), "unsubscribe test://counter"); n != 1 {
		t.Fatalf("unsubscribed %d times after the last session: %q", n, readRecord(t, rec))
	}
}
