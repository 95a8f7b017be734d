package acp

import (
	"context"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
)

// This file is tool-call permission: the editor is asked to approve a call
// (session/request_permission) unless the session's mode, its remembered
// decisions or the configuration's policy answer first.

// permissions asks the editor to approve tool calls. It sees a session
// only through permissionSession. Safe for concurrent use.
type permissions struct {
	peer *peer
}

// permissionSession is what approving a call needs of a session: its id,
// its permission mode, a remembered decision about a tool, whether the
// configuration auto-approves it, and remembering a new decision.
type permissionSession interface {
	sessionID() string
	// decision returns the session's mode and its remembered decision
	// ("allow", "reject" or "") about key.
	decision(key string) (mode, always string)
	// autoApproved reports whether the configuration approves tool.
	autoApproved(tool string) bool
	// remember keeps an "always" decision about key and saves it.
	remember(key, decision string)
	// hooksRun is the session's hooks (nil: none): PermissionRequest.
	hooksRun() *hookRun
}

// approve is session s's Approver: "always" decisions and auto mode
// answer at once (except for tools that ask even in auto mode, such as
// run_command); tools that need no approval run; anything else asks the
// user, showing what the call will do (its preview).
func (pm *permissions) approve(ctx context.Context, s permissionSession, call gateway.CallInfo, tool gateway.Tool) (gateway.Decision, error) {
	// A PreToolUse hook that answered "ask" (gateway.MustAsk) asks the
	// user whatever the mode and the remembered decisions say.
	if !gateway.MustAsk(ctx) {
		mode, always := s.decision(tool.Name)
		switch {
		case always == "allow":
			return gateway.Allow, nil
		case always == "reject":
			return gateway.Reject, nil
		case !tool.AskApproval && !tool.AskInAuto, mode == modeAuto && !tool.AskInAuto:
			return gateway.Allow, nil
		}
		if s.autoApproved(tool.Name) {
			return gateway.Allow, nil
		}
	}
	if hr := s.hooksRun(); hr != nil {
		if d, ok := hr.permissionCheck(ctx, call); ok {
			return d, nil
		}
	}
	kind := acpsdk.ToolKind(call.Kind)
	// "Always" holds for the tool, whatever the call's arguments: name
	// the tool, not the call.
	toolTitle := tool.Title
	if toolTitle == "" {
		toolTitle = tool.Name
	}
	resp, err := pm.peer.conn.RequestPermission(ctx, permissionRequest{
		SessionID: s.sessionID(),
		ToolCall: named(acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(call.ID), Title: acpsdk.Ptr(call.Title), Kind: &kind,
			Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending), RawInput: rawJSON(call.RawInput),
			Content: toolContent(call.Content), Locations: locations(call.Content),
		}, &call),
		Options: []acpsdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow once", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow " + toolTitle, Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: optRejectOnce, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
			{OptionId: optRejectAlways, Name: "Always reject " + toolTitle, Kind: acpsdk.PermissionOptionKindRejectAlways},
		},
	})
	if err != nil {
		return gateway.Reject, fmt.Errorf("asking the client for permission: %w", err)
	}
	if resp.Outcome.Selected == nil {
		return gateway.Reject, nil // cancelled
	}
	var decision gateway.Decision
	var remember string
	switch string(resp.Outcome.Selected.OptionId) {
	case optAllowOnce:
		decision = gateway.Allow
	case optAllowAlways:
		decision, remember = gateway.Allow, "allow"
	case optRejectAlways:
		decision, remember = gateway.Reject, "reject"
	default:
		decision = gateway.Reject
	}
	if remember != "" {
		s.remember(tool.Name, remember)
	}
	return decision, nil
}

// Permission option ids.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)
