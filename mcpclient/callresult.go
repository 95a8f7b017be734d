package mcpclient

import (
	"context"
	"encoding/json"

	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// A tools/call result is decoded by wire.DecodeCallResult rather than by
// mcp-go (see there why). The transport wrapper (wrapped) decodes the raw
// result of a tools/call whose context carries a resultSlot into the
// slot, and hands mcp-go a stand-in result with no content; CallTool then
// returns the slot's result. Results the decoder does not take go to mcp-go
// unchanged, which reports or handles them as it always has.

// resultSlot receives the decoded result of one tools/call.
// A CreateTaskResult goes to task (2025-11-25, see takeTask) or ext
// (2026-07-28, see takeExtTask) instead.
type resultSlot struct {
	res  *mcp.CallToolResult
	task *mcp.Task
	ext  *extTask
}

type resultSlotKey struct{}

// withResultSlot returns ctx carrying a new slot for its tools/call.
func withResultSlot(ctx context.Context) (context.Context, *resultSlot) {
	slot := &resultSlot{}
	return context.WithValue(ctx, resultSlotKey{}, slot), slot
}

// standInResult is what mcp-go is given in place of a result decoded here.
var standInResult = json.RawMessage(`{"content":[]}`)

// takeCallResult decodes resp's result into the slot of ctx, if ctx has
// one and the decoder takes the result, and returns the response to hand
// mcp-go: resp itself, or one with the stand-in result. inPlace says that
// resp's result is in a buffer of its own that nobody else reads or writes
// (as the stdio transport's are), which the decoder may then write to.
func takeCallResult(ctx context.Context, resp *transport.JSONRPCResponse, inPlace bool) *transport.JSONRPCResponse {
	slot, _ := ctx.Value(resultSlotKey{}).(*resultSlot)
	if slot == nil || resp == nil || resp.Error != nil {
		return resp
	}
	res, ok := wire.DecodeCallResult(resp.Result, inPlace)
	if !ok {
		if takeTask(slot, resp.Result) || takeExtTask(slot, resp.Result) { // it has no content
			recordTask(ctx, slot)
			return &transport.JSONRPCResponse{JSONRPC: resp.JSONRPC, ID: resp.ID, Result: standInResult}
		}
		return resp
	}
	slot.res = res
	return &transport.JSONRPCResponse{JSONRPC: resp.JSONRPC, ID: resp.ID, Result: standInResult}
}
