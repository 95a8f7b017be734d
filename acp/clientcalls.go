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

// ownNotification is session/update's params (the schema's
// SessionNotification) whose update is a variant of acpgate's own types.
type ownNotification struct {
	SessionID acpsdk.SessionId `json:"sessionId"`
	Update    any              `json:"update"`
}

// OwnSessionUpdate sends session/update with u, a variant acp-go-sdk
// v0.13.0 lacks (updates.go), as session sid's update.
func (c clientCalls) OwnSessionUpdate(ctx context.Context, sid acpsdk.SessionId, u ownUpdate) error {
	return c.notify(ctx, acpsdk.ClientMethodSessionUpdate, ownNotification{SessionID: sid, Update: u.variant()})
}

// RequestPermission sends session/request_permission.
func (c clientCalls) RequestPermission(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	var r acpsdk.RequestPermissionResponse
	return r, c.call(ctx, acpsdk.ClientMethodSessionRequestPermission, p, &r)
}

// permissionRequest is session/request_permission's params with the tool
// call's name (ToolCallUpdate.name), which acp-go-sdk v0.13.0's type
// lacks.
type permissionRequest struct {
	SessionID string                    `json:"sessionId"`
	ToolCall  toolUpdate                `json:"toolCall"`
	Options   []acpsdk.PermissionOption `json:"options"`
}

// RequestToolPermission sends session/request_permission for a tool call.
func (c clientCalls) RequestToolPermission(ctx context.Context, p permissionRequest) (acpsdk.RequestPermissionResponse, error) {
	var r acpsdk.RequestPermissionResponse
	return r, c.call(ctx, acpsdk.ClientMethodSessionRequestPermission, p, &r)
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
	var r acpsdk.UnstableCreateElicitationResponse
	return r, c.call(ctx, acpsdk.ClientMethodElicitationCreate, p, &r)
}

// CompleteElicitation sends elicitation/complete.
func (c clientCalls) CompleteElicitation(ctx context.Context, n acpsdk.UnstableCompleteElicitationNotification) error {
	return c.notify(ctx, acpsdk.ClientMethodElicitationComplete, n)
}

// ReadTextFile sends fs/read_text_file.
func (c clientCalls) ReadTextFile(ctx context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	var r acpsdk.ReadTextFileResponse
	return r, c.call(ctx, acpsdk.ClientMethodFsReadTextFile, p, &r)
}

// WriteTextFile sends fs/write_text_file.
func (c clientCalls) WriteTextFile(ctx context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	var r acpsdk.WriteTextFileResponse
	return r, c.call(ctx, acpsdk.ClientMethodFsWriteTextFile, p, &r)
}

// CreateTerminal sends terminal/create.
func (c clientCalls) CreateTerminal(ctx context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	var r acpsdk.CreateTerminalResponse
	return r, c.call(ctx, acpsdk.ClientMethodTerminalCreate, p, &r)
}

// TerminalOutput sends terminal/output.
func (c clientCalls) TerminalOutput(ctx context.Context, p acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	var r acpsdk.TerminalOutputResponse
	return r, c.call(ctx, acpsdk.ClientMethodTerminalOutput, p, &r)
}

// WaitForTerminalExit sends terminal/wait_for_exit.
func (c clientCalls) WaitForTerminalExit(ctx context.Context, p acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	var r acpsdk.WaitForTerminalExitResponse
	return r, c.call(ctx, acpsdk.ClientMethodTerminalWaitForExit, p, &r)
}

// KillTerminal sends terminal/kill.
func (c clientCalls) KillTerminal(ctx context.Context, p acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	var r acpsdk.KillTerminalResponse
	return r, c.call(ctx, acpsdk.ClientMethodTerminalKill, p, &r)
}

// ReleaseTerminal sends terminal/release.
func (c clientCalls) ReleaseTerminal(ctx context.Context, p acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	var r acpsdk.ReleaseTerminalResponse
	return r, c.call(ctx, acpsdk.ClientMethodTerminalRelease, p, &r)
}
