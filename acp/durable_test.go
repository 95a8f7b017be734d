package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/session"
)

// quietClient is an ACP client that ignores updates and refuses every
// client-side method.
type quietClient struct{}

func (quietClient) SessionUpdate(context.Context, acpsdk.SessionNotification) error { return nil }
func (quietClient) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{}}}, nil
}
func (quietClient) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, acpsdk.NewMethodNotFound("fs/read_text_file")
}
func (quietClient) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, acpsdk.NewMethodNotFound("fs/write_text_file")
}
func (quietClient) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
}
func (quietClient) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/kill")
}
func (quietClient) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, acpsdk.NewMethodNotFound("terminal/output")
}
func (quietClient) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/release")
}
func (quietClient) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, acpsdk.NewMethodNotFound("terminal/wait_for_exit")
}

// frame is what the test reads of a message the agent writes.
type frame struct {
	Method string `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			Kind   string `json:"sessionUpdate"`
			CallID string `json:"toolCallId"`
			Status string `json:"status"`
		} `json:"update"`
	} `json:"params"`
}

// completedCallLogged reports whether the session log in dir holds the
// final state of tool call id (completed).
func completedCallLogged(t *testing.T, dir, sid, id string) bool {
	f, err := os.Open(filepath.Join(dir, "sessions", sid, "log.jsonl"))
	if err != nil {
		t.Errorf("opening the log: %v", err)
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r session.Record
		var u struct {
			Kind   string `json:"sessionUpdate"`
			CallID string `json:"toolCallId"`
			Status string `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && json.Unmarshal(r.Data, &u) == nil &&
			u.Kind == "tool_call" && u.CallID == id && u.Status == "completed" {
			return true
		}
	}
	return false
}

// checkingWriter passes the agent's output on; at the moment it is about
// to pass on the update that completes a tool call, it checks that the
// session log already holds the call.
type checkingWriter struct {
	w       io.Writer
	dir     string
	t       *testing.T
	mu      sync.Mutex
	checked int // completed calls seen
	missing []string
}

func (c *checkingWriter) Write(p []byte) (int, error) {
	var f frame
	if json.Unmarshal(p, &f) == nil && f.Method == "session/update" &&
		f.Params.Update.Kind == "tool_call_update" && f.Params.Update.Status == "completed" {
		ok := completedCallLogged(c.t, c.dir, f.Params.SessionID, f.Params.Update.CallID)
		c.mu.Lock()
		c.checked++
		if !ok {
			c.missing = append(c.missing, f.Params.Update.CallID)
		}
		c.mu.Unlock()
	}
	return c.w.Write(p)
}

// TestCallWrittenBeforeShown: the record of a completed tool call is in
// the session log (written, so a crash of acpgate cannot lose it) before
// the client is told the call completed.
func TestCallWrittenBeforeShown(t *testing.T) {
	b, err := testbin.New()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Cleanup()
	server, err := b.Build("./internal/testsupport/fake/mcpserver")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := session.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	cw := &checkingWriter{w: outW, dir: dir, t: t}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- acp.Serve(ctx, inR, cw, acp.Options{Store: store}); _ = outW.Close() }()
	conn := acpsdk.NewClientSideConnection(quietClient{}, inW, outR)
	if _, err := conn.Initialize(ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	resp, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{
		Name: "s", Command: server, Args: []string{"-name", "s"}, Env: []acpsdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: resp.SessionId,
			Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(`/call mcp__s__echo {"text":"kept"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	_ = inW.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.checked != 3 || len(cw.missing) != 0 {
		t.Errorf("%d completed calls shown; not yet in the log when shown: %v", cw.checked, cw.missing)
	}
}
