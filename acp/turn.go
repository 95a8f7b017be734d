package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
	"go.opentelemetry.io/otel/attribute"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/plan"
	"github.com/acpgate/acpgate/internal/base/telemetry"
	"github.com/acpgate/acpgate/internal/inputs/secrets"
	"github.com/acpgate/acpgate/session"
)

// This file is session/prompt: one turn of a session (a slash command, a
// prompt command or the model) and its log (turnLog), which sends each
// event to the editor and records it.

// turns runs prompt turns: a slash command or a prompt command (handed to
// commands), else the model with the session's tools (the gateway's
// Runner), reporting every event as a session/update and recording the
// turn in the session log. Safe for concurrent use; one turn runs per
// session at a time (liveSession.running: turnSlot.take).
type turns struct {
	peer    *peer
	conf    *agentConfig
	runner  *gateway.Runner
	cmds    *commands
	logger  *slog.Logger
	secrets *secrets.Resolver // redacts what the turn sends and records; nil: none
}

// Record kinds in the session log.
const (
	recUpdate  = "update"  // a session/update to replay (acpsdk.SessionUpdate)
	recMessage = "message" // a model history message (gateway.Message)
	// recHistory and recCompaction are compaction.go's.
)

// Prompt answers session/prompt: slash commands run directly, anything
// else is a model turn. Runner events become session/updates as they
// happen; the turn is persisted as it goes.
func (a *Agent) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s, err := a.lookup(p.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	if err := a.checkAudio(ctx, s, p.Prompt); err != nil {
		return acpsdk.PromptResponse{}, err
	}
	// The turn's parent: the prompt's trace context, else session/new's.
	if ctx = telemetry.Extract(ctx, p.Meta); !telemetry.Has(ctx) {
		ctx = telemetry.ParentOf(s.ctx).Into(ctx)
	}
	ctx, span := a.opts.Telemetry.StartTurn(ctx, string(p.SessionId))
	span.SetContent(telemetry.KeyInputMessages, func() string { return promptText(p.Prompt) })
	queued := func(place int) { a.queuedNotice(s, place) }
	reason, err := s.turn(withSession(ctx, s), queued, func(ctx context.Context) acpsdk.StopReason {
		return stopReason(a.turns.run(ctx, s, p.Prompt, false))
	}, a.steeredTurn(s))
	span.Set(attribute.String("acpgate.stop_reason", string(reason)))
	span.End(ctx, err)
	return acpsdk.PromptResponse{StopReason: reason}, err
}

// checkAudio refuses (-32602, naming the block) a prompt with an audio
// block when the session's model takes no audio: the client was told so
// (promptCapabilities.audio).
func (a *Agent) checkAudio(ctx context.Context, s *liveSession, prompt []acpsdk.ContentBlock) error {
	for i, b := range prompt {
		if b.Audio == nil {
			continue
		}
		if m := a.conf.model(ctx, s); gateway.RefusesAudio(m) {
			return badParam(fmt.Sprintf("prompt[%d]", i), "an audio block, and the session's model takes no audio (model.audio; promptCapabilities.audio is false)").rpcError()
		}
	}
	return nil
}

// promptText is the text of a prompt, for telemetry that opted in to it.
func promptText(prompt []acpsdk.ContentBlock) string {
	var b strings.Builder
	for _, c := range prompt {
		if c.Text != nil {
			b.WriteString(c.Text.Text)
		}
	}
	return b.String()
}

// runEchoed is run for a prompt the client did not send as session/prompt
// (a steer that started a turn): the client is shown it too.
func (tu *turns) runEchoed(ctx context.Context, s turnSession, prompt []acpsdk.ContentBlock) gateway.StopReason {
	return tu.run(ctx, s, prompt, true)
}

// run runs one turn of s, the session's running turn, on prompt (shown to
// the client as the user's message when echo is set).
func (tu *turns) run(ctx context.Context, s turnSession, prompt []acpsdk.ContentBlock, echo bool) gateway.StopReason {
	t := tu.newTurnLog(s)
	input := fromACP(prompt)
	for _, b := range prompt {
		u := acpsdk.SessionUpdate{UserMessageChunk: &acpsdk.SessionUpdateUserMessageChunk{Content: b}}
		t.record(u)
		if echo {
			tu.peer.update(s, u)
		}
	}
	tu.setTitle(s, input)

	var stop gateway.StopReason
	if cmd, arg, ok := tu.cmds.slashCommand(input); ok {
		stop = tu.cmds.command(ctx, s.asCommands(), t, cmd, arg)
	} else if sc, ok := tu.cmds.skillCommand(ctx, s.asCommands(), input); ok {
		stop = tu.cmds.runSkill(ctx, s, t, sc)
	} else if pc, ok := tu.cmds.promptCommand(ctx, s.asCommands(), input); ok {
		stop = tu.cmds.runPrompt(ctx, s, t, pc)
	} else {
		// Servers still connecting get to join first, so the model sees
		// their tools (bounded by the session's startup budget).
		tu.peer.waitServers(ctx, s)
		stop = tu.hookedTurn(ctx, s, t, tu.resourceContext(ctx, s, input))
	}
	t.flush()
	// Every record is written already; it reaches the disk within the
	// store's sync delay (and before close or shutdown).
	s.syncSoon()
	return stop
}

// hookedTurn is modelTurn on a prompt of the user, through the session's
// hooks first (hooks.go): the project's trust decided, SessionStart
// (once), UserPromptSubmit, which may block the prompt (the user is told
// why; nothing reaches the model) or add context before it.
func (tu *turns) hookedTurn(ctx context.Context, s turnSession, t *turnLog, input []gateway.Content) gateway.StopReason {
	if hr := s.hooksRun(); hr != nil {
		hr.ensureTrust(ctx)
		hr.sessionStart(ctx)
		var blocked string
		if input, blocked = hr.promptCheck(ctx, input); blocked != "" {
			t.sink(gateway.Event{Kind: gateway.EventText, Text: "A UserPromptSubmit hook blocked this prompt: " + blocked})
			return gateway.StopEndTurn
		}
	}
	return tu.modelTurn(ctx, s, t, input, nil)
}

// modelTurn runs the model on input, the user's turn, after the
// session's history and then prior (messages that become part of the
// history with the turn: a prompt's earlier messages).
func (tu *turns) modelTurn(ctx context.Context, s turnSession, t *turnLog, input []gateway.Content, prior []gateway.Message) gateway.StopReason {
	run := gateway.RunOptions{Key: s.sessionID(), Input: input, ToolAccess: s.toolAccess(), Sink: t.sink, Model: tu.conf.model(ctx, s), System: tu.conf.turnSystem(ctx, s), Steering: &turnSteering{ctx: ctx, s: s, t: t}}
	s.prepareRun(tu.conf, &run, prior)
	res, err := tu.runner.Run(ctx, run)
	if err != nil {
		// A provider error: tell the user in the session, end the turn.
		t.sink(gateway.Event{Kind: gateway.EventText, Text: "\n\n" + err.Error()})
		tu.logger.Error("model turn failed", "session", s.sessionID(), "err", err)
	}
	stop := res.Stop
	t.addHistory(append(prior[:len(prior):len(prior)], res.Messages...), res.History)
	if err != nil && stop == "" {
		stop = gateway.StopEndTurn
	}
	return stop
}

// maxTitleRunes bounds a session's title, in characters ("…" not counted).
const maxTitleRunes = 80

// forkSuffix ends the title of a fork.
const forkSuffix = " (fork)"

// cutTitle returns title cut to at most n characters, with "…" after a
// cut.
func cutTitle(title string, n int) string {
	if r := []rune(title); len(r) > n {
		return string(r[:n]) + "…"
	}
	return title
}

// forkTitle is the title of a fork of a session titled title: the
// source's, without its own fork suffix (a fork of a fork is not "(fork)
// (fork)"), cut so that with the suffix it stays within maxTitleRunes.
func forkTitle(title string) string {
	if title == "" {
		return ""
	}
	base := strings.TrimSuffix(title, forkSuffix)
	return cutTitle(base, maxTitleRunes-len([]rune(forkSuffix))) + forkSuffix
}

// setTitle names a session after its first prompt and tells the client
// (session_info_update).
func (tu *turns) setTitle(s turnSession, input []gateway.Content) {
	if s.titled() {
		return
	}
	title := cutTitle(strings.Join(strings.Fields(gateway.PlainText(input)), " "), maxTitleRunes)
	if title == "" {
		return
	}
	if err := s.updateMeta(func(m *session.Meta) { m.Title = title }); err != nil {
		tu.logger.Warn("saving the session title", "session", s.sessionID(), "err", err)
	}
	tu.peer.update(s, acpsdk.SessionUpdate{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{Title: &title}})
}

// turnLog sends a turn's events to the client and records what a replay
// needs: message chunks merged, tool calls in their final state.
//
// The model's text and thoughts pass through a stream redactor, so a
// secret the model repeats is redacted even when it is split across
// chunks: what reaches the client and the session log is the redacted
// text. The stream is flushed when the kind of text changes, before a tool
// call starts and at the end of the turn.
type turnLog struct {
	tu     *turns
	s      turnSession
	text   strings.Builder // pending agent text not yet recorded (redacted)
	kind   gateway.EventKind
	stream *secrets.StreamRedactor // of the current kind; nil without secrets
	cards  progressCards           // throttles progress updates (progress.go)
	// compaction is the id of the compaction under way ("": none; see
	// compaction.go).
	compaction string
	// answers tracks which records hold each answer's words
	// (answer_log.go).
	answers answerChunks
}

// newTurnLog starts the log of one turn of s.
func (tu *turns) newTurnLog(s turnSession) *turnLog {
	t := &turnLog{tu: tu, s: s}
	if r := tu.secrets; r != nil && r.Redactor != nil {
		t.stream = r.Redactor.Stream()
	}
	return t
}

// usage sends a usage_update after a model response (see usageUpdate).
func (t *turnLog) usage(u gateway.Usage) {
	if up, ok := t.tu.usageUpdate(t.s, u); ok {
		t.tu.peer.update(t.s, acpsdk.SessionUpdate{UsageUpdate: &up})
	}
}

// sink is the Runner's event sink (never called concurrently). It does
// nothing slow: records are written to the session log (no fsync) and the
// log's sync is scheduled in the background (session.Session.SyncSoon).
func (t *turnLog) sink(e gateway.Event) {
	if e.Call != nil && e.Call.Name == plan.ToolName {
		t.planEvent(e) // plan.go
		return
	}
	switch e.Kind {
	case gateway.EventText, gateway.EventThinking:
		if t.kind != e.Kind {
			t.flush()
			t.kind = e.Kind
		}
		text := e.Text
		if t.stream != nil {
			text = t.stream.Write(text)
		}
		t.say(text)
	case gateway.EventUsage: // an answer is done
		t.flush()
		t.answers.answered()
		t.usage(e.Usage)
	case gateway.EventCompactionStarted:
		t.preCompact("auto", "")
		t.compactionStarted()
	case gateway.EventCompacted:
		t.compacted(e.Compaction)
	case gateway.EventCompactionFailed:
		t.compactionFailed(e.Err)
	case gateway.EventToolCallStarted:
		t.flush()
		t.tu.peer.send(t.s, named(acpsdk.SessionUpdate{ToolCall: toolCallStart(e.Call)}, e.Call))
	case gateway.EventToolCallRunning:
		t.tu.peer.send(t.s, named(acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.Call.ID), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress)), e.Call))
	case gateway.EventToolCallProgress:
		if len(e.Progress.Content) == 0 {
			t.progress(e)
			break
		}
		// What the call shows while it runs (its terminal).
		u := acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.Call.ID))
		u.ToolCallUpdate.Content = toolContent(e.Progress.Content)
		t.tu.peer.send(t.s, named(u, e.Call))
	case gateway.EventToolCallFinished:
		t.finished(e)
	}
}

// finished records a finished call and sends it to the client. A large
// result is never copied whole: its large texts are written in pieces
// (large_update.go), both to the session log and to the client.
func (t *turnLog) finished(e gateway.Event) {
	t.cards.finish(e.Call.ID)
	status := acpsdk.ToolCallStatusCompleted
	if e.Failed {
		status = acpsdk.ToolCallStatusFailed
	}
	// The session log gets a bounded copy, written before the client
	// sees the call end (so a crash loses no call the client saw
	// completed), and on disk within the store's sync delay.
	stored, cut := storedCopy(*e.Result, t.s.maxStoredResultBytes())
	sp := newSplicer()
	final := toolCallStart(e.Call)
	final.Status, final.Content, final.RawOutput = status, toolContent(sp.content(stored.Content)), rawOutput(stored, cut)
	final.Locations = locations(stored.Content)
	if data, err := sp.json(named(acpsdk.SessionUpdate{ToolCall: final}, e.Call)); err != nil {
		t.tu.logger.Error("saving to the session log", "session", t.s.sessionID(), "err", err)
	} else {
		t.persist(recUpdate, data)
	}
	t.s.syncSoon()
	// The client gets the whole result.
	sp = newSplicer()
	t.tu.peer.updateSpliced(t.s, named(acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.Call.ID), acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent(toolContent(sp.content(e.Result.Content))), acpsdk.WithUpdateRawOutput(rawOutput(*e.Result, nil))), e.Call), sp)
}

func chunk(kind gateway.EventKind, text string) acpsdk.SessionUpdate {
	if kind == gateway.EventThinking {
		return acpsdk.UpdateAgentThoughtText(text)
	}
	return acpsdk.UpdateAgentMessageText(text)
}

// toolCallStart is the tool_call update announcing a call, with what it
// will do (its preview) when the tool shows that.
func toolCallStart(c *gateway.CallInfo) *acpsdk.SessionUpdateToolCall {
	u := acpsdk.StartToolCall(acpsdk.ToolCallId(c.ID), c.Title,
		acpsdk.WithStartKind(acpsdk.ToolKind(c.Kind)),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending),
		acpsdk.WithStartRawInput(rawJSON(c.RawInput)),
		acpsdk.WithStartContent(toolContent(c.Content)))
	u.ToolCall.Locations = locations(c.Content)
	meta := map[string]any{"tool": c.Name}
	for k, v := range c.Meta {
		meta[k] = v
	}
	u.ToolCall.Meta = map[string]any{"acpgate": meta}
	return u.ToolCall
}

// say sends redacted text of the current kind, in updates of at most
// maxChunkFrame bytes, and keeps it for the record (recorded in chunks of
// at most maxChunkRecord bytes).
func (t *turnLog) say(text string) {
	if text == "" {
		return
	}
	t.text.WriteString(text)
	for rest := text; rest != ""; {
		n := chunkEnd(rest, maxChunkFrame)
		t.tu.peer.update(t.s, chunk(t.kind, rest[:n]))
		rest = rest[n:]
	}
	if t.text.Len() >= maxChunkRecord {
		t.recordText()
	}
}

// flush sends what the stream redactor holds back, then records the
// pending text as one chunk.
func (t *turnLog) flush() {
	if t.stream != nil {
		t.say(t.stream.Flush())
	}
	t.recordText()
}

// recordText records the pending text, in chunks of at most
// maxChunkRecord bytes.
func (t *turnLog) recordText() {
	text := t.text.String()
	t.text.Reset()
	for text != "" {
		n := chunkEnd(text, maxChunkRecord)
		if t.record(chunk(t.kind, text[:n])) {
			t.answers.chunk(chunkKind(t.kind), text[:n])
		}
		text = text[n:]
	}
}

// redact is what recording does to text: the secrets' redaction.
func (t *turnLog) redact(text string) string {
	if r := t.tu.secrets; r != nil && r.Redactor != nil {
		return r.Redactor.Redact(text)
	}
	return text
}

func (t *turnLog) record(u acpsdk.SessionUpdate) bool { return t.persist(recUpdate, u) }

// persist appends a record of kind to the session log; it reports
// whether it did.
func (t *turnLog) persist(kind string, v any) bool {
	v = encodable(v)
	if r := t.tu.secrets; r != nil && r.Redactor != nil {
		// Resolved secrets never reach the disk either.
		data, ok := v.(json.RawMessage)
		if !ok {
			var err error
			if data, err = json.Marshal(v); err != nil {
				data = nil
			}
		}
		if data != nil {
			v = json.RawMessage(r.Redactor.RedactJSON(data)) // strings only, as frames
		}
	}
	if err := t.s.appendRecord(kind, v); err != nil {
		t.tu.logger.Error("saving to the session log", "session", t.s.sessionID(), "err", err)
		return false
	}
	if kind == recUpdate {
		t.answers.update()
	}
	return true
}

// replay sends a stored session's updates to the client, each
// compaction in the shape the client advertised (showCompaction).
func (tu *turns) replay(s turnSession, records []session.Record) {
	for _, r := range records {
		switch r.Kind {
		case recUpdate:
			// Checked as the SDK decodes it, sent as stored: the members
			// its types lack (a tool call's name) are kept.
			var u acpsdk.SessionUpdate
			if err := json.Unmarshal(r.Data, &u); err != nil {
				tu.logger.Warn("skipping an unreadable stored update", "session", s.sessionID(), "err", err)
				continue
			}
			tu.peer.send(s, r.Data)
		case recCompaction:
			var c compactionRecord
			if err := json.Unmarshal(r.Data, &c); err != nil {
				tu.logger.Warn("skipping an unreadable stored compaction", "session", s.sessionID(), "err", err)
				continue
			}
			tu.peer.showCompaction(s, c)
		}
	}
}

// history rebuilds the model history from stored records (a compacted
// history replaces the messages before it).
func history(records []session.Record) gateway.History {
	var h gateway.History
	var chunks storedChunks
	blobs := blobIndex{}
	for _, r := range records {
		switch r.Kind {
		case recUpdate:
			chunks.add(r)
		case recBlob:
			blobs.add(r.Data)
		case recHistory:
			h = replaceHistory(h, r.Data)
			blobs.resolve(h)
		case recMessage:
			if m, ok := chunks.message(r.Data); ok {
				blobs.resolve([]gateway.Message{m})
				h = append(h, m)
			}
		}
	}
	return h
}
