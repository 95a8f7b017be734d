package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/bridge"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestExecuteLargeResultCopiedOnce checks that a bridged tool's large text
// result costs no more allocations through the bridge than through the
// client (about twice its size): only the part the model can see is
// joined and cut, not the whole text.
func TestExecuteLargeResultCopiedOnce(t *testing.T) {
	const size = 4 << 20
	tool, ok := session(t).Current().Lookup("mcp__srv__big")
	if !ok {
		t.Fatal("no tool mcp__srv__big")
	}
	args, _ := json.Marshal(map[string]any{"bytes": size})
	if _, err := tool.Execute(context.Background(), args, nil); err != nil { // warm up
		t.Fatal(err)
	}
	var res gateway.Result
	var err error
	alloc := testbin.Allocated(func() { res, err = tool.Execute(context.Background(), args, nil) })
	if err != nil || res.IsError || len(res.Content[0].Text) != size {
		t.Fatalf("result: %v, error %v, %d bytes", err, res.IsError, len(res.Content[0].Text))
	}
	if alloc > size*5/2 {
		t.Fatalf("a %d-byte result allocated %d bytes (%.1f×), want at most 2.5×", size, alloc, float64(alloc)/size)
	}
}

// TestExecuteJoinsOnlyWhatTheModelSees checks that a result of several
// large text blocks is cut before its blocks are joined: the model's text
// costs about the cap, not the result's size.
func TestExecuteJoinsOnlyWhatTheModelSees(t *testing.T) {
	block := strings.Repeat("b", 2<<20)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(block), mcp.NewTextContent(block)}}
	c := &fakeCaller{tools: []mcpclient.ServerTool{tool("srv", "t")}, call: func(context.Context, string, string, any) (*mcp.CallToolResult, error) {
		return res, nil
	}}
	tools, _ := bridge.Tools(c, nil)
	var out gateway.Result
	alloc := testbin.Allocated(func() { out, _ = tools[0].Execute(context.Background(), json.RawMessage(`{}`), nil) })
	if len(out.Content) != 2 || out.Content[1].Text != block {
		t.Fatal("the user must get the blocks as they came")
	}
	if want := fmt.Sprintf("of %d bytes", 2*len(block)+1); !strings.Contains(out.ForModel, want) {
		t.Fatalf("the cut note does not say %q:\n%s", want, out.ForModel[len(out.ForModel)-400:])
	}
	if alloc > uint64(len(block)/2) {
		t.Fatalf("a %d-byte result allocated %d bytes for the model's copy", 2*len(block), alloc)
	}
}
