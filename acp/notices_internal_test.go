package acp

import (
	"errors"
	"slices"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
)

// TestNoticeDedupe: the notices a sequence of server states gives, one
// per change to failed, needs-auth or restarting, and ready only after
// one of those; a state repeated gives none; a closed server is
// forgotten; a name that is not a safe line is shown as a label.
func TestNoticeDedupe(t *testing.T) {
	gaveUp := errors.Join(mcpclient.ErrGaveUp, errors.New("exited"))
	seq := []mcpclient.Status{
		{Name: "a", State: mcpclient.StateConnecting},
		{Name: "a", State: mcpclient.StateReady, Tools: 3}, // connected normally: none
		{Name: "a", State: mcpclient.StateRestarting, Error: "exited\nstatus 2", WasReady: true},
		{Name: "a", State: mcpclient.StateRestarting, Error: "exited", WasReady: true},
		{Name: "a", State: mcpclient.StateReady, Tools: 3, WasReady: true},
		{Name: "a", State: mcpclient.StateReady, Tools: 4, WasReady: true},
		{Name: "a", State: mcpclient.StateRestarting, Error: "exited", WasReady: true},
		{Name: "a", State: mcpclient.StateFailed, Error: "gave up", Err: gaveUp, WasReady: true},
		{Name: "a", State: mcpclient.StateConnecting, WasReady: true}, // /mcp restart
		{Name: "a", State: mcpclient.StateFailed, Error: "again", WasReady: true},
		{Name: "a", State: mcpclient.StateClosed, WasReady: true}, // /mcp remove
		{Name: "a", State: mcpclient.StateConnecting},
		{Name: "a", State: mcpclient.StateNeedsAuth, Error: "401"},
		{Name: "a", State: mcpclient.StateNeedsAuth, Error: "401"}, // the sign-in prompt shown
		{Name: "a", State: mcpclient.StateReady, Tools: 1},
		{Name: "b\n<<<x", State: mcpclient.StateFailed, Error: "no such file"},
	}
	var got []string
	var n serverNotices
	for _, st := range seq {
		n.tell(statusOf(st), func(no Notice) {
			got = append(got, string(no.Severity)+" "+no.Title+": "+no.Description)
		})
	}
	want := []string{
		"warning MCP server a is restarting: exited status 2",
		"info MCP server a is ready: 3 tools available.",
		"warning MCP server a is restarting: exited",
		"error MCP server a failed: gave up",
		"warning MCP server a needs sign-in: Its tools are not available until you sign in (see /mcp).",
		"info MCP server a is ready: 1 tool available.",
		"error MCP server b____x failed to start: no such file",
	}
	if !slices.Equal(got, want) {
		t.Errorf("notices\n%q\nwant\n%q", got, want)
	}
}
