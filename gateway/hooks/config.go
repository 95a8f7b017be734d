package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Event names a point of a session where hooks run, as Claude Code names
// it.
type Event string

// The events acpgate runs hooks for.
const (
	SessionStart      Event = "SessionStart"
	UserPromptSubmit  Event = "UserPromptSubmit"
	PreToolUse        Event = "PreToolUse"
	PermissionRequest Event = "PermissionRequest"
	PostToolUse       Event = "PostToolUse"
	PreCompact        Event = "PreCompact"
	Stop              Event = "Stop"
	SessionEnd        Event = "SessionEnd"
)

// Events are the events acpgate runs hooks for, in a session's order.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PreCompact, Stop, SessionEnd}

// The bounds of a hook file and of its hooks.
const (
	// MaxFileBytes bounds a hook file (or a settings file holding hooks).
	MaxFileBytes = 1 << 20
	// MaxHooks bounds the hooks of one file, all events together.
	MaxHooks = 256
	// DefaultTimeout is a hook's timeout when it sets none (Claude
	// Code's: 60 seconds).
	DefaultTimeout = 60 * time.Second
	// MaxTimeout bounds the timeout a hook may set.
	MaxTimeout = 10 * time.Minute
)

// ErrInvalid is wrapped by every error Parse returns for a file it
// cannot take.
var ErrInvalid = errors.New("invalid hooks")

// Command is one hook: what to run and for how long at most.
type Command struct {
	// Line is a command line run by sh -c, as Claude Code runs its
	// "command" ("": Args is the command).
	Line string
	// Args is the command as argv, run with no shell (acpgate's "args").
	Args []string
	// Timeout bounds a run (DefaultTimeout when the hook sets none).
	Timeout time.Duration
	// FailClosed makes a PreToolUse hook that fails (cannot start, times
	// out, exits with a status other than 0 and 2, or prints garbage)
	// block the call; by default a failed hook is reported and the call
	// goes on.
	FailClosed bool
}

// String is the command as the user shows it: its line, or its argv
// joined by spaces.
func (c Command) String() string {
	if c.Line != "" {
		return c.Line
	}
	return strings.Join(c.Args, " ")
}

// Hook is a command attached to an event, for the targets its matcher
// matches, from a named source (a file).
type Hook struct {
	Event   Event
	Command Command
	// Matcher is the matcher as written ("" or "*": every target).
	Matcher string
	// Source names where the hook was configured, for the user and the
	// logs (as ".claude/settings.json" or "configuration").
	Source string
	// Project is whether the hook came from the project (it runs only
	// once the project is trusted).
	Project bool
	re      *regexp.Regexp // nil: every target
}

// Matches reports whether the hook runs for target: a tool's name
// (PreToolUse, PermissionRequest, PostToolUse), SessionStart's source,
// PreCompact's trigger; events with no target match every hook.
func (h Hook) Matches(target string) bool {
	return h.re == nil || h.re.MatchString(target)
}

// Set is hooks of any number of sources. The zero value has none; a Set
// is not changed once built (safe for concurrent reads).
type Set struct {
	hooks []Hook
}

// Join returns a set holding the hooks of every set, in order.
func Join(sets ...Set) Set {
	var out Set
	for _, s := range sets {
		out.hooks = append(out.hooks, s.hooks...)
	}
	return out
}

// Len is the number of hooks of the set.
func (s Set) Len() int { return len(s.hooks) }

// All returns the set's hooks, in order.
func (s Set) All() []Hook { return slices.Clone(s.hooks) }

// Matching returns the hooks of ev whose matcher matches target, in
// order; with trusted false, the project's hooks are left out.
func (s Set) Matching(ev Event, target string, trusted bool) []Hook {
	var out []Hook
	for _, h := range s.hooks {
		if h.Event == ev && (trusted || !h.Project) && h.Matches(target) {
			out = append(out, h)
		}
	}
	return out
}

// HasProject reports whether the set has any hook of the project.
func (s Set) HasProject() bool {
	return slices.ContainsFunc(s.hooks, func(h Hook) bool { return h.Project })
}

// file is a hook file: Claude Code's settings shape, {"hooks": {Event:
// [{"matcher": ..., "hooks": [{"type": "command", ...}]}]}}, of which
// only "hooks" is read.
type file struct {
	Hooks map[string][]matcherGroup `json:"hooks"`
}

type matcherGroup struct {
	Matcher *string       `json:"matcher"`
	Hooks   []commandJSON `json:"hooks"`
}

// commandJSON is one hook as written: Claude Code's type, command and
// timeout (seconds), and acpgate's args and failClosed.
type commandJSON struct {
	Type       string   `json:"type"`
	Command    string   `json:"command"`
	Args       []string `json:"args"`
	Timeout    *float64 `json:"timeout"`
	FailClosed bool     `json:"failClosed"`
}

// Parse reads the hooks of data, a JSON object whose "hooks" member is
// in Claude Code's format (a settings file's other members are ignored;
// a file without "hooks" has none). source names the file in errors and
// in each Hook; project marks the hooks as the project's. Events other
// than acpgate's are skipped and named in skipped (Claude Code has more:
// Notification, SubagentStop…). Errors wrap ErrInvalid and name the
// member at fault.
func Parse(data []byte, source string, project bool) (set Set, skipped []string, err error) {
	if len(data) > MaxFileBytes {
		return Set{}, nil, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalid, source, len(data), MaxFileBytes)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return Set{}, nil, fmt.Errorf("%w: %s: %v", ErrInvalid, source, err)
	}
	events := make([]string, 0, len(f.Hooks))
	for name := range f.Hooks {
		events = append(events, name)
	}
	slices.Sort(events)
	for _, name := range events {
		ev := Event(name)
		if !slices.Contains(Events, ev) {
			skipped = append(skipped, name)
			continue
		}
		for i, g := range f.Hooks[name] {
			hooks, err := parseGroup(g, ev, source, project, fmt.Sprintf("hooks.%s[%d]", name, i))
			if err != nil {
				return Set{}, nil, err
			}
			set.hooks = append(set.hooks, hooks...)
			if len(set.hooks) > MaxHooks {
				return Set{}, nil, fmt.Errorf("%w: %s has more than %d hooks", ErrInvalid, source, MaxHooks)
			}
		}
	}
	return set, skipped, nil
}

// parseGroup reads one matcher group of ev (at path in source).
func parseGroup(g matcherGroup, ev Event, source string, project bool, path string) ([]Hook, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s: %s", ErrInvalid, source, path, fmt.Sprintf(format, args...))
	}
	var re *regexp.Regexp
	matcher := ""
	if g.Matcher != nil {
		matcher = *g.Matcher
	}
	if matcher != "" && matcher != "*" {
		var err error
		// As Claude Code matches: the whole name (Edit matches Edit, not
		// NotebookEdit), alternatives with |, regular expressions.
		if re, err = regexp.Compile("^(?:" + matcher + ")$"); err != nil {
			return nil, bad("matcher %q is not a regular expression: %v", matcher, err)
		}
	}
	out := make([]Hook, 0, len(g.Hooks))
	for j, c := range g.Hooks {
		cmd, err := parseCommand(c)
		if err != nil {
			return nil, bad("hooks[%d]: %v", j, err)
		}
		out = append(out, Hook{Event: ev, Command: cmd, Matcher: matcher, Source: source, Project: project, re: re})
	}
	return out, nil
}

// parseCommand reads one hook's command.
func parseCommand(c commandJSON) (Command, error) {
	if c.Type != "command" {
		return Command{}, fmt.Errorf("type %q is not supported (acpgate runs \"command\" hooks)", c.Type)
	}
	cmd := Command{Line: c.Command, Args: c.Args, Timeout: DefaultTimeout, FailClosed: c.FailClosed}
	switch {
	case c.Command != "" && len(c.Args) > 0:
		return Command{}, errors.New("give command (a shell line) or args (argv), not both")
	case c.Command == "" && len(c.Args) == 0:
		return Command{}, errors.New("command or args is required")
	case len(c.Args) > 0 && c.Args[0] == "":
		return Command{}, errors.New("args[0] is empty")
	}
	if c.Timeout != nil {
		t := time.Duration(*c.Timeout * float64(time.Second))
		if *c.Timeout <= 0 || t > MaxTimeout {
			return Command{}, fmt.Errorf("timeout %v is out of range (seconds, more than 0 and at most %v)", *c.Timeout, MaxTimeout.Seconds())
		}
		cmd.Timeout = t
	}
	return cmd, nil
}
