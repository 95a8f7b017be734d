package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Decision is what the hooks of a tool event decided of the call.
type Decision int

// The decisions, weakest first: when hooks disagree the strongest wins
// (deny over ask over allow), as in Claude Code.
const (
	NoDecision Decision = iota
	Allow
	Ask
	Deny
)

// Verdict is the runs of one event's hooks read together.
type Verdict struct {
	// Runs are the outcomes, in the order the hooks ran.
	Runs []Outcome
	// Decision is the tool events' (PreToolUse, PermissionRequest).
	Decision Decision
	// Block: a hook blocked (exit 2, or "decision": "block"); for the
	// tool events Decision is Deny.
	Block bool
	// Reason is why the call was denied, the prompt or the stop blocked
	// (the hooks' words, one per line).
	Reason string
	// UpdatedInput, when set, is the tool input the call runs with
	// instead (the last hook's that gave one).
	UpdatedInput json.RawMessage
	// Context is what hooks added for the model (additionalContext, and
	// the plain stdout of UserPromptSubmit and SessionStart hooks), one
	// entry per hook, already framed (Frame).
	Context []string
	// StopTurn: a hook said "continue": false; StopReason is its
	// stopReason, for the user.
	StopTurn   bool
	StopReason string
	// Messages are for the user (systemMessage, a failed hook's report).
	Messages []string
}

// Decide reads the runs of ev's hooks into a verdict. A hook that failed
// (Outcome.Err) is reported in Messages and otherwise ignored (the event
// goes on) unless it is a PreToolUse hook with FailClosed: then the call
// is denied.
func Decide(ev Event, runs []Outcome) Verdict {
	v := Verdict{Runs: runs}
	var reasons []string
	for _, o := range runs {
		name := o.Hook.Command.String()
		switch {
		case o.Err != nil:
			v.Messages = append(v.Messages, fmt.Sprintf("Hook %s (%s) failed: %v", ev, name, o.Err))
			if ev == PreToolUse && o.Hook.Command.FailClosed {
				v.decide(Deny)
				reasons = append(reasons, fmt.Sprintf("the hook %q failed (%v) and is set to block the call when it fails", name, o.Err))
			}
		case o.Blocked():
			v.Block = true
			if ev == PreToolUse || ev == PermissionRequest {
				v.decide(Deny)
			}
			reasons = append(reasons, orDefault(strings.TrimSpace(o.Stderr), fmt.Sprintf("blocked by the hook %q", name)))
		case o.Answer != nil:
			reasons = v.answer(ev, o, reasons)
		case ev == UserPromptSubmit || ev == SessionStart:
			if text := strings.TrimSpace(o.Stdout); text != "" {
				v.Context = append(v.Context, Frame(ev, o.Hook, text))
			}
		}
	}
	v.Reason = strings.Join(reasons, "\n")
	return v
}

// answer reads one hook's JSON answer into v; it returns reasons with the
// answer's added.
func (v *Verdict) answer(ev Event, o Outcome, reasons []string) []string {
	a := o.Answer
	if a.Continue != nil && !*a.Continue {
		v.StopTurn = true
		v.StopReason = orDefault(v.StopReason, a.StopReason)
	}
	if a.SystemMessage != "" {
		v.Messages = append(v.Messages, a.SystemMessage)
	}
	switch strings.ToLower(a.Decision) {
	case "block":
		v.Block = true
		if ev == PreToolUse {
			v.decide(Deny)
		}
		reasons = append(reasons, orDefault(a.Reason, fmt.Sprintf("blocked by the hook %q", o.Hook.Command.String())))
	case "approve":
		if ev == PreToolUse {
			v.decide(Allow)
		}
	}
	s := a.Specific
	if s == nil {
		return reasons
	}
	switch ev {
	case PreToolUse:
		switch s.PermissionDecision {
		case "allow":
			v.decide(Allow)
		case "ask":
			v.decide(Ask)
		case "deny":
			v.decide(Deny)
			v.Block = true
			reasons = append(reasons, orDefault(s.PermissionDecisionReason, fmt.Sprintf("denied by the hook %q", o.Hook.Command.String())))
		}
		if len(s.UpdatedInput) > 0 && string(s.UpdatedInput) != "null" {
			v.UpdatedInput = s.UpdatedInput
		}
	case PermissionRequest:
		if d := s.Decision; d != nil {
			switch d.Behavior {
			case "allow":
				v.decide(Allow)
				if len(d.UpdatedInput) > 0 && string(d.UpdatedInput) != "null" {
					v.UpdatedInput = d.UpdatedInput
				}
			case "deny":
				v.decide(Deny)
				v.Block = true
				reasons = append(reasons, orDefault(d.Message, fmt.Sprintf("denied by the hook %q", o.Hook.Command.String())))
			}
		}
	}
	if s.AdditionalContext != "" {
		v.Context = append(v.Context, Frame(ev, o.Hook, s.AdditionalContext))
	}
	return reasons
}

// decide makes d the verdict's decision if it is stronger.
func (v *Verdict) decide(d Decision) {
	if d > v.Decision {
		v.Decision = d
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// The frame of what a hook printed, in the model's text.
const (
	frameOpen  = "<hook_output"
	frameClose = "</hook_output>"
)

// Frame is text a hook printed, framed for the model: it says which
// event's hook, from where, printed it, and a look-alike of the frame's
// end inside text is defused, so text cannot pass for acpgate's words.
func Frame(ev Event, h Hook, text string) string {
	return fmt.Sprintf("%s event=%q source=%q command=%q>\n%s\n%s", frameOpen, string(ev), defuse(oneLine(h.Source)), defuse(oneLine(h.Command.String())), defuse(text), frameClose)
}

// defuse rewrites look-alikes of the frame's lines in s.
func defuse(s string) string {
	s = strings.ReplaceAll(s, frameClose, "<\\/hook_output>")
	return strings.ReplaceAll(s, frameOpen, "<\\hook_output")
}

// oneLine is s on one line, at most 200 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
