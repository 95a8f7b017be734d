package acp

import (
	acpsdk "github.com/coder/acp-go-sdk"
)

// This file is the session/update variants of the schema that acp-go-sdk
// v0.13.0 lacks, as types of acpgate's own named as the schema names them
// (Notice, CompactionUpdate, CompactionSummaryChunk), and how they are
// sent (peer.updateOwn). Each may be sent only to a client that
// advertised it in initialize (clientCapabilities.session).

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

// CompactionStatus is the schema's CompactionStatus: where a compaction
// is in its life.
type CompactionStatus string

// The statuses of a compaction.
const (
	CompactionInProgress CompactionStatus = "in_progress"
	CompactionCompleted  CompactionStatus = "completed"
	CompactionFailed     CompactionStatus = "failed"
	CompactionCancelled  CompactionStatus = "cancelled"
)

// CompactionUpdate is the schema's CompactionUpdate, the
// "compaction_update" session update: a compaction created (the first
// update with its id) or patched (later ones). Sent only to clients that
// advertised session.compaction.
type CompactionUpdate struct {
	// CompactionID names the compaction, unique within the session.
	CompactionID string `json:"compactionId"`
	// Status is where the compaction is now.
	Status CompactionStatus `json:"status"`
	// Error says why a compaction failed ("": left as it was).
	Error string `json:"error,omitempty"`
	// Meta patches the compaction's _meta (nil: left as it was).
	Meta map[string]any `json:"_meta,omitempty"`
}

// CompactionSummaryChunk is the schema's CompactionSummaryChunk, the
// "compaction_summary_chunk" session update: a content block appended to
// a compaction's summary. Sent only to clients that advertised
// session.compaction.
type CompactionSummaryChunk struct {
	// CompactionID names the compaction whose summary it extends.
	CompactionID string `json:"compactionId"`
	// Content is the block appended (acpgate's: one text block).
	Content acpsdk.ContentBlock `json:"content"`
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

func (u CompactionUpdate) variant() any {
	return struct {
		SessionUpdate string `json:"sessionUpdate"`
		CompactionUpdate
	}{"compaction_update", u}
}

func (c CompactionSummaryChunk) variant() any {
	return struct {
		SessionUpdate string `json:"sessionUpdate"`
		CompactionSummaryChunk
	}{"compaction_summary_chunk", c}
}

// updateOwn sends one session/update whose update is u, as update does
// with acp-go-sdk's: failures are logged (the client is gone), resolved
// secrets are redacted.
func (pe *peer) updateOwn(s peerSession, u ownUpdate) { pe.send(s, u.variant()) }
