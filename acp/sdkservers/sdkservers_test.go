package sdkservers_test

import (
	"encoding/json"
	"reflect"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/sdkservers"
	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// TestRoundTrip: every kind of entry goes to acp-go-sdk and back
// unchanged; the SDK encodes stdio, http and sse entries exactly as
// mcpservers does (so what acpgate stored before the conversion moved here
// reads back), and an acp entry with its serverId in the SDK's field id.
func TestRoundTrip(t *testing.T) {
	list := `[
		{"name": "fs", "command": "fs-server", "args": ["--root", "/"], "env": {"B": "2", "A": "1"}},
		{"name": "bare", "command": "bare"},
		{"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
		{"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse"},
		{"type": "acp", "name": "tools", "serverId": "550e8400"}]`
	servers, err := mcpservers.ParseList(json.RawMessage(list), "mcpServers", mcpservers.Options{ACP: true})
	if err != nil {
		t.Fatal(err)
	}
	sdk := sdkservers.ToSDKList(servers)
	own, viaSDK := testbin.JSON(t, servers[:4]), testbin.JSON(t, sdk[:4])
	if own != viaSDK {
		t.Errorf("SDK encoding differs:\n own %s\n sdk %s", own, viaSDK)
	}
	if got := testbin.JSON(t, sdk[4]); got != `{"id":"550e8400","name":"tools","type":"acp"}` {
		t.Errorf("acp entry through the SDK: %s", got)
	}
	// What the SDK decodes from its own encoding converts back.
	var decoded []acpsdk.McpServer
	if err := json.Unmarshal([]byte(testbin.JSON(t, sdk)), &decoded); err != nil {
		t.Fatal(err)
	}
	if back := sdkservers.FromSDKList(decoded); !reflect.DeepEqual(back, servers) {
		t.Errorf("back from the SDK:\n got  %s\n want %s", testbin.JSON(t, back), testbin.JSON(t, servers))
	}
	// Stored SDK-encoded entries read as servers.
	var stored []mcpservers.Server
	if err := json.Unmarshal([]byte(viaSDK), &stored); err != nil || !reflect.DeepEqual(stored, servers[:4]) {
		t.Errorf("stored entries: %v %s", err, testbin.JSON(t, stored))
	}
}

// TestEmpty: an empty SDK entry has no transport, which Specs refuses;
// nil stays nil and a server of no transport is the SDK's empty entry.
func TestEmpty(t *testing.T) {
	if _, err := mcpservers.Specs(sdkservers.FromSDKList([]acpsdk.McpServer{{}}), "mcpServers"); err == nil {
		t.Error("an empty entry converted into a spec")
	}
	if sdkservers.FromSDKList(nil) != nil {
		t.Error("nil list not nil")
	}
	if got := sdkservers.ToSDK(mcpservers.Server{Name: "x"}); !reflect.DeepEqual(got, acpsdk.McpServer{}) {
		t.Errorf("ToSDK(no transport) = %+v", got)
	}
	if got := sdkservers.ToSDKList(nil); got == nil || len(got) != 0 {
		t.Errorf("ToSDKList(nil) = %#v, want empty", got)
	}
}
