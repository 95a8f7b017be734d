package mcpclient_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
)

// oldServer is a minimal stdio MCP server that only speaks protocol
// 2024-11-05, written by hand so that it answers exactly as an old server
// would. The test binary runs it when MCPCLIENT_TEST_OLD_SERVER=1; with
// OLD_SERVER_IGNORE_UNKNOWN=1 it never answers a method it does not know.
func oldServer() {
	sc := bufio.NewScanner(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // notifications
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": "2024-11-05",
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "old", "version": "0.1"},
			}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "hello", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello from 2024"}}}
		case "ping":
			result = map[string]any{}
		default:
			if os.Getenv("OLD_SERVER_IGNORE_UNKNOWN") == "1" {
				continue // as some servers do: no answer at all
			}
			_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			continue
		}
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}

func TestOlderProtocolNegotiatesDown(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, mcpclient.ServerSpec{
		Name: "old", Command: os.Args[0], Env: map[string]string{"MCPCLIENT_TEST_OLD_SERVER": "1"},
	})
	st, _ := m.Status("old")
	if st.State != mcpclient.StateReady || st.ProtocolVersion != "2024-11-05" || st.Tools != 1 {
		t.Fatalf("%+v", st)
	}
	if got := text(t, call(t, m, "old", "hello", nil)); got != "hello from 2024" {
		t.Errorf("call: %q", got)
	}
}
