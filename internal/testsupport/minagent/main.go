// Command minagent is the least ACP agent that can do what acpgate's /call
// does, built on the same two SDKs (acp-go-sdk for ACP, mcp-go for MCP). It
// exists as the floor of acpgate's benchmarks and is not part of acpgate.
//
// It serves ACP on stdin/stdout. session/new starts an mcp-go stdio client
// for the first stdio server of the request (one session at a time);
// session/prompt accepts only "/call <tool> <json-arguments>", where tool is
// the server's tool name or acpgate's bridged name mcp__<server>__<tool>,
// calls the tool and sends the notifications acpgate sends for a call: a
// tool_call (pending, with the raw input), a tool_call_update to
// in_progress, and a tool_call_update with the status, content and raw
// output. Nothing is stored, approved, framed or redacted.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"

	acp "github.com/coder/acp-go-sdk"
	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// protocolVersion is the MCP revision minagent speaks, the one acpgate pins
// (mcp-go's latest, the stateless 2026-07-28 revision, costs more per call).
const protocolVersion = "2025-11-25"

func main() {
	if p := os.Getenv("MINAGENT_CPUPROFILE"); p != "" {
		f, _ := os.Create(p)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	a := &agent{}
	conn := acp.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	a.conn = conn
	<-conn.Done()
	a.close()
}

// agent is the minimal ACP agent; its methods are called concurrently by
// the SDK, and its state is guarded by mu.
type agent struct {
	conn *acp.AgentSideConnection
	seq  atomic.Int64

	mu     sync.Mutex
	server string // the session's server name
	mcp    *mcpclient.Client
	titles map[string]string // tool name -> title
}

var _ acp.Agent = (*agent)(nil)

func (a *agent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
}

func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession connects the request's first stdio MCP server.
func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	var spec *acp.McpServerStdio
	for _, s := range p.McpServers {
		if s.Stdio != nil {
			spec = s.Stdio
			break
		}
	}
	if spec == nil {
		return acp.NewSessionResponse{}, acp.NewInvalidParams("minagent needs one stdio MCP server")
	}
	env := make([]string, 0, len(spec.Env))
	for _, e := range spec.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	t := transport.NewStdioWithOptions(spec.Command, env, spec.Args)
	if err := t.Start(context.WithoutCancel(ctx)); err != nil {
		return acp.NewSessionResponse{}, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	c := mcpclient.NewClient(t, mcpclient.WithProtocolVersion(protocolVersion))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = protocolVersion
	init.Params.ClientInfo = mcp.Implementation{Name: "minagent", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		_ = c.Close()
		return acp.NewSessionResponse{}, fmt.Errorf("initializing %s: %w", spec.Name, err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		_ = c.Close()
		return acp.NewSessionResponse{}, fmt.Errorf("listing the tools of %s: %w", spec.Name, err)
	}
	titles := map[string]string{}
	for _, tool := range tools.Tools {
		titles[tool.Name] = tool.Annotations.Title
	}
	a.mu.Lock()
	old := a.mcp
	a.server, a.mcp, a.titles = spec.Name, c, titles
	a.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return acp.NewSessionResponse{SessionId: "min_1"}, nil
}

// Prompt runs "/call <tool> <json-arguments>".
func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	var text string
	for _, b := range p.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), "/call ")
	if !ok {
		return acp.PromptResponse{}, acp.NewInvalidParams("minagent only runs /call <tool> <json-arguments>")
	}
	name, rawArgs, _ := strings.Cut(rest, " ")
	var args map[string]any
	if err := json.Unmarshal([]byte(rawArgs), &args); err != nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(fmt.Sprintf("arguments: %v", err))
	}
	a.mu.Lock()
	c, server, titles := a.mcp, a.server, a.titles
	a.mu.Unlock()
	if c == nil {
		return acp.PromptResponse{}, acp.NewInvalidParams("no session")
	}
	tool := strings.TrimPrefix(name, "mcp__"+server+"__")
	title := titles[tool]
	if title == "" {
		title = name
	}
	id := acp.ToolCallId(fmt.Sprintf("call_%d", a.seq.Add(1)))
	send := func(u acp.SessionUpdate) error {
		return a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: u})
	}
	if err := send(acp.StartToolCall(id, title, acp.WithStartKind(acp.ToolKindRead),
		acp.WithStartStatus(acp.ToolCallStatusPending), acp.WithStartRawInput(json.RawMessage(rawArgs)))); err != nil {
		return acp.PromptResponse{}, err
	}
	if err := send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusInProgress))); err != nil {
		return acp.PromptResponse{}, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{ProgressToken: string(id)}
	status := acp.ToolCallStatusCompleted
	var content []acp.ToolCallContent
	out := map[string]any{}
	res, err := c.CallTool(ctx, req)
	switch {
	case err != nil:
		status = acp.ToolCallStatusFailed
		content = append(content, acp.ToolContent(acp.TextBlock(err.Error())))
		out["isError"] = true
	default:
		if res.IsError {
			status = acp.ToolCallStatusFailed
		}
		for _, b := range res.Content {
			if tc, ok := b.(mcp.TextContent); ok {
				content = append(content, acp.ToolContent(acp.TextBlock(tc.Text)))
			}
		}
		out["isError"] = res.IsError
		if res.StructuredContent != nil {
			out["structuredContent"] = res.StructuredContent
		}
	}
	if err := send(acp.UpdateToolCall(id, acp.WithUpdateStatus(status), acp.WithUpdateContent(content), acp.WithUpdateRawOutput(out))); err != nil {
		return acp.PromptResponse{}, err
	}
	if ctx.Err() != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func (a *agent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	a.close()
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *agent) LoadSession(context.Context, acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	return acp.LoadSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionLoad)
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}

// close stops the session's MCP server.
func (a *agent) close() {
	a.mu.Lock()
	c := a.mcp
	a.mcp = nil
	a.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}
