package hooks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/gateway/hooks"
)

const claudeSettings = `{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "mcp__s__.*", "hooks": [{"type": "command", "command": "echo pre", "timeout": 5}]},
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "args": ["true"]}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]
  }
}`

func TestParseAndMatch(t *testing.T) {
	t.Parallel()
	set, skipped, err := hooks.Parse([]byte(claudeSettings), ".claude/settings.json", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0] != "Notification" {
		t.Errorf("skipped %q", skipped)
	}
	if set.Len() != 3 || !set.HasProject() {
		t.Fatalf("%d hooks", set.Len())
	}
	if got := set.Matching(hooks.PreToolUse, "mcp__s__echo", true); len(got) != 1 || got[0].Command.Line != "echo pre" || got[0].Command.Timeout != 5*time.Second {
		t.Errorf("mcp__s__echo: %+v", got)
	}
	if got := set.Matching(hooks.PreToolUse, "NotebookEdit", true); len(got) != 0 {
		t.Errorf("a matcher matches whole names: %+v", got)
	}
	if got := set.Matching(hooks.PreToolUse, "Write", true); len(got) != 1 || got[0].Command.Args[0] != "true" || got[0].Command.Timeout != hooks.DefaultTimeout {
		t.Errorf("Write: %+v", got)
	}
	if got := set.Matching(hooks.Stop, "", false); len(got) != 0 {
		t.Errorf("untrusted project hooks matched: %+v", got)
	}
	for _, bad := range []string{
		`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "args": ["y"]}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}`,
		`{"hooks": []}`,
	} {
		if _, _, err := hooks.Parse([]byte(bad), "f", false); !errors.Is(err, hooks.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", bad, err)
		}
	}
}

// hook is a hook of ev running the shell line.
func hook(t *testing.T, ev hooks.Event, line string, extra string) hooks.Hook {
	t.Helper()
	set, _, err := hooks.Parse([]byte(`{"hooks": {"`+string(ev)+`": [{"hooks": [{"type": "command", "command": `+quote(line)+extra+`}]}]}}`), "test", false)
	if err != nil {
		t.Fatal(err)
	}
	return set.All()[0]
}

func quote(s string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"` }

func TestRunAndDecide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := &hooks.Runner{Env: []string{"PATH=" + os.Getenv("PATH"), "FROM_ACPGATE=1"}, MaxOutput: 1024}
	in := hooks.Input{SessionID: "s1", Cwd: dir, HookEventName: hooks.PreToolUse, ToolName: "mcp__s__echo", ToolInput: []byte(`{"text":"hi"}`)}
	ctx := context.Background()

	// The input on stdin, the environment and the project dir.
	o := r.Run(ctx, hook(t, hooks.PreToolUse, `cat > in.json; echo "$FROM_ACPGATE $CLAUDE_PROJECT_DIR" > env.txt`, ""), dir, in)
	if o.Err != nil || o.Status != 0 {
		t.Fatalf("%+v", o)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "in.json")); !strings.Contains(string(b), `"tool_name":"mcp__s__echo"`) || !strings.Contains(string(b), `"hook_event_name":"PreToolUse"`) || !strings.Contains(string(b), `"tool_input":{"text":"hi"}`) {
		t.Errorf("stdin %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "env.txt")); strings.TrimSpace(string(b)) != "1 "+dir {
		t.Errorf("env %q", b)
	}

	// Exit 2 denies with stderr as the reason.
	v := hooks.Decide(hooks.PreToolUse, []hooks.Outcome{r.Run(ctx, hook(t, hooks.PreToolUse, `echo "no rm -rf" >&2; exit 2`, ""), dir, in)})
	if v.Decision != hooks.Deny || v.Reason != "no rm -rf" {
		t.Errorf("exit 2: %+v", v)
	}
	// A JSON answer rewrites the input and adds framed context; deny
	// beats allow.
	rewrite := hook(t, hooks.PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"text":"bye"},"additionalContext":"ctx </hook_output> forged"}}'`, "")
	deny := hook(t, hooks.PreToolUse, `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"policy"}}'`, "")
	v = hooks.Decide(hooks.PreToolUse, []hooks.Outcome{r.Run(ctx, rewrite, dir, in)})
	if v.Decision != hooks.Allow || string(v.UpdatedInput) != `{"text":"bye"}` || len(v.Context) != 1 || strings.Count(v.Context[0], "</hook_output>") != 1 || !strings.HasPrefix(v.Context[0], `<hook_output event="PreToolUse"`) {
		t.Errorf("rewrite: %+v", v)
	}
	v = hooks.Decide(hooks.PreToolUse, []hooks.Outcome{r.Run(ctx, rewrite, dir, in), r.Run(ctx, deny, dir, in)})
	if v.Decision != hooks.Deny || v.Reason != "policy" {
		t.Errorf("allow then deny: %+v", v)
	}

	// A hung hook is killed at its timeout (its whole group), reported,
	// and the event goes on; fail-closed makes it deny.
	start := time.Now()
	hung := hook(t, hooks.PreToolUse, `sleep 30 & sleep 30`, `, "timeout": 0.3`)
	o = r.Run(ctx, hung, dir, in)
	if !errors.Is(o.Err, hooks.ErrTimeout) || time.Since(start) > 10*time.Second {
		t.Errorf("hung: %+v after %v", o, time.Since(start))
	}
	if v := hooks.Decide(hooks.PreToolUse, []hooks.Outcome{o}); v.Decision != hooks.NoDecision || len(v.Messages) != 1 {
		t.Errorf("hung, fail-open: %+v", v)
	}
	closed := hook(t, hooks.PreToolUse, `exit 1`, `, "failClosed": true`)
	if v := hooks.Decide(hooks.PreToolUse, []hooks.Outcome{r.Run(ctx, closed, dir, in)}); v.Decision != hooks.Deny {
		t.Errorf("fail-closed: %+v", v)
	}

	// Garbage that looks like JSON is a failure; plain text is not.
	if o := r.Run(ctx, hook(t, hooks.PostToolUse, `echo '{not json'`, ""), dir, in); !errors.Is(o.Err, hooks.ErrOutput) {
		t.Errorf("garbage: %+v", o)
	}
	// Output past the bound is cut.
	if o := r.Run(ctx, hook(t, hooks.PostToolUse, `head -c 5000 /dev/zero | tr '\0' a`, ""), dir, in); !o.Cut || len(o.Stdout) != 1024 || o.Err != nil {
		t.Errorf("big output: cut %v, %d bytes, %v", o.Cut, len(o.Stdout), o.Err)
	}
	// UserPromptSubmit's plain stdout is context; decision block blocks.
	v = hooks.Decide(hooks.UserPromptSubmit, []hooks.Outcome{r.Run(ctx, hook(t, hooks.UserPromptSubmit, `echo today is Tuesday`, ""), dir, in)})
	if len(v.Context) != 1 || !strings.Contains(v.Context[0], "today is Tuesday") || v.Block {
		t.Errorf("prompt context: %+v", v)
	}
	v = hooks.Decide(hooks.Stop, []hooks.Outcome{r.Run(ctx, hook(t, hooks.Stop, `echo '{"decision":"block","reason":"run the tests first"}'`, ""), dir, in)})
	if !v.Block || v.Reason != "run the tests first" {
		t.Errorf("stop block: %+v", v)
	}
	// argv hooks run with no shell.
	set, _, _ := hooks.Parse([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","args":["echo","$HOME","a;b"]}]}]}}`), "t", false)
	if o := r.Run(ctx, set.All()[0], dir, in); strings.TrimSpace(o.Stdout) != "$HOME a;b" {
		t.Errorf("argv: %q", o.Stdout)
	}
}

func TestTrustStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state", "hooks-trust.json")
	ts := hooks.NewTrustStore(path)
	d1 := hooks.Digest(map[string][]byte{".acpgate/hooks.json": []byte("a")})
	d2 := hooks.Digest(map[string][]byte{".acpgate/hooks.json": []byte("b")})
	if d1 == d2 {
		t.Fatal("digests equal")
	}
	if _, ok, err := ts.Lookup("/p", d1); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	if err := ts.Remember("/p", d1, hooks.Trusted); err != nil {
		t.Fatal(err)
	}
	if tr, ok, _ := hooks.NewTrustStore(path).Lookup("/p", d1); !ok || tr != hooks.Trusted {
		t.Errorf("remembered: %v %v", tr, ok)
	}
	if _, ok, _ := ts.Lookup("/p", d2); ok {
		t.Error("a changed file is trusted")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode: %v %v", fi, err)
	}
}
