package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/internal/testsupport/wsclient"
)

// Binaries built once by TestMain.
var agentBin, serverBin, minAgentBin string

// TestMain builds the binaries, runs the tests and prints what the ACP
// schema check of their connections to acpgate counted (acpSchema).
func TestMain(m *testing.M) {
	testbin.Main(acpSchema.reporting(m), map[string]*string{"./cmd/acpgate": &agentBin, "./internal/testsupport/fake/mcpserver": &serverBin, "./internal/testsupport/minagent": &minAgentBin})
}

// client is the test's ACP client: it records updates and answers
// permission requests with answer. Its fs/* and terminal/* methods go to
// ws, the editor's real files and processes, when it is set, and answer
// "method not found" when it is not.
type client struct {
	mu      sync.Mutex
	updates []acpsdk.SessionNotification
	wake    chan struct{}
	answer  func(acpsdk.RequestPermissionRequest) string // option id; "" = cancelled
	asked   []acpsdk.RequestPermissionRequest
	// elicit answers elicitation/create (nil: "method not found").
	elicit func(acpsdk.UnstableCreateElicitationRequest) acpsdk.UnstableCreateElicitationResponse
	ws     *wsclient.Workspace
}

func (c *client) UnstableCreateElicitation(_ context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
	c.mu.Lock()
	elicit := c.elicit
	c.mu.Unlock()
	if elicit == nil {
		return acpsdk.UnstableCreateElicitationResponse{}, acpsdk.NewMethodNotFound("elicitation/create")
	}
	return elicit(p), nil
}

func (c *client) UnstableCompleteElicitation(context.Context, acpsdk.UnstableCompleteElicitationNotification) error {
	return nil
}

func newClient() *client { return &client{wake: make(chan struct{}, 1)} }

func (c *client) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

func (c *client) RequestPermission(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	answer := c.answer
	c.mu.Unlock()
	id := ""
	if answer != nil {
		id = answer(p)
	}
	if id == "" {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(id)}}}, nil
}

func (c *client) ReadTextFile(ctx context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	if c.ws != nil {
		return c.ws.ReadTextFile(ctx, p)
	}
	return acpsdk.ReadTextFileResponse{}, acpsdk.NewMethodNotFound("fs/read_text_file")
}
func (c *client) WriteTextFile(ctx context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	if c.ws != nil {
		return c.ws.WriteTextFile(ctx, p)
	}
	return acpsdk.WriteTextFileResponse{}, acpsdk.NewMethodNotFound("fs/write_text_file")
}
func (c *client) CreateTerminal(ctx context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	if c.ws != nil {
		return c.ws.CreateTerminal(ctx, p)
	}
	return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
}
func (c *client) KillTerminal(ctx context.Context, p acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	if c.ws != nil {
		return c.ws.KillTerminal(ctx, p)
	}
	return acpsdk.KillTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/kill")
}
func (c *client) TerminalOutput(ctx context.Context, p acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	if c.ws != nil {
		return c.ws.TerminalOutput(ctx, p)
	}
	return acpsdk.TerminalOutputResponse{}, acpsdk.NewMethodNotFound("terminal/output")
}
func (c *client) ReleaseTerminal(ctx context.Context, p acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	if c.ws != nil {
		return c.ws.ReleaseTerminal(ctx, p)
	}
	return acpsdk.ReleaseTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/release")
}
func (c *client) WaitForTerminalExit(ctx context.Context, p acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	if c.ws != nil {
		return c.ws.WaitForTerminalExit(ctx, p)
	}
	return acpsdk.WaitForTerminalExitResponse{}, acpsdk.NewMethodNotFound("terminal/wait_for_exit")
}

// all returns the updates received so far.
func (c *client) all() []acpsdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acpsdk.SessionNotification(nil), c.updates...)
}

// waitUpdate waits until an update matches.
func (c *client) waitUpdate(t testing.TB, what string, match func(acpsdk.SessionUpdate) bool) acpsdk.SessionUpdate {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		for _, n := range c.all() {
			if match(n.Update) {
				return n.Update
			}
		}
		select {
		case <-c.wake:
		case <-timeout:
			t.Fatalf("timed out waiting for update: %s", what)
		}
	}
}

// serversUntil waits until the session's servers, as the session/new
// response or a later session_info_update reports them
// (_meta.acpgate.mcpServers), meet ok (states by name), and returns that
// _meta as JSON. session/new answers while its servers connect.
func (a *agent) serversUntil(t testing.TB, resp acpsdk.NewSessionResponse, what string, ok func(states map[string]string) bool) string {
	t.Helper()
	if ok(serverStates(t, resp.Meta)) {
		return mustJSON(resp.Meta)
	}
	u := a.client.waitUpdate(t, what, func(u acpsdk.SessionUpdate) bool {
		return u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Meta != nil && ok(serverStates(t, u.SessionInfoUpdate.Meta))
	})
	return mustJSON(u.SessionInfoUpdate.Meta)
}

// settled reports whether none of the servers is connecting.
func settled(states map[string]string) bool {
	for _, st := range states {
		if st == "connecting" {
			return false
		}
	}
	return len(states) > 0
}

// agentText is the concatenated agent message text of the updates.
func agentText(ns []acpsdk.SessionNotification) string {
	var b strings.Builder
	for _, n := range ns {
		if u := n.Update.AgentMessageChunk; u != nil && u.Content.Text != nil {
			b.WriteString(u.Content.Text.Text)
		}
	}
	return b.String()
}

// agent is a running acpgate with a connected client.
type agent struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *acpsdk.ClientSideConnection
	client *client
	stderr *testbin.SyncBuffer
	stdout *testbin.SyncBuffer // every byte the agent wrote to the client
	// replies has the answers to the test's own requests (call).
	replies *testbin.Replies
	// stdoutPipe is the test's end of the agent's stdout; closing it
	// makes the agent's writes fail (EPIPE).
	stdoutPipe io.ReadCloser
	exited     chan struct{}
}

// startAgent runs acpgate with args and connects a client; the agent is
// stopped (stdin closed, then killed) at the end of the test.
func startAgent(t testing.TB, stateDir string, args ...string) *agent {
	t.Helper()
	return startAgentEnv(t, stateDir, nil, args...)
}

// startAgentEnv is startAgent with extra environment variables.
func startAgentEnv(t testing.TB, stateDir string, env []string, args ...string) *agent {
	t.Helper()
	return startAgentWith(t, stateDir, agentSetup{env: env}, args...)
}

// launchAgent runs acpgate and connects a client, without initialize.
func launchAgent(t testing.TB, stateDir string, env []string, args ...string) *agent {
	t.Helper()
	return startAgentWith(t, stateDir, agentSetup{env: env, noInit: true}, args...)
}

// agentSetup is what startAgentWith sets up besides the arguments.
type agentSetup struct {
	env []string // extra environment variables
	// ws, when set, is the client's files and terminals, advertised in
	// initialize.
	ws *wsclient.Workspace
	// noInit leaves initialize to the test.
	noInit bool
	// bin is the acpgate binary to run ("": agentBin).
	bin string
	// stdout, when set, wraps the agent's stdout before the client (and
	// agent.stdout) sees it.
	stdout func(io.Reader) io.Reader
	// pipes, when set, sits between the client's connection and the
	// agent: it is given the agent's stdin and the stdout the client
	// reads, and returns those the connection uses.
	pipes func(in io.Writer, out io.Reader) (io.Writer, io.Reader)
	// cmd, when set, may change the command before it starts (its
	// credentials, say).
	cmd func(*exec.Cmd)
	// session, when set, are the clientCapabilities.session members
	// ("notices", "compaction") the client advertises in initialize
	// (sent as raw JSON: acp-go-sdk's types lack them).
	session []string
	// updates, when set, records every session/update as acpgate wrote
	// it (for the kinds acp-go-sdk's client side does not decode).
	updates *testbin.Updates
}

// testSandbox is the clientServerSandbox of the tests' agents (those
// that give no configuration of their own): enforced, with the hidden
// paths hidden and the launcher between acpgate and every server, but
// writing the whole temporary tree, where the tests keep their servers'
// record files beside (not inside) the session's cwd. So every
// end-to-end test, the orphan, teardown and flood tests among them, runs
// its client's servers sandboxed.
func testSandbox() string {
	return `{"agents": {"defaults": {"clientServerSandbox": {"files": {"read": ["/"], "write": [` + strconv.Quote(os.TempDir()) + `]}, "failIfUnavailable": false}}}}`
}

// sandboxedConfig returns a configuration directory whose config.json
// holds testSandbox alone.
func sandboxedConfig(t testing.TB) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "acpgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "acpgate", "config.json"), []byte(testSandbox()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startAgentWith is startAgent with the setup s.
func startAgentWith(t testing.TB, stateDir string, s agentSetup, args ...string) *agent {
	t.Helper()
	env, bin := s.env, s.bin
	if bin == "" {
		bin = agentBin
	}
	cmd := exec.Command(bin, append([]string{"--state-dir", stateDir, "--log-level", "debug", "--startup-budget", "10s"}, args...)...)
	// No configuration file unless a test gives one, but for the sandbox
	// of the client's servers (sandboxedConfig).
	cmd.Env = append(append(os.Environ(), "OPENAI_API_KEY=sk-test-key", "XDG_CONFIG_HOME="+sandboxedConfig(t)), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Both directions go through the ACP schema check, which may fail the
	// test at its end (after the agent stopped: cleanups run last first).
	check := acpSchema.connection(t)
	a := &agent{cmd: cmd, stdin: check.stdin(stdin), client: newClient(), stderr: &testbin.SyncBuffer{}, stdout: &testbin.SyncBuffer{}, replies: &testbin.Replies{}, stdoutPipe: stdout, exited: make(chan struct{})}
	a.client.ws = s.ws
	cmd.Stderr = a.stderr
	if s.cmd != nil {
		s.cmd(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(a.exited) }()
	var out io.Reader = stdout
	if s.stdout != nil {
		out = s.stdout(stdout)
	}
	var in io.Writer = a.stdin
	seen := []io.Writer{a.stdout, a.replies, check.agent()}
	if s.updates != nil {
		seen = append(seen, s.updates)
	}
	out = io.TeeReader(out, io.MultiWriter(seen...))
	if s.pipes != nil {
		in, out = s.pipes(in, out)
	}
	a.conn = acpsdk.NewClientSideConnection(a.client, in, out)
	a.conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-a.exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-a.exited
			t.Errorf("acpgate did not exit after stdin EOF; stderr:\n%s", a.stderr.String())
		}
		if t.Failed() {
			t.Logf("acpgate stderr:\n%s", a.stderr.String())
		}
	})
	if !s.noInit {
		a.initialize(t, s)
	}
	return a
}

// initialize sends initialize with the client capabilities of s: its
// files and terminals (ws), or, as raw JSON, its session members.
func (a *agent) initialize(t testing.TB, s agentSetup) {
	t.Helper()
	if s.session != nil {
		caps := map[string]any{}
		for _, c := range s.session {
			caps[c] = map[string]any{}
		}
		if r := a.call(t, "initialize", map[string]any{"protocolVersion": acpsdk.ProtocolVersionNumber, "clientCapabilities": map[string]any{"session": caps}}); r.Error != nil {
			t.Fatalf("initialize: %s", r.Raw)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}
	if s.ws != nil {
		init.ClientCapabilities = acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}
	}
	if _, err := a.conn.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

// call sends the agent a request as raw JSON, next to the client's
// traffic (for the methods acp-go-sdk's client side lacks or sends in
// older shapes), and returns its answer.
func (a *agent) call(t testing.TB, method string, params any) testbin.Reply {
	t.Helper()
	return a.replies.Call(t, a.stdin, method, params)
}

// stdioServer is an ACP mcpServers entry running the test MCP server.
func stdioServer(name string, args ...string) acpsdk.McpServer {
	return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: name, Command: serverBin, Args: append([]string{"-name", name}, args...), Env: []acpsdk.EnvVariable{}}}
}

func ctx30(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func prompt(t *testing.T, a *agent, sid acpsdk.SessionId, text string) acpsdk.PromptResponse {
	t.Helper()
	resp, err := a.conn.Prompt(ctx30(t), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return resp
}

// netServer runs the test MCP server over http or sse on 127.0.0.1.
func netServer(t *testing.T, mode string, args ...string) string {
	t.Helper()
	cmd := exec.Command(serverBin, append([]string{"-transport", mode}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "URL "))
}

// recordFile is a path for a test server's -record file, and a reader.
func recordFile(t testing.TB) (string, func() string) {
	p := filepath.Join(t.TempDir(), "record")
	return p, func() string { b, _ := os.ReadFile(p); return string(b) }
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
