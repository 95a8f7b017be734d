package bridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

var serverBin string

func TestMain(m *testing.M) {
	testbin.Main(m, map[string]*string{"./internal/testsupport/fake/mcpserver": &serverBin})
}

func names(view gateway.ToolView) string {
	var out []string
	for _, t := range view.Current().Tools() {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

// TestSyncFollowsServers runs two sessions' tools through a real Manager
// each and checks each session's view follows list changes and restarts.
func TestSyncFollowsServers(t *testing.T) {
	start := func(server string, args ...string) (*mcpclient.Manager, *bridge.Sync) {
		sync := bridge.NewSync(nil)
		m, err := mcpclient.New([]mcpclient.ServerSpec{{Name: server, Command: serverBin, Args: args}}, &mcpclient.Options{
			OnEvent: sync.OnEvent,
			Backoff: func(int) time.Duration { return time.Millisecond },
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close(context.Background()); sync.Detach() })
		sync.Attach(m)
		if err := m.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return m, sync
	}
	ma, syncA := start("alpha")
	_, syncB := start("beta")
	if !strings.Contains(names(syncA), "mcp__alpha__echo") || !strings.Contains(names(syncB), "mcp__beta__echo") {
		t.Fatalf("Start returned before the views had the tools: A=%s B=%s", names(syncA), names(syncB))
	}
	if strings.Contains(names(syncA), "beta") || strings.Contains(names(syncB), "alpha") {
		t.Fatalf("sessions see each other's tools: A=%s B=%s", names(syncA), names(syncB))
	}
	if tg, ok := syncA.Target("mcp__alpha__echo"); !ok || tg != (bridge.Target{Server: "alpha", Tool: "echo"}) {
		t.Errorf("target %+v %v", tg, ok)
	}

	// Calling through the view reaches the server, result converted.
	echo, _ := syncA.Current().Lookup("mcp__alpha__echo")
	res, err := echo.Execute(context.Background(), json.RawMessage(`{"text":"through the bridge"}`), nil)
	if err != nil || res.Content[0].Text != "through the bridge" || !strings.Contains(res.ForModel, "MCP_UNTRUSTED_CONTENT") {
		t.Fatalf("echo: %+v %v", res, err)
	}

	// list_changed adds a tool.
	add, _ := syncA.Current().Lookup("mcp__alpha__add_tool")
	if _, err := add.Execute(context.Background(), json.RawMessage(`{"name":"brand_new"}`), nil); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "new tool in the view", func() bool { return strings.Contains(names(syncA), "mcp__alpha__brand_new") })

	// A crash takes the tools away until the restart brings them back.
	crash, _ := syncA.Current().Lookup("mcp__alpha__crash")
	res, _ = crash.Execute(context.Background(), json.RawMessage(`{}`), nil)
	if !res.IsError || !strings.Contains(res.Content[0].Text, "exited") {
		t.Errorf("crash result: %+v", res)
	}
	testbin.WaitFor(t, "tools back after restart", func() bool {
		st, _ := ma.Status("alpha")
		// The restarted server has its start-up tools only.
		n := names(syncA)
		return st.State == mcpclient.StateReady && strings.Contains(n, "mcp__alpha__echo") && !strings.Contains(n, "brand_new")
	})
	// Progress flows through.
	prog, _ := syncA.Current().Lookup("mcp__alpha__progress")
	var seen int
	res, err = prog.Execute(context.Background(), json.RawMessage(`{"steps":3}`), func(gateway.Progress) { seen++ })
	if err != nil || res.IsError || seen != 3 {
		t.Errorf("progress: %d reports, %+v %v", seen, res, err)
	}
}

// offered returns the tool names the model was offered in each request.
func offered(reqs []gateway.ModelRequest) []string {
	var out []string
	for _, r := range reqs {
		var names []string
		for _, t := range r.Tools {
			names = append(names, t.Name)
		}
		out = append(out, strings.Join(names, ","))
	}
	return out
}

// recording is an in-memory Provider that records its requests and ends
// every turn at once.
type recording struct{ reqs []gateway.ModelRequest }

func (p *recording) Complete(_ context.Context, req gateway.ModelRequest, _ func(gateway.Delta)) (gateway.ModelResponse, error) {
	p.reqs = append(p.reqs, req)
	return gateway.ModelResponse{Message: gateway.Message{Content: []gateway.Content{{Type: gateway.ContentText, Text: "ok"}}}, Stop: gateway.StopEndTurn}, nil
}

// TestToolChangeReachesNextTurnByEventOnly pins the one tool view: the
// Manager's catalog is the source, and a session's tools follow it through
// the Manager's events only. A catalog change the Sync has not been told
// of is not offered; after a tool or status event it is, at the next turn;
// other events change nothing. Native tools come first and are never
// shadowed; after Detach only they are left.
func TestToolChangeReachesNextTurnByEventOnly(t *testing.T) {
	native := gateway.Tool{Name: "mcp__srv__native", Description: "a native tool whose name a bridged one would take"}
	caller := &fakeCaller{tools: []mcpclient.ServerTool{tool("srv", "echo")}}
	sync := bridge.NewSync(nil, native)
	sync.Attach(caller)
	model := &recording{}
	r := gateway.NewRunner(gateway.RunnerOptions{})
	turn := func() {
		t.Helper()
		if _, err := r.Run(context.Background(), gateway.RunOptions{Model: model, Input: []gateway.Content{{Type: gateway.ContentText, Text: "go"}},
			ToolAccess: gateway.ToolAccess{Tools: sync}}); err != nil {
			t.Fatal(err)
		}
	}
	turn()
	caller.tools = []mcpclient.ServerTool{tool("srv", "echo"), tool("srv", "added"), tool("srv", "native")}
	turn() // the catalog changed, no event yet
	sync.OnEvent(mcpclient.Event{Kind: mcpclient.EventResourceUpdated, Server: "srv", URI: "test://r"})
	turn() // not a tool event
	sync.OnEvent(mcpclient.Event{Kind: mcpclient.EventToolsChanged, Server: "srv"})
	turn()
	caller.tools = nil
	sync.OnEvent(mcpclient.Event{Kind: mcpclient.EventStatus, Server: "srv", Status: mcpclient.Status{Name: "srv", State: mcpclient.StateRestarting}})
	turn()
	caller.tools = []mcpclient.ServerTool{tool("srv", "echo")}
	sync.Detach()
	sync.OnEvent(mcpclient.Event{Kind: mcpclient.EventToolsChanged, Server: "srv"})
	turn() // detached: events change nothing
	want := []string{
		"mcp__srv__native,mcp__srv__echo",
		"mcp__srv__native,mcp__srv__echo",
		"mcp__srv__native,mcp__srv__echo",
		"mcp__srv__native,mcp__srv__echo,mcp__srv__added",
		"mcp__srv__native",
		"mcp__srv__native",
	}
	if got := offered(model.reqs); strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("offered per turn:\n%q\nwant\n%q", got, want)
	}
	if _, ok := sync.Known("mcp__srv__added"); ok {
		t.Error("Known after Detach")
	}
}
