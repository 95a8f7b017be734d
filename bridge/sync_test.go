package bridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/acpgate/acpgate/testdata/testbin"
)

var serverBin string

func TestMain(m *testing.M) {
	testbin.Main(m, map[string]*string{"./testdata/mcpserver": &serverBin})
}

func names(reg *gateway.Registry, key string) string {
	var out []string
	for _, t := range reg.Tools(key) {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

// TestSyncFollowsServers runs two sessions' tools through a real Manager
// each and checks the Registry follows list changes and restarts.
func TestSyncFollowsServers(t *testing.T) {
	reg := gateway.NewRegistry()
	start := func(key, server string, args ...string) (*mcpclient.Manager, *bridge.Sync) {
		sync := bridge.NewSync(reg, key, nil)
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
	ma, syncA := start("A", "alpha")
	start("B", "beta")
	testbin.WaitFor(t, "alpha's tools", func() bool { return strings.Contains(names(reg, "A"), "mcp__alpha__echo") })
	testbin.WaitFor(t, "beta's tools", func() bool { return strings.Contains(names(reg, "B"), "mcp__beta__echo") })
	if strings.Contains(names(reg, "A"), "beta") || strings.Contains(names(reg, "B"), "alpha") {
		t.Fatalf("sessions see each other's tools: A=%s B=%s", names(reg, "A"), names(reg, "B"))
	}
	if tg, ok := syncA.Target("mcp__alpha__echo"); !ok || tg != (bridge.Target{Server: "alpha", Tool: "echo"}) {
		t.Errorf("target %+v %v", tg, ok)
	}

	// Calling through the Registry reaches the server, result converted.
	echo, _ := reg.Lookup("A", "mcp__alpha__echo")
	res, err := echo.Execute(context.Background(), json.RawMessage(`{"text":"through the bridge"}`), nil)
	if err != nil || res.Content[0].Text != "through the bridge" || !strings.Contains(res.ForModel, "MCP_UNTRUSTED_CONTENT") {
		t.Fatalf("echo: %+v %v", res, err)
	}

	// list_changed adds a tool.
	add, _ := reg.Lookup("A", "mcp__alpha__add_tool")
	if _, err := add.Execute(context.Background(), json.RawMessage(`{"name":"brand_new"}`), nil); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, "new tool in registry", func() bool { return strings.Contains(names(reg, "A"), "mcp__alpha__brand_new") })

	// A crash takes the tools away until the restart brings them back.
	crash, _ := reg.Lookup("A", "mcp__alpha__crash")
	res, _ = crash.Execute(context.Background(), json.RawMessage(`{}`), nil)
	if !res.IsError || !strings.Contains(res.Content[0].Text, "exited") {
		t.Errorf("crash result: %+v", res)
	}
	testbin.WaitFor(t, "tools back after restart", func() bool {
		st, _ := ma.Status("alpha")
		// The restarted server has its start-up tools only.
		n := names(reg, "A")
		return st.State == mcpclient.StateReady && strings.Contains(n, "mcp__alpha__echo") && !strings.Contains(n, "brand_new")
	})
	// Progress flows through.
	prog, _ := reg.Lookup("A", "mcp__alpha__progress")
	var seen int
	res, err = prog.Execute(context.Background(), json.RawMessage(`{"steps":3}`), func(gateway.Progress) { seen++ })
	if err != nil || res.IsError || seen != 3 {
		t.Errorf("progress: %d reports, %+v %v", seen, res, err)
	}
}
