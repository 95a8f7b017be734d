package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgate/acpgate/internal/base/sandbox"
)

// Input is the event a hook is given on stdin, with Claude Code's member
// names: the members every event has, then each event's own (empty ones
// left out).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  Event  `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Source is SessionStart's: "startup", "resume".
	Source string `json:"source,omitempty"`
	// Prompt is UserPromptSubmit's: the prompt's text.
	Prompt string `json:"prompt,omitempty"`
	// The tool events': the tool's name (an MCP tool's mcp__server__tool),
	// its input, the call's id and (PostToolUse) its result.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Trigger and CustomInstructions are PreCompact's: "manual" or
	// "auto", and what /compact was given.
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`
	// StopHookActive is Stop's: whether the turn goes on already because
	// a Stop hook blocked it.
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
	// Reason is SessionEnd's: "other" (the session closed), "exit".
	Reason string `json:"reason,omitempty"`
}

// Answer is the JSON object a hook may print on stdout (exit status 0),
// in Claude Code's shape.
type Answer struct {
	// Continue false ends the turn (StopReason says why to the user).
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stopReason"`
	// SystemMessage is shown to the user.
	SystemMessage  string `json:"systemMessage"`
	SuppressOutput bool   `json:"suppressOutput"`
	// Decision "block" (with Reason) blocks UserPromptSubmit, PostToolUse
	// and Stop; PreToolUse's older "approve" and "block" are allow and
	// deny.
	Decision string          `json:"decision"`
	Reason   string          `json:"reason"`
	Specific *SpecificAnswer `json:"hookSpecificOutput"`
}

// SpecificAnswer is an answer's hookSpecificOutput.
type SpecificAnswer struct {
	HookEventName string `json:"hookEventName"`
	// PermissionDecision is PreToolUse's: "allow", "deny" or "ask".
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// Decision is PermissionRequest's: {"behavior": "allow"|"deny",
	// "updatedInput", "message"}.
	Decision *PermissionAnswer `json:"decision"`
}

// PermissionAnswer is a PermissionRequest hook's decision.
type PermissionAnswer struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput"`
	Message      string          `json:"message"`
}

// Errors of a run (Outcome.Err).
var (
	// ErrTimeout: the hook ran past its timeout and was killed.
	ErrTimeout = errors.New("hook timed out")
	// ErrStart: the hook could not be started.
	ErrStart = errors.New("hook could not start")
	// ErrStatus: the hook exited with a status other than 0 and 2.
	ErrStatus = errors.New("hook failed")
	// ErrOutput: the hook printed what looks like JSON but is not an
	// answer.
	ErrOutput = errors.New("hook printed an answer that is not valid")
)

// Outcome is what one run of a hook did.
type Outcome struct {
	Hook Hook
	// Status is the exit status (-1: none, the hook did not exit by
	// itself).
	Status int
	// Stdout and Stderr are what the hook printed, each cut to the
	// Runner's MaxOutput (Cut says one was) and made valid UTF-8.
	Stdout, Stderr string
	Cut            bool
	// Answer is stdout read as a JSON answer (status 0 and stdout a JSON
	// object; nil otherwise).
	Answer *Answer
	// Err is why the run failed (ErrTimeout, ErrStart, ErrStatus,
	// ErrOutput, or the context's error); nil for status 0 or 2.
	Err      error
	Duration time.Duration
	// Sandbox is how the hook was confined.
	Sandbox Sandboxed
}

// Sandboxed says how a hook run was confined: Policy is "" when it ran
// with no policy (off); Enforced is false, with a Note, when the policy
// allowed running it unconfined where it cannot be enforced.
type Sandboxed struct {
	Policy   string
	Enforced bool
	Note     string
}

// String describes the confinement as cards and logs show it: "off",
// "POLICY, enforced" or "POLICY, NOT enforced: NOTE".
func (s Sandboxed) String() string {
	switch {
	case s.Policy == "" || s.Policy == "off":
		return "off"
	case s.Enforced:
		return s.Policy + ", enforced"
	case s.Note != "":
		return s.Policy + ", NOT enforced: " + s.Note
	}
	return s.Policy + ", NOT enforced"
}

// Blocked reports whether the hook exited with status 2 (block).
func (o Outcome) Blocked() bool { return o.Err == nil && o.Status == 2 }

// DefaultMaxOutput is how much of a hook's stdout, and of its stderr, a
// Runner keeps when MaxOutput is 0.
const DefaultMaxOutput = 64 << 10

// Runner runs hooks. Its fields are set before the first Run and not
// changed after; Run is safe for concurrent use.
type Runner struct {
	// Env is every hook's environment (acpgate gives the one its
	// commands get: its own without the models' API keys; nil: this
	// process's), with CLAUDE_PROJECT_DIR and ACPGATE_PROJECT_DIR added.
	Env []string
	// MaxOutput bounds what is kept of stdout and of stderr
	// (DefaultMaxOutput when 0); the rest is read and dropped.
	MaxOutput int
	// Sandbox, when set, runs every hook under Policy (the session's
	// policy for local commands, commandSandbox) with Workspace as its
	// writable workspace; a policy it cannot enforce and may not run
	// unconfined keeps the hook from starting (ErrStart).
	Sandbox   *sandbox.Launcher
	Policy    sandbox.Policy
	Workspace []string
}

// Run runs h in dir with in as its stdin (JSON), within h's timeout and
// ctx. The command runs in a process group of its own, killed whole at
// the timeout.
func (r *Runner) Run(ctx context.Context, h Hook, dir string, in Input) Outcome {
	start := time.Now()
	out := Outcome{Hook: h, Status: -1}
	data, err := json.Marshal(in)
	if err != nil {
		out.Err = fmt.Errorf("%w: encoding its input: %v", ErrStart, err)
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, h.Command.Timeout)
	defer cancel()
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), "CLAUDE_PROJECT_DIR="+dir, "ACPGATE_PROJECT_DIR="+dir)
	cmd, conf, err := r.command(ctx, h.Command, env)
	if err != nil {
		out.Err = fmt.Errorf("%w: %v", ErrStart, err)
		return out
	}
	defer conf.Close() // its temporary directory, once the group is gone
	out.Sandbox = Sandboxed{Policy: conf.Policy, Enforced: conf.Enforced, Note: conf.Note}
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(data)
	max := r.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	stdout, stderr := &capBuffer{max: max}, &capBuffer{max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	out.Duration = time.Since(start)
	out.Stdout, out.Stderr, out.Cut = stdout.text(), stderr.text(), stdout.cut || stderr.cut
	var exit *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		out.Err = fmt.Errorf("%w after %v", ErrTimeout, h.Command.Timeout)
		return out
	case ctx.Err() != nil:
		out.Err = ctx.Err()
		return out
	case errors.As(err, &exit):
		out.Status = exit.ExitCode()
	case err != nil:
		out.Err = fmt.Errorf("%w: %v", ErrStart, err)
		return out
	default:
		out.Status = 0
	}
	switch out.Status {
	case 0:
		out.Answer, out.Err = readAnswer(out.Stdout, out.Cut)
	case 2:
	default:
		out.Err = fmt.Errorf("%w: exit status %d", ErrStatus, out.Status)
	}
	return out
}

// command is the exec.Cmd of c with environment env: its argv, or sh -c
// with its line, under the Runner's policy when it has one (the
// launcher executes the hook in its own place: same process, same
// group); killed with its process group when ctx ends. The caller
// closes the Confined once the command has ended.
func (r *Runner) command(ctx context.Context, c Command, env []string) (*exec.Cmd, *sandbox.Confined, error) {
	argv := []string{"sh", "-c", c.Line}
	if c.Line == "" {
		argv = c.Args
	}
	conf := &sandbox.Confined{Argv: argv}
	if r.Sandbox != nil && !r.Policy.Off() {
		var err error
		if conf, err = r.Sandbox.Confine(r.Policy, r.Workspace, argv); err != nil {
			return nil, nil, err
		}
	}
	cmd := exec.CommandContext(ctx, conf.Argv[0], conf.Argv[1:]...)
	cmd.Env = conf.Environ(env)
	setGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	return cmd, conf, nil
}

// readAnswer reads stdout as an answer: a JSON object is one (or
// ErrOutput when it does not decode, or was cut); anything else is plain
// text, no answer.
func readAnswer(stdout string, cut bool) (*Answer, error) {
	text := strings.TrimSpace(stdout)
	if !strings.HasPrefix(text, "{") {
		return nil, nil
	}
	if cut {
		return nil, fmt.Errorf("%w: it is longer than the bound kept", ErrOutput)
	}
	var a Answer
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOutput, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more follows the JSON object", ErrOutput)
	}
	return &a, nil
}

// capBuffer keeps the first max bytes written to it and drops the rest.
type capBuffer struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.cut = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// text is what was kept, as valid UTF-8.
func (b *capBuffer) text() string {
	return strings.ToValidUTF8(b.buf.String(), string(utf8.RuneError))
}
