package mcpclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// A server request that names its task (_meta related-task) belongs to
// the call that runs that task, even while another call of the same
// server runs: the reference server's simulate-research-query asks for a
// clarification while trigger-long-running-operation is under way.
func TestRelatedTaskAttribution(t *testing.T) {
	t.Parallel()
	needEverything(t)
	h := &handlers{ElicitFunc: func(context.Context, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"interpretation": "chosen"}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	m := start(t, opts, mcpclient.ServerSpec{Name: "e", Command: "node", Args: []string{everythingJS, "stdio"}, Cwd: everythingDir})
	mustReady(t, m, "e")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	other, stopOther := context.WithCancel(ctx)
	otherDone := make(chan error, 1)
	go func() {
		_, err := m.CallTool(other, "e", "trigger-long-running-operation", map[string]any{"duration": 30, "steps": 30})
		otherDone <- err
	}()
	defer func() {
		stopOther()
		if err := <-otherDone; !errors.Is(err, context.Canceled) {
			t.Errorf("the other call: %v", err)
		}
	}()
	res, err := m.CallTool(ctx, "e", "simulate-research-query", map[string]any{"topic": "python", "ambiguous": true})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !strings.Contains(got, "chosen") {
		t.Errorf("the clarification did not reach the result: %q", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.elicits) != 1 || h.elicits[0].Tool != "simulate-research-query" {
		t.Errorf("elicitations %+v, want one from simulate-research-query", h.elicits)
	}
}
