package acp

import (
	"context"
	"encoding/json"
	"errors"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/clientws"
	"github.com/acpgate/acpgate/acp/jsonrpc"
)

// This file is what the agent asks of and tells the client: each ACP
// client method, with acp-go-sdk's types where they are the schema's and
// types of its own where the schema moved past them, over the connection.

// clientCalls sends the client's methods over one connection. A failed
// request is an *acpsdk.RequestError, as acp-go-sdk gives it: the
// client's error answer, -32800 when ctx was cancelled, -32603 when the
// client is gone. Safe for concurrent use.
type clientCalls struct {
	conn *jsonrpc.Conn
}

var _ clientws.Client = clientCalls{}

// call sends a request and decodes its result into result.
func (c clientCalls) call(ctx context.Context, method string, params, result any) error {
	return clientError(c.conn.Call(ctx, method, params, result))
}

// ask sends the request method of c with params and returns its result
// decoded as R.
func ask[R any](ctx context.Context, c clientCalls, method string, params any) (R, error) {
	var r R
	err := c.call(ctx, method, params, &r)
	return r, err
}

// notify sends a notification, unless ctx has ended.
func (c clientCalls) notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.conn.Notify(method, params)
}

// Done is closed when the client has closed the connection.
func (c clientCalls) Done() <-chan struct{} { return c.conn.Done() }

// clientError is err, a failed call's, as acp-go-sdk's client calls
// return it.
func clientError(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &je):
		re := &acpsdk.RequestError{Code: je.Code, Message: je.Message}
		var data any
		if len(je.Data) > 0 && json.Unmarshal(je.Data, &data) == nil {
			re.Data = data
		}
		return re
	case errors.Is(err, context.Canceled):
		return acpsdk.NewRequestCancelled(map[string]any{"error": err.Error()})
	case errors.Is(err, jsonrpc.ErrClosed):
		return acpsdk.NewInternalError(map[string]any{"error": "peer disconnected before response"})
	}
	return acpsdk.NewInternalError(map[string]any{"error": err.Error()})
}

// SessionUpdate sends session/update.
func (c clientCalls) SessionUpdate(ctx context.Context, n acpsdk.SessionNotification) error {
	return c.notify(ctx, acpsdk.ClientMethodSessionUpdate, n)
}

// permissionRequest is session/request_permission's params with the tool
// call's name (ToolCallUpdate.name), which acp-go-sdk v0.13.0's type
// lacks (a card's tool call has none: toolUpdate with no name).
type permissionRequest struct {
	SessionID string                    `json:"sessionId"`
	ToolCall  toolUpdate                `json:"toolCall"`
	Options   []acpsdk.PermissionOption `json:"options"`
}

// RequestPermission sends session/request_permission.
func (c clientCalls) RequestPermission(ctx context.Context, p permissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return ask[acpsdk.RequestPermissionResponse](ctx, c, acpsdk.ClientMethodSessionRequestPermission, p)
}

// createElicitation is elicitation/create's params as the schema has
// them: acp-go-sdk v0.13.0's form and URL types lack the scope, the
// session (and tool call) the question belongs to, which clients that
// validate the request (the TypeScript SDK does) require.
type createElicitation struct {
	SessionID       string                            `json:"sessionId"`
	ToolCallID      string                            `json:"toolCallId,omitempty"`
	Mode            string                            `json:"mode"`
	Message         string                            `json:"message"`
	RequestedSchema *acpsdk.UnstableElicitationSchema `json:"requestedSchema,omitempty"`
	ElicitationID   string                            `json:"elicitationId,omitempty"`
	URL             string                            `json:"url,omitempty"`
}

// CreateElicitation sends elicitation/create.
func (c clientCalls) CreateElicitation(ctx context.Context, p createElicitation) (acpsdk.UnstableCreateElicitationResponse, error) {
	return ask[acpsdk.UnstableCreateElicitationResponse](ctx, c, acpsdk.ClientMethodElicitationCreate, p)
}

// CompleteElicitation sends elicitation/complete.
func (c clientCalls) CompleteElicitation(ctx context.Context, n acpsdk.UnstableCompleteElicitationNotification) error {
	return c.notify(ctx, acpsdk.ClientMethodElicitationComplete, n)
}

// ReadTextFile sends fs/read_text_file.
func (c clientCalls) ReadTextFile(ctx context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return ask[acpsdk.ReadTextFileResponse](ctx, c, acpsdk.ClientMethodFsReadTextFile, p)
}

// WriteTextFile sends fs/write_text_file.
func (c clientCalls) WriteTextFile(ctx context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return ask[acpsdk.WriteTextFileResponse](ctx, c, acpsdk.ClientMethodFsWriteTextFile, p)
}

// CreateTerminal sends terminal/create.
func (c clientCalls) CreateTerminal(ctx context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return ask[acpsdk.CreateTerminalResponse](ctx, c, acpsdk.ClientMethodTerminalCreate, p)
}

// TerminalOutput sends terminal/output.
func (c clientCalls) TerminalOutput(ctx context.Context, p acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return ask[acpsdk.TerminalOutputResponse](ctx, c, acpsdk.ClientMethodTerminalOutput, p)
}

// WaitForTerminalExit sends terminal/wait_for_exit.
func (c clientCalls) WaitForTerminalExit(ctx context.Context, p acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return ask[acpsdk.WaitForTerminalExitResponse](ctx, c, acpsdk.ClientMethodTerminalWaitForExit, p)
}

// KillTerminal sends terminal/kill.
func (c clientCalls) KillTerminal(ctx context.Context, p acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return ask[acpsdk.KillTerminalResponse](ctx, c, acpsdk.ClientMethodTerminalKill, p)
}

// ReleaseTerminal sends terminal/release.
func (c clientCalls) ReleaseTerminal(ctx context.Context, p acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return ask[acpsdk.ReleaseTerminalResponse](ctx, c, acpsdk.ClientMethodTerminalRelease, p)
}
