package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// registryInitialize is the initialize request of the ACP registry's auth
// check (.github/workflows/client.py), byte for byte as Python's
// json.dumps writes it.
const registryInitialize = `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"}, "clientCapabilities": {"terminal": true, "fs": {"readTextFile": true, "writeTextFile": true}, "_meta": {"terminal_output": true, "terminal-auth": true}}}}`

// rawAgent is acpgate on pipes, spoken to in raw JSON-RPC lines as the
// registry's check does.
type rawAgent struct {
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at EOF
	stderr *testbin.SyncBuffer
}

// startRaw runs acpgate with exactly the environment env (nothing
// inherited) and args.
func startRaw(t *testing.T, env []string, args ...string) *rawAgent {
	t.Helper()
	cmd := exec.Command(agentBin, args...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	check := acpSchema.connection(t)
	a := &rawAgent{stdin: check.stdin(stdin), lines: make(chan string, 64), stderr: &testbin.SyncBuffer{}}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(a.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			check.agentFrame(sc.Bytes())
			a.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		for range a.lines {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("acpgate: %v", err)
		}
		if t.Failed() {
			t.Logf("acpgate stderr:\n%s", a.stderr.String())
		}
	})
	return a
}

// line returns the next line acpgate writes.
func (a *rawAgent) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-a.lines:
		if !ok {
			t.Fatal("acpgate closed its stdout")
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no line from acpgate in 30 s")
	}
	return ""
}

// call sends a request and returns its result, and the text of the agent
// message chunks sent before it.
func (a *rawAgent) call(t *testing.T, id int, method string, params any) (result json.RawMessage, text string) {
	t.Helper()
	if _, err := fmt.Fprintf(a.stdin, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":%q,\"params\":%s}\n", id, method, mustJSON(params)); err != nil {
		t.Fatal(err)
	}
	for {
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
			Params struct {
				Update struct {
					Kind    string `json:"sessionUpdate"`
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		l := a.line(t)
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		switch {
		case msg.Method == "session/update" && msg.Params.Update.Kind == "agent_message_chunk":
			text += msg.Params.Update.Content.Text
		case msg.ID != nil && *msg.ID == id && msg.Method == "":
			if msg.Error != nil {
				t.Fatalf("%s: %s", method, msg.Error)
			}
			return msg.Result, text
		}
	}
}

// bareEnv is the environment of the registry's check: PATH, TERM=dumb and
// HOME, an empty directory ("": no HOME at all).
func bareEnv(home string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb"}
	if home != "" {
		env = append(env, "HOME="+home)
	}
	return env
}

// TestRegistryHandshake: started as the ACP registry's check starts it
// (an empty HOME, nothing else but PATH and TERM), acpgate answers the
// check's initialize on its first stdout line with a terminal auth method
// running `acpgate setup`; a client without terminal auth is offered no
// method. Without any model, session/new and /mcp work, and a prompt says
// to run acpgate setup. Without HOME at all, initialize succeeds too.
func TestRegistryHandshake(t *testing.T) {
	t.Parallel()
	a := startRaw(t, bareEnv(t.TempDir()))
	if _, err := io.WriteString(a.stdin, registryInitialize+"\n"); err != nil {
		t.Fatal(err)
	}
	var first struct {
		ID     int `json:"id"`
		Result struct {
			AuthMethods []map[string]any `json:"authMethods"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(a.line(t)), &first); err != nil || first.ID != 1 {
		t.Fatalf("first line: %v %+v", err, first)
	}
	if m := first.Result.AuthMethods; len(m) != 1 || m[0]["type"] != "terminal" || m[0]["id"] != "setup" || mustJSON(m[0]["args"]) != `["setup"]` || m[0]["name"] == "" {
		t.Errorf("authMethods %s", mustJSON(m))
	}
	res, _ := a.call(t, 2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &sess); err != nil || sess.SessionID == "" {
		t.Fatalf("session/new: %s", res)
	}
	text := func(s string) []map[string]string { return []map[string]string{{"type": "text", "text": s}} }
	if res, said := a.call(t, 3, "session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": text("/mcp")}); !strings.Contains(string(res), `"end_turn"`) || said == "" {
		t.Errorf("/mcp: %s %q", res, said)
	}
	if _, said := a.call(t, 4, "session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": text("hello")}); !strings.Contains(said, "run `acpgate setup` in a terminal") {
		t.Errorf("a prompt without a model: %q", said)
	}

	for name, caps := range map[string]string{"no terminal auth": `{"terminal": true, "fs": {"readTextFile": true}}`, "no HOME": `{"auth": {"terminal": true}}`} {
		home, want := t.TempDir(), `"authMethods":[]`
		if name == "no HOME" {
			home, want = "", `"authMethods":[{"args":["setup"]`
		}
		b := startRaw(t, bareEnv(home))
		res, _ := b.call(t, 1, "initialize", json.RawMessage(`{"protocolVersion": 1, "clientCapabilities": `+caps+`}`))
		if !strings.Contains(string(res), want) {
			t.Errorf("%s: %s", name, res)
		}
	}
}
