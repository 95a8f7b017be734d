package acp_test

// The in-process harness: acp.Serve and acp-go-sdk's client side wired
// over io.Pipe, the way acp-go-sdk tests itself. The client is a fake made
// of function fields that records every session/update; models are fakes
// made of function fields; MCP tools come from real test servers
// (internal/testsupport/fake/mcpserver), built once for the test binary.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/base/sandbox"
	"github.com/acpgate/acpgate/internal/inputs/config"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/internal/testsupport/wsclient"
	"github.com/acpgate/acpgate/session"
)

// serverBin is the test MCP server (internal/testsupport/fake/mcpserver).
var serverBin string

func TestMain(m *testing.M) {
	sandbox.LaunchIfAsked()
	testbin.Main(m, map[string]*string{"./internal/testsupport/fake/mcpserver": &serverBin})
}

// hangGuard bounds every wait of the harness: it turns a hang into a
// failure and is never a timing assertion.
const hangGuard = 30 * time.Second

// agentPipes is a running acp.Serve: in is the agent's stdin, out its
// stdout.
type agentPipes struct {
	in   *io.PipeWriter
	out  *io.PipeReader
	done chan error // Serve's result
}

// startAgent runs acp.Serve on io.Pipes with opts; a nil opts.Store gets a
// fresh store in a temporary directory.
func startAgent(t *testing.T, opts acp.Options) agentPipes {
	t.Helper()
	if opts.MCP.Sandbox == nil {
		// The client's servers run sandboxed (the built-in
		// clientServerSandbox), the test binary their launcher (TestMain).
		// The tests keep their servers' record files beside the cwd, in
		// the temporary tree: it is writable, as a cache is.
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		opts.MCP.Sandbox = &sandbox.Launcher{Exe: exe, Places: sandbox.Places{Cache: []string{os.TempDir()}}}
	}
	if opts.Store == nil {
		st, err := session.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		opts.Store = st
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := agentPipes{in: inW, out: outR, done: make(chan error, 1)}
	go func() {
		p.done <- acp.Serve(context.Background(), inR, outW, opts)
		_ = outW.Close()
	}()
	return p
}

// stop closes the agent's stdin (the client hangs up) and checks that
// Serve shuts down cleanly. Something must keep reading out meanwhile.
func (p agentPipes) stop(t *testing.T) {
	t.Helper()
	_ = p.in.Close()
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(hangGuard):
		t.Error("Serve did not return after stdin closed")
	}
}

// recorder keeps every session/update the client receives, in order, and
// lets a test wait for a condition on them.
type recorder struct {
	mu      sync.Mutex
	ups     []acpsdk.SessionNotification
	changed chan struct{} // closed at the next add
}

func (r *recorder) add(n acpsdk.SessionNotification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ups = append(r.ups, n)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// len is how many updates have arrived.
func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ups)
}

// since returns the updates of session sid from index from on.
func (r *recorder) since(from int, sid acpsdk.SessionId) []acpsdk.SessionUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []acpsdk.SessionUpdate
	for _, n := range r.ups[from:] {
		if n.SessionId == sid {
			out = append(out, n.Update)
		}
	}
	return out
}

// waitFor waits until match holds for one update of session sid at index
// from or later, and returns that update.
func (r *recorder) waitFor(t *testing.T, from int, sid acpsdk.SessionId, what string, match func(acpsdk.SessionUpdate) bool) acpsdk.SessionUpdate {
	t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		r.mu.Lock()
		for _, n := range r.ups[from:] {
			if n.SessionId == sid && match(n.Update) {
				r.mu.Unlock()
				return n.Update
			}
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-guard.C:
			t.Fatalf("no %s among the updates: %s", what, dump(r.since(0, sid)))
		}
	}
}

// fakeClient is the ACP client: each method calls its function field if
// set. Without one, SessionUpdate records the update, RequestPermission
// fails the test, and the file-system and terminal methods go to the
// editor's Workspace (real files and processes) when it is set, and
// answer "method not found" when it is not.
type fakeClient struct {
	t   *testing.T
	rec recorder
	// Workspace is the editor's side of fs/* and terminal/*.
	Workspace *wsclient.Workspace

	SessionUpdateFunc     func(context.Context, acpsdk.SessionNotification) error
	RequestPermissionFunc func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)
	ReadTextFileFunc      func(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error)
	WriteTextFileFunc     func(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error)
	// ElicitFunc answers elicitation/create; CompleteFunc gets
	// elicitation/complete. Without them: "method not found".
	ElicitFunc   func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error)
	CompleteFunc func(context.Context, acpsdk.UnstableCompleteElicitationNotification) error
}

func (c *fakeClient) UnstableCreateElicitation(ctx context.Context, p acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
	if c.ElicitFunc != nil {
		return c.ElicitFunc(ctx, p)
	}
	return acpsdk.UnstableCreateElicitationResponse{}, errNotSupported
}

func (c *fakeClient) UnstableCompleteElicitation(ctx context.Context, p acpsdk.UnstableCompleteElicitationNotification) error {
	if c.CompleteFunc != nil {
		return c.CompleteFunc(ctx, p)
	}
	return errNotSupported
}

var _ acpsdk.Client = (*fakeClient)(nil)

// errNotSupported answers the client methods a test did not set.
var errNotSupported = acpsdk.NewMethodNotFound("not supported by the fake client")

func (c *fakeClient) SessionUpdate(ctx context.Context, n acpsdk.SessionNotification) error {
	c.rec.add(n)
	if c.SessionUpdateFunc != nil {
		return c.SessionUpdateFunc(ctx, n)
	}
	return nil
}

func (c *fakeClient) RequestPermission(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	if c.RequestPermissionFunc != nil {
		return c.RequestPermissionFunc(ctx, p)
	}
	c.t.Errorf("unexpected permission request for %s", p.ToolCall.ToolCallId)
	return acpsdk.RequestPermissionResponse{}, errNotSupported
}

func (c *fakeClient) ReadTextFile(ctx context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	switch {
	case c.ReadTextFileFunc != nil:
		return c.ReadTextFileFunc(ctx, p)
	case c.Workspace != nil:
		return c.Workspace.ReadTextFile(ctx, p)
	}
	return acpsdk.ReadTextFileResponse{}, errNotSupported
}

func (c *fakeClient) WriteTextFile(ctx context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	switch {
	case c.WriteTextFileFunc != nil:
		return c.WriteTextFileFunc(ctx, p)
	case c.Workspace != nil:
		return c.Workspace.WriteTextFile(ctx, p)
	}
	return acpsdk.WriteTextFileResponse{}, errNotSupported
}

func (c *fakeClient) CreateTerminal(ctx context.Context, p acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	if c.Workspace != nil {
		return c.Workspace.CreateTerminal(ctx, p)
	}
	return acpsdk.CreateTerminalResponse{}, errNotSupported
}

func (c *fakeClient) KillTerminal(ctx context.Context, p acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	if c.Workspace != nil {
		return c.Workspace.KillTerminal(ctx, p)
	}
	return acpsdk.KillTerminalResponse{}, errNotSupported
}

func (c *fakeClient) TerminalOutput(ctx context.Context, p acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	if c.Workspace != nil {
		return c.Workspace.TerminalOutput(ctx, p)
	}
	return acpsdk.TerminalOutputResponse{}, errNotSupported
}

func (c *fakeClient) ReleaseTerminal(ctx context.Context, p acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	if c.Workspace != nil {
		return c.Workspace.ReleaseTerminal(ctx, p)
	}
	return acpsdk.ReleaseTerminalResponse{}, errNotSupported
}

func (c *fakeClient) WaitForTerminalExit(ctx context.Context, p acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	if c.Workspace != nil {
		return c.Workspace.WaitForTerminalExit(ctx, p)
	}
	return acpsdk.WaitForTerminalExitResponse{}, errNotSupported
}

// answer returns a RequestPermissionFunc selecting option (or cancelling
// when option is "") and counting the requests in asked.
func answer(option string, asked *int, mu *sync.Mutex) func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		mu.Lock()
		*asked++
		mu.Unlock()
		if option == "" {
			return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}, nil
		}
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(acpsdk.PermissionOptionId(option))}, nil
	}
}

// harness is a connected client and agent.
type harness struct {
	t    *testing.T
	conn *acpsdk.ClientSideConnection
	fc   *fakeClient
	opts acp.Options
	wire *testbin.SyncBuffer // every byte the agent sent the client
	// in is the agent's stdin and raw the answers to the requests a test
	// writes there itself (call).
	in  io.Writer
	raw *testbin.Replies
	// pipes are the agent's stdin and stdout.
	pipes agentPipes
}

// newHarness runs the agent with opts and connects fc (nil: a default
// fake client) to it; both end with the test.
func newHarness(t *testing.T, opts acp.Options, fc *fakeClient) *harness {
	t.Helper()
	if fc == nil {
		fc = &fakeClient{}
	}
	return newHarnessWith(t, opts, fc, fc)
}

// newHarnessWith is newHarness with client as what the connection
// dispatches to (a wrapper of fc adding optional methods); fc records.
func newHarnessWith(t *testing.T, opts acp.Options, fc *fakeClient, client acpsdk.Client) *harness {
	t.Helper()
	return newHarnessWrapped(t, opts, fc, client, nil)
}

// newHarnessWrapped is newHarnessWith with wrap, when set, between the
// client's connection and the agent: it is given the agent's stdin and
// the stdout the client reads, and returns those the connection uses.
func newHarnessWrapped(t *testing.T, opts acp.Options, fc *fakeClient, client acpsdk.Client, wrap func(in io.Writer, out io.Reader) (io.Writer, io.Reader)) *harness {
	t.Helper()
	fc.t = t
	if opts.Store == nil {
		st, err := session.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		opts.Store = st
	}
	p := startAgent(t, opts)
	h := &harness{t: t, fc: fc, opts: opts, wire: &testbin.SyncBuffer{}, in: p.in, raw: &testbin.Replies{}, pipes: p}
	var in io.Writer = p.in
	var out io.Reader = io.TeeReader(p.out, io.MultiWriter(h.wire, h.raw))
	if wrap != nil {
		in, out = wrap(in, out)
	}
	h.conn = acpsdk.NewClientSideConnection(client, in, out)
	h.conn.SetLogger(slog.New(slog.DiscardHandler)) // before any traffic
	t.Cleanup(func() { p.stop(t) })
	return h
}

// call sends a request as raw JSON next to the SDK's traffic (for the
// methods the SDK's client side lacks or sends in older shapes) and
// returns its answer.
func (h *harness) call(method string, params any) testbin.Reply {
	h.t.Helper()
	return h.raw.Call(h.t, h.in, method, params)
}

// ctx is a context bounded by the hang guard.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	h.t.Cleanup(cancel)
	return ctx
}

// newSession creates a session in a fresh directory with servers and
// waits for its announcement (the available_commands_update that follows
// the response) and for its servers to settle (see settledServers).
func (h *harness) newSession(servers ...acpsdk.McpServer) acpsdk.NewSessionResponse {
	h.t.Helper()
	resp := h.openSession(servers...)
	if len(servers) > 0 && !settled(serversOf(resp.Meta)) {
		h.settledServers(resp.SessionId)
	}
	return resp
}

// openSession is newSession without waiting for the servers.
func (h *harness) openSession(servers ...acpsdk.McpServer) acpsdk.NewSessionResponse {
	h.t.Helper()
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: h.t.TempDir(), McpServers: nonNil(servers)})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	h.fc.rec.waitFor(h.t, 0, resp.SessionId, "available_commands_update", isCommands)
	return resp
}

// settledServers waits for the session_info_update that reports none of
// the session's servers connecting (session/new answers while they
// connect) and returns the servers it lists. Servers that settled before
// the session was answered are never reported again: then the answer
// (session/new's or session/fork's, read off the wire) lists them.
func (h *harness) settledServers(sid acpsdk.SessionId) []map[string]any {
	h.t.Helper()
	if servers := h.answeredServers(sid); settled(servers) {
		return servers
	}
	u := h.fc.rec.waitFor(h.t, 0, sid, "servers settled", func(u acpsdk.SessionUpdate) bool {
		return u.SessionInfoUpdate != nil && settled(serversOf(u.SessionInfoUpdate.Meta))
	})
	return serversOf(u.SessionInfoUpdate.Meta)
}

// answeredServers returns the servers (as serversOf) of the answer that
// created session sid, as the agent wrote it; nil if there is none yet.
func (h *harness) answeredServers(sid acpsdk.SessionId) []map[string]any {
	for _, line := range strings.Split(h.wire.String(), "\n") {
		var m struct {
			Result *struct {
				SessionID acpsdk.SessionId `json:"sessionId"`
				Meta      map[string]any   `json:"_meta"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil && m.Result.SessionID == sid {
			return serversOf(m.Result.Meta)
		}
	}
	return nil
}

// serversOf returns _meta.acpgate.mcpServers of a response or update.
func serversOf(meta map[string]any) []map[string]any {
	ag, _ := meta["acpgate"].(map[string]any)
	list, _ := ag["mcpServers"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// settled reports whether servers (as serversOf returns them) are all
// past connecting.
func settled(servers []map[string]any) bool {
	for _, s := range servers {
		if s["state"] == "connecting" {
			return false
		}
	}
	return len(servers) > 0
}

func nonNil(s []acpsdk.McpServer) []acpsdk.McpServer {
	if s == nil {
		return []acpsdk.McpServer{}
	}
	return s
}

// prompt sends text to session sid and returns the response and the
// updates of the session that arrived while it ran (acp-go-sdk delivers
// every notification sent before a response before the response).
func (h *harness) prompt(sid acpsdk.SessionId, text string) (acpsdk.PromptResponse, []acpsdk.SessionUpdate) {
	h.t.Helper()
	from := h.fc.rec.len()
	resp, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
	if err != nil {
		h.t.Fatalf("prompt %q: %v", text, err)
	}
	return resp, h.fc.rec.since(from, sid)
}

// stdioServer is an mcpServers entry running the test MCP server.
func stdioServer(name string, args ...string) acpsdk.McpServer {
	return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: name, Command: serverBin, Args: nonNilStrings(args), Env: []acpsdk.EnvVariable{}}}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// configOf parses a configuration file for Options.Config.
func configOf(t *testing.T, src string) func() *config.Config {
	t.Helper()
	c, _, err := config.Parse([]byte(src), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	return func() *config.Config { return c }
}

// reqCode returns the JSON-RPC code of err (0 if it is not a request
// error).
func reqCode(err error) int {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

// fakeModel is a gateway.Provider made of a function field; it keeps the
// requests it was sent.
type fakeModel struct {
	CompleteFunc func(ctx context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error)

	mu   sync.Mutex
	reqs []gateway.ModelRequest
}

func (m *fakeModel) Complete(ctx context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.CompleteFunc(ctx, req, onDelta)
}

// requests returns the requests the model was sent.
func (m *fakeModel) requests() []gateway.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]gateway.ModelRequest(nil), m.reqs...)
}

// step is one scripted model answer.
type step func(req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error)

// scripted is a model answering its n-th call with steps[n], and the
// last step's answer after that.
func scripted(steps ...step) *fakeModel {
	m := &fakeModel{}
	m.CompleteFunc = func(_ context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		m.mu.Lock()
		n := min(len(m.reqs), len(steps)) - 1
		m.mu.Unlock()
		return steps[n](req, onDelta)
	}
	return m
}

// says streams text and ends the turn.
func says(text string) step {
	return func(_ gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
		onDelta(gateway.Delta{Text: text})
		return gateway.ModelResponse{Message: assistant(text), Stop: gateway.StopEndTurn}, nil
	}
}

// calls asks for one tool call.
func calls(id, tool, args string) step {
	return func(gateway.ModelRequest, func(gateway.Delta)) (gateway.ModelResponse, error) {
		return gateway.ModelResponse{Message: gateway.Message{Role: gateway.RoleAssistant,
			ToolCalls: []gateway.ToolCall{{ID: id, Name: tool, Arguments: json.RawMessage(args)}}}, Stop: gateway.StopToolUse}, nil
	}
}

func assistant(text string) gateway.Message {
	return gateway.Message{Role: gateway.RoleAssistant, Content: []gateway.Content{{Type: gateway.ContentText, Text: text}}}
}

// Matchers of update kinds.

func isCommands(u acpsdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil }

func isCard(id string, status acpsdk.ToolCallStatus) func(acpsdk.SessionUpdate) bool {
	return func(u acpsdk.SessionUpdate) bool {
		switch {
		case u.ToolCall != nil:
			return string(u.ToolCall.ToolCallId) == id && u.ToolCall.Status == status
		case u.ToolCallUpdate != nil:
			return string(u.ToolCallUpdate.ToolCallId) == id && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == status
		}
		return false
	}
}

// agentText is the agent message text of ups, concatenated.
func agentText(ups []acpsdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range ups {
		if c := u.AgentMessageChunk; c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

// toolUpdates returns the tool_call and tool_call_update updates of ups
// about call id.
func toolUpdates(ups []acpsdk.SessionUpdate, id string) []acpsdk.SessionUpdate {
	var out []acpsdk.SessionUpdate
	for _, u := range ups {
		if u.ToolCall != nil && string(u.ToolCall.ToolCallId) == id || u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallId) == id {
			out = append(out, u)
		}
	}
	return out
}

// finalStatus is the last status the updates of call id set.
func finalStatus(ups []acpsdk.SessionUpdate, id string) acpsdk.ToolCallStatus {
	var s acpsdk.ToolCallStatus
	for _, u := range toolUpdates(ups, id) {
		switch {
		case u.ToolCall != nil:
			s = u.ToolCall.Status
		case u.ToolCallUpdate.Status != nil:
			s = *u.ToolCallUpdate.Status
		}
	}
	return s
}

// toolText is the text content of the last update of call id that
// carries content.
func toolText(ups []acpsdk.SessionUpdate, id string) string {
	var content []acpsdk.ToolCallContent
	for _, u := range toolUpdates(ups, id) {
		switch {
		case u.ToolCall != nil && len(u.ToolCall.Content) > 0:
			content = u.ToolCall.Content
		case u.ToolCallUpdate != nil && len(u.ToolCallUpdate.Content) > 0:
			content = u.ToolCallUpdate.Content
		}
	}
	var b strings.Builder
	for _, c := range content {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

// dump renders updates for a failure message.
func dump(ups []acpsdk.SessionUpdate) string {
	b, _ := json.MarshalIndent(ups, "", " ")
	return string(b)
}
