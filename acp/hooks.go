package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/hooks"
	"github.com/acpgate/acpgate/internal/base/safefile"
	"github.com/acpgate/acpgate/internal/inputs/config"
)

// This file is a session's hooks in Claude Code's format
// (gateway/hooks): the configuration's (user and profile) and the
// project's (.acpgate/hooks.json, .claude/settings.json), the project's
// run only once the user trusts them; each event's hooks run, are shown
// to the client as a card and logged, and their verdict applied.
// docs/hooks.md is the user's page of it.

// projectHookFiles are the files of a project that may hold hooks,
// relative to its directory.
var projectHookFiles = []string{filepath.Join(".acpgate", "hooks.json"), filepath.Join(".claude", "settings.json")}

// maxStopContinues bounds how often Stop hooks may make one turn go on.
const maxStopContinues = 8

// sessionEndBound bounds the SessionEnd hooks of a closing session.
const sessionEndBound = 10 * time.Second

// The states of a project's trust in a session.
const (
	trustUnknown = iota
	trustYes
	trustNo
)

// sessionHooks is one session's hooks and the project's trust. Safe for
// concurrent use (its own lock, never held while a hook runs or the
// client is asked).
type sessionHooks struct {
	set     hooks.Set
	runner  *hooks.Runner
	store   *hooks.TrustStore // nil: answers are not remembered
	dir     string
	source  string // SessionStart's source: startup or resume
	digest  string // of the project's hook files ("": none)
	files   []string
	invalid []string // the project's files that could not be read, and why

	mu      sync.Mutex
	trust   int
	started bool // SessionStart ran
	context []string
}

// loadHooks returns the hooks of a session in dir with the
// configuration's set cfg: the project's files are read (regular files
// inside dir, bounded) and parsed; source is SessionStart's.
func loadHooks(cfg hooks.Set, dir, source string, runner *hooks.Runner, store *hooks.TrustStore) *sessionHooks {
	h := &sessionHooks{runner: runner, store: store, dir: dir, source: source}
	sets := []hooks.Set{cfg}
	contents := map[string][]byte{}
	for _, name := range projectHookFiles {
		data, err := safefile.ReadWithin(filepath.Join(dir, name), []string{dir}, hooks.MaxFileBytes, true)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			h.invalid = append(h.invalid, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		set, _, err := hooks.Parse(data, filepath.ToSlash(name), true)
		if err != nil {
			h.invalid = append(h.invalid, err.Error())
			continue
		}
		if set.Len() > 0 {
			sets = append(sets, set)
			contents[filepath.ToSlash(name)] = data
			h.files = append(h.files, filepath.ToSlash(name))
		}
	}
	h.set = hooks.Join(sets...)
	if len(contents) > 0 {
		h.digest = hooks.Digest(contents)
	}
	return h
}

// sessionHooks returns the hooks of a session with configuration sc in
// dir (additional directories dirs; source: SessionStart's), run as the
// agent's local commands are: with their environment and under the
// profile's commandSandbox; nil when it has none.
func (cf *agentConfig) sessionHooks(sc sessionConfig, dir string, dirs []string, source string) *sessionHooks {
	run := &hooks.Runner{Env: cf.opts.WorkspaceEnv,
		Sandbox: cf.opts.MCP.Sandbox, Policy: policyOf(sc.sandboxes.CommandSandbox), Workspace: append([]string{dir}, dirs...)}
	h := loadHooks(sc.hooks, dir, source, run, cf.opts.HookTrust)
	if h.set.Len() == 0 && len(h.invalid) == 0 {
		return nil
	}
	return h
}

// hooksRun is the session's hook runner (nil: the session has no hooks).
func (s *liveSession) hooksRun() *hookRun { return s.hooked }

// trusted reports whether the project's hooks may run (as decided so
// far in the session).
func (h *sessionHooks) trusted() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.trust == trustYes
}

// hookRun runs session s's hooks, each shown to the client (pe) and
// logged (log).
type hookRun struct {
	pe  *peer
	log *slog.Logger
	s   *liveSession
}

// run runs the hooks of ev for target with in (its common members filled
// in here), shows each run as a card and logs it, and returns the verdict.
func (hr hookRun) run(ctx context.Context, ev hooks.Event, target string, in hooks.Input) hooks.Verdict {
	h := hr.s.hooks
	if h == nil {
		return hooks.Verdict{}
	}
	matched := h.set.Matching(ev, target, h.trusted())
	if len(matched) == 0 {
		return hooks.Verdict{}
	}
	in.SessionID, in.Cwd, in.HookEventName = hr.s.id, h.dir, ev
	in.PermissionMode = claudeMode(hr.s.snapshot().mode)
	runs := make([]hooks.Outcome, 0, len(matched))
	for _, hk := range matched {
		o := h.runner.Run(ctx, hk, h.dir, in)
		runs = append(runs, o)
		hr.report(ev, o)
	}
	v := hooks.Decide(ev, runs)
	for _, m := range v.Messages {
		hr.log.Info("hook message", "session", hr.s.id, "event", ev, "message", m)
	}
	return v
}

// report shows one run to the client (a card) and logs it.
func (hr hookRun) report(ev hooks.Event, o hooks.Outcome) {
	cmd := o.Hook.Command.String()
	status := acpsdk.ToolCallStatusCompleted
	var what string
	switch {
	case o.Err != nil:
		status, what = acpsdk.ToolCallStatusFailed, o.Err.Error()
	case o.Blocked():
		what = "exit status 2 (blocks)"
	default:
		what = fmt.Sprintf("exit status %d", o.Status)
	}
	text := fmt.Sprintf("%s hook from %s: %s, in %v; sandbox: %s.", ev, o.Hook.Source, what, o.Duration.Round(time.Millisecond), o.Sandbox)
	if s := strings.TrimSpace(o.Stderr); s != "" {
		text += "\n\nstderr:\n" + cutText(s, 2000)
	}
	if s := strings.TrimSpace(o.Stdout); s != "" {
		text += "\n\nstdout:\n" + cutText(s, 2000)
	}
	hr.pe.card(hr.s, hr.pe.nextCard("hook"), "Hook "+string(ev)+": "+cutText(cmd, 80), status, text)
	level := hr.log.Info
	if o.Err != nil {
		level = hr.log.Warn
	}
	level("hook ran", "session", hr.s.id, "event", ev, "source", o.Hook.Source, "command", cmd, "status", o.Status, "duration", o.Duration, "sandbox", o.Sandbox.String(), "err", o.Err)
}

// cutText is s cut to n bytes (on a rune boundary), with "…" after a cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:chunkEnd(s, n)] + "…"
}

// claudeMode is acpgate's permission mode as Claude Code names its
// modes: ask is "default", auto "bypassPermissions".
func claudeMode(mode string) string {
	if mode == modeAuto {
		return "bypassPermissions"
	}
	return "default"
}

// ensureTrust decides, before a turn uses them, whether the project's
// hooks may run: the remembered answer for the project and its hook
// files' digest, else the user's, asked through the client once
// (session/request_permission). Once trusted, the session's SessionStart
// hooks that waited run.
func (hr hookRun) ensureTrust(ctx context.Context) {
	s := hr.s
	h := s.hooks
	if h == nil {
		return
	}
	h.mu.Lock()
	undecided := h.trust == trustUnknown && h.digest != ""
	h.mu.Unlock()
	h.mu.Lock()
	invalid := h.invalid
	h.invalid = nil
	h.mu.Unlock()
	for _, bad := range invalid {
		hr.pe.card(s, hr.pe.nextCard("hook"), "Project hooks not loaded", acpsdk.ToolCallStatusFailed, bad)
	}
	if undecided {
		trust := hr.askTrust(ctx, h)
		h.mu.Lock()
		h.trust = trust
		h.mu.Unlock()
	}
}

// askTrust is the answer about h's project hooks: remembered, or asked.
func (hr hookRun) askTrust(ctx context.Context, h *sessionHooks) int {
	s := hr.s
	if h.store != nil {
		if t, ok, err := h.store.Lookup(h.dir, h.digest); err != nil {
			hr.log.Warn("reading the hooks trust store", "err", err)
		} else if ok {
			if t == hooks.Trusted {
				return trustYes
			}
			return trustNo
		}
	}
	var list strings.Builder
	for _, hk := range h.set.All() {
		if hk.Project {
			fmt.Fprintf(&list, "\n- %s (%s): %s", hk.Event, hk.Source, cutText(hk.Command.String(), 200))
		}
	}
	id := hr.pe.nextCard("hooks-trust")
	title := "Run this project's hooks?"
	text := fmt.Sprintf("%s defines hooks, commands acpgate would run on this machine during the session:%s", strings.Join(h.files, " and "), list.String())
	kind := acpsdk.ToolKindExecute
	resp, err := hr.pe.conn.RequestPermission(ctx, permissionRequest{
		SessionID: s.id,
		ToolCall: toolUpdate{update: acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(id), Title: acpsdk.Ptr(title), Kind: &kind,
			Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending), Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}}},
		Options: []acpsdk.PermissionOption{
			{OptionId: optAllowAlways, Name: "Trust and run them (remembered)", Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: optAllowOnce, Name: "Run them in this session", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optRejectOnce, Name: "Not in this session", Kind: acpsdk.PermissionOptionKindRejectOnce},
			{OptionId: optRejectAlways, Name: "Never run these hooks (remembered)", Kind: acpsdk.PermissionOptionKindRejectAlways},
		},
	})
	answer := trustNo
	var remember hooks.Trust
	if err != nil {
		hr.log.Warn("asking whether to trust the project's hooks", "session", s.id, "err", err)
	} else if sel := resp.Outcome.Selected; sel != nil {
		switch sel.OptionId {
		case optAllowAlways:
			answer, remember = trustYes, hooks.Trusted
		case optAllowOnce:
			answer = trustYes
		case optRejectAlways:
			remember = hooks.Untrusted
		}
	}
	status := acpsdk.ToolCallStatusFailed
	if answer == trustYes {
		status = acpsdk.ToolCallStatusCompleted
	}
	hr.pe.cardStatus(s, id, status, text)
	if remember != "" && h.store != nil {
		if err := h.store.Remember(h.dir, h.digest, remember); err != nil {
			hr.log.Warn("remembering the answer about the project's hooks", "err", err)
		}
	}
	hr.log.Info("project hooks", "session", s.id, "dir", h.dir, "digest", h.digest, "trusted", answer == trustYes, "remembered", remember)
	return answer
}

// sessionStart runs the SessionStart hooks once, at the session's first
// turn: what they add is kept for the model (takeContext).
func (hr hookRun) sessionStart(ctx context.Context) {
	h := hr.s.hooks
	if h == nil {
		return
	}
	h.mu.Lock()
	done := h.started
	h.started = true
	h.mu.Unlock()
	if done {
		return
	}
	v := hr.run(ctx, hooks.SessionStart, h.source, hooks.Input{Source: h.source})
	h.mu.Lock()
	h.context = append(h.context, v.Context...)
	h.mu.Unlock()
}

// takeContext returns what hooks added for the model's next turn.
func (h *sessionHooks) takeContext() []string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.context
	h.context = nil
	return out
}

// promptCheck runs the UserPromptSubmit hooks on a model turn's input:
// blocked says the prompt does not reach the model (why, for the user);
// else input comes back with what the hooks added before it.
func (hr hookRun) promptCheck(ctx context.Context, input []gateway.Content) (out []gateway.Content, blocked string) {
	v := hr.run(ctx, hooks.UserPromptSubmit, "", hooks.Input{Prompt: gateway.PlainText(input)})
	if v.Block || v.StopTurn {
		return nil, strings.TrimSpace(v.Reason + "\n" + v.StopReason)
	}
	texts := append(hr.s.hooks.takeContext(), v.Context...)
	if len(texts) == 0 {
		return input, ""
	}
	out = make([]gateway.Content, 0, len(texts)+len(input))
	for _, t := range texts {
		out = append(out, gateway.Content{Type: gateway.ContentText, Text: t})
	}
	return append(out, input...), ""
}

// framedReason is a verdict's reason framed for the model.
func framedReason(ev hooks.Event, reason string) string {
	return hooks.Frame(ev, hooks.Hook{Source: "hooks"}, reason)
}

// callHooks are session s's gateway.CallHooks: PreToolUse and
// PostToolUse.
type callHooks struct{ hr hookRun }

// BeforeCall implements gateway.CallHooks: PreToolUse.
func (c callHooks) BeforeCall(ctx context.Context, call gateway.CallInfo) gateway.CallCheck {
	v := c.hr.run(ctx, hooks.PreToolUse, call.Name, hooks.Input{ToolName: call.Name, ToolInput: orEmptyObject(call.RawInput), ToolUseID: call.ID})
	check := gateway.CallCheck{Input: v.UpdatedInput, Context: v.Context}
	switch v.Decision {
	case hooks.Allow:
		check.Decision = gateway.HookAllow
	case hooks.Ask:
		check.Decision = gateway.HookAsk
	case hooks.Deny:
		check.Decision = gateway.HookDeny
		check.Reason = "A PreToolUse hook blocked this call; do not retry it as it is:\n" + framedReason(hooks.PreToolUse, v.Reason)
	}
	return check
}

// AfterCall implements gateway.CallHooks: PostToolUse, whose context (and
// reason, when a hook blocks) is added to the result the model gets.
func (c callHooks) AfterCall(ctx context.Context, call gateway.CallInfo, res gateway.Result) gateway.Result {
	v := c.hr.run(ctx, hooks.PostToolUse, call.Name, hooks.Input{ToolName: call.Name, ToolInput: orEmptyObject(call.RawInput), ToolUseID: call.ID, ToolResponse: toolResponse(res)})
	add := v.Context
	if v.Block {
		add = append(add, framedReason(hooks.PostToolUse, v.Reason))
	}
	return res.WithModelText(add...)
}

// orEmptyObject is raw, or {} when it is empty.
func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// toolResponse is a result as PostToolUse hooks get it: its text
// contents and whether it is an error.
func toolResponse(res gateway.Result) json.RawMessage {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
	}
	out := struct {
		Content []block `json:"content"`
		IsError bool    `json:"isError"`
	}{Content: []block{}, IsError: res.IsError}
	for _, c := range res.Content {
		out.Content = append(out.Content, block{Type: string(c.Type), Text: c.Text})
	}
	data, _ := json.Marshal(out)
	return data
}

// stopCheck runs the Stop hooks when the model would end its turn: a
// hook that blocks makes the turn go on with its reason (framed) as the
// next user message, at most maxStopContinues times a turn.
func (hr hookRun) stopCheck(ctx context.Context, continued int) (reason string, goOn bool) {
	if continued >= maxStopContinues {
		return "", false
	}
	active := continued > 0
	v := hr.run(ctx, hooks.Stop, "", hooks.Input{StopHookActive: &active})
	if !v.Block || v.StopTurn {
		return "", false
	}
	return "A Stop hook asks you to go on before ending your turn:\n" + framedReason(hooks.Stop, v.Reason), true
}

// permissionCheck runs the PermissionRequest hooks before the user is
// asked: decided says the hooks answered (allow or deny). An allow with
// updatedInput makes the call run with that input (gateway.RewriteInput).
func (hr hookRun) permissionCheck(ctx context.Context, call gateway.CallInfo) (d gateway.Decision, decided bool) {
	v := hr.run(ctx, hooks.PermissionRequest, call.Name, hooks.Input{ToolName: call.Name, ToolInput: orEmptyObject(call.RawInput), ToolUseID: call.ID})
	switch v.Decision {
	case hooks.Allow:
		if len(v.UpdatedInput) > 0 && !gateway.RewriteInput(ctx, v.UpdatedInput) {
			hr.log.Warn("a PermissionRequest hook's updatedInput is ignored: this approval cannot change the call", "session", hr.s.id, "tool", call.Name)
		}
		return gateway.Allow, true
	case hooks.Deny:
		return gateway.Reject, true
	}
	return 0, false
}

// sessionEnd runs the SessionEnd hooks of a closing session (bounded;
// logged, not shown: the client may be gone).
func (hr hookRun) sessionEnd() {
	h := hr.s.hooks
	if h == nil {
		return
	}
	matched := h.set.Matching(hooks.SessionEnd, "", h.trusted())
	ctx, cancel := context.WithTimeout(context.Background(), sessionEndBound)
	defer cancel()
	for _, hk := range matched {
		o := h.runner.Run(ctx, hk, h.dir, hooks.Input{SessionID: hr.s.id, Cwd: h.dir, HookEventName: hooks.SessionEnd, Reason: "other"})
		hr.log.Info("hook ran", "session", hr.s.id, "event", hooks.SessionEnd, "source", hk.Source, "command", hk.Command.String(), "status", o.Status, "duration", o.Duration, "sandbox", o.Sandbox.String(), "err", o.Err)
	}
}

// configHooks are the configuration's hooks of eff: the top-level ones,
// then the profile's.
func configHooks(eff config.Effective) (hooks.Set, error) {
	top, _, err := config.ParseHooks(eff.Hooks, "configuration")
	if err != nil {
		return hooks.Set{}, err
	}
	prof, _, err := config.ParseHooks(eff.ProfileHooks, "configuration (profile "+eff.Profile+")")
	if err != nil {
		return hooks.Set{}, err
	}
	return hooks.Join(top, prof), nil
}
