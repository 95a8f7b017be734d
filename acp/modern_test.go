package acp_test

import (
	"context"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
)

// On a 2026-07-28 server, a call's input_required answer reaches the
// editor as the same elicitation/create, scoped to the session and the
// call, whose card shows it waits; the answer goes back with the retry.
func TestInputRequiredElicitation(t *testing.T) {
	var asked []acpsdk.UnstableCreateElicitationRequest
	fc := &fakeClient{RequestPermissionFunc: allowTools(nil)}
	fc.ElicitFunc = func(_ context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		asked = append(asked, p)
		return acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept", Content: map[string]any{"name": "Ann"}}}, nil
	}
	h := newHarness(t, acp.Options{}, fc)
	h.initialize(true, false)
	sid := h.newSession(stdioServer("s", "-protocol", "2026-07-28")).SessionId
	text, status, ups := h.callResult(sid, "mcp__s__ask", `{"message":"Who are you?"}`)
	if status != acpsdk.ToolCallStatusCompleted || !strings.Contains(text, `"name":"Ann"`) {
		t.Errorf("result %q (%s)", text, status)
	}
	if len(asked) != 1 || asked[0].Form == nil || asked[0].Form.Message != "Who are you?" {
		t.Fatalf("the client was asked %+v", asked)
	}
	frames := h.elicitFrames()
	if id := callID(ups); len(frames) != 1 || frames[0]["sessionId"] != string(sid) || frames[0]["toolCallId"] != id || !hasWaiting(ups, id) {
		t.Errorf("elicitation/create on the wire: %v", frames)
	}
}
