package gateway_test

import (
	"fmt"

	"github.com/acpgate/acpgate/gateway"
)

// A session's tools at one moment: its native tools first, then the extra
// ones its MCP servers offer. An extra tool named like a native one is
// left out: native tools are never shadowed.
func ExampleNewToolset() {
	native := []gateway.Tool{{Name: "read_file"}, {Name: "run_command"}}
	extra := []gateway.Tool{{Name: "mcp__notes__count"}, {Name: "read_file"}, {Name: "mcp__notes__read"}}
	ts := gateway.NewToolset(native, extra)
	for _, t := range ts.Tools() {
		fmt.Println(t.Name)
	}
	_, ok := ts.Lookup("mcp__notes__read")
	fmt.Println("len:", ts.Len(), "found:", ok, "filtered:", len(ts.Filter("notes")))
	// Output:
	// read_file
	// run_command
	// mcp__notes__count
	// mcp__notes__read
	// len: 4 found: true filtered: 2
}
