package acp_test

import (
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
)

// TestUsageAndTitleUpdates: after a model response the client gets a
// usage_update (tokens of the response out of model.contextWindow), and
// the first prompt's title reaches it as a session_info_update; without a
// known context window no usage_update is sent.
func TestUsageAndTitleUpdates(t *testing.T) {
	m := scripted(func(_ gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		onDelta(gateway.Delta{Text: "hi"})
		return gateway.ModelResponse{Message: assistant("hi"), Stop: gateway.StopEndTurn, Usage: gateway.Usage{InputTokens: 1200, OutputTokens: 34}}, nil
	})
	for _, c := range []struct {
		name   string
		config string
		usage  bool
	}{
		{"window known", `{"model": {"contextWindow": 128000}}`, true},
		{"window unknown", `{}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, acp.Options{Provider: m, Config: configOf(t, c.config)}, nil)
			s := h.newSession()
			_, ups := h.prompt(s.SessionId, "explain   the build")
			var title *string
			var usage *acpsdk.SessionUsageUpdate
			for _, u := range ups {
				if u.SessionInfoUpdate != nil {
					title = u.SessionInfoUpdate.Title
				}
				if u.UsageUpdate != nil {
					usage = u.UsageUpdate
				}
			}
			if title == nil || *title != "explain the build" {
				t.Errorf("session_info_update title %v, want %q", title, "explain the build")
			}
			switch {
			case c.usage && (usage == nil || usage.Used != 1234 || usage.Size != 128000):
				t.Errorf("usage_update %+v, want used 1234 of 128000", usage)
			case !c.usage && usage != nil:
				t.Errorf("usage_update %+v without a known context window", usage)
			}
		})
	}
}
