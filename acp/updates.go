package acp

import (
	acpsdk "github.com/coder/acp-go-sdk"
)

// This file is the session/update variants of the schema that acp-go-sdk
// v0.13.0 lacks, as types of acpgate's own named as the schema names them
// (Notice), and how they are sent (peer.updateOwn). Each may be sent only
// to a client that advertised it in initialize
// (clientCapabilities.session).

// NoticeSeverity is the schema's NoticeSeverity: how a notice is
// presented.
type NoticeSeverity string

// The severities of a notice.
const (
	NoticeInfo    NoticeSeverity = "info"
	NoticeWarning NoticeSeverity = "warning"
	NoticeError   NoticeSeverity = "error"
)

// Notice is the schema's Notice, the "notice" session update:
// information for the user that is not part of the session's history.
// It is sent only to clients that advertised session.notices, and never
// recorded in the session log (session/load does not replay it).
type Notice struct {
	// Severity is how the client may present it.
	Severity NoticeSeverity `json:"severity"`
	// Title is plain text that stands alone; it must not be empty.
	Title string `json:"title"`
	// Description is plain-text detail ("": none).
	Description string `json:"description,omitempty"`
	// Meta is the notice's _meta (nil: none).
	Meta map[string]any `json:"_meta,omitempty"`
}

// ownUpdate is a session/update variant of acpgate's own types: variant
// returns it as the update's JSON value, with its sessionUpdate.
type ownUpdate interface {
	variant() any
}

func (n Notice) variant() any {
	return struct {
		SessionUpdate string `json:"sessionUpdate"`
		Notice
	}{"notice", n}
}

// updateOwn sends one session/update whose update is u, as update does
// with acp-go-sdk's: failures are logged (the client is gone), resolved
// secrets are redacted.
func (pe *peer) updateOwn(s *liveSession, u ownUpdate) {
	if err := pe.conn.OwnSessionUpdate(s.ctx, acpsdk.SessionId(s.id), u); err != nil {
		pe.logger.Debug("session/update not sent", "session", s.id, "err", err)
	}
}
