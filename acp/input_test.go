package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// rawAgent is acp.Serve on io.Pipes, driven with raw JSON lines.
type rawAgent struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string // every line the agent writes
}

// serveRaw runs the agent with opts (and a fresh store) until the test
// ends.
func serveRaw(t *testing.T, opts acp.Options) *rawAgent {
	t.Helper()
	p := startAgent(t, opts)
	a := &rawAgent{t: t, in: p.in, lines: make(chan string, 64)}
	go func() {
		defer close(a.lines)
		r := bufio.NewReader(p.out)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			a.lines <- l
		}
	}()
	t.Cleanup(func() {
		go func() {
			for range a.lines { // keep the agent's writes flowing while it shuts down
			}
		}()
		p.stop(t)
	})
	return a
}

// send writes one line.
func (a *rawAgent) send(line string) {
	a.t.Helper()
	if _, err := io.WriteString(a.in, line+"\n"); err != nil {
		a.t.Fatal(err)
	}
}

// rpcReply is a JSON-RPC response as the agent wrote it (testbin's).
type rpcReply = testbin.Reply

// next returns the next response (skipping the agent's notifications and
// requests).
func (a *rawAgent) next() rpcReply {
	a.t.Helper()
	for {
		select {
		case l, ok := <-a.lines:
			if !ok {
				a.t.Fatal("the agent closed its output")
			}
			var m struct {
				Method *string `json:"method"`
				testbin.Reply
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				a.t.Fatalf("agent wrote a line that is not JSON: %q", l)
			}
			if m.Method != nil {
				continue
			}
			m.Raw = strings.TrimSpace(l)
			return m.Reply
		case <-time.After(20 * time.Second): // a hang guard, not a timing assertion
			a.t.Fatal("no answer from the agent")
		}
	}
}

// call sends a line and returns the next response.
func (a *rawAgent) call(line string) rpcReply {
	a.t.Helper()
	a.send(line)
	return a.next()
}

// probe sends session/list with id "probe" and returns its answer: a
// line sent before it that got no answer is followed directly by this.
func (a *rawAgent) probe() rpcReply {
	a.t.Helper()
	r := a.call(`{"jsonrpc":"2.0","id":"probe","method":"session/list","params":{}}`)
	if string(r.ID) != `"probe"` {
		a.t.Fatalf("expected the probe's answer, got %s", r.Raw)
	}
	return r
}

// newSession creates a session with no servers and returns its id.
func (a *rawAgent) newSession(cwd string) string {
	a.t.Helper()
	r := a.call(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":` + mustJSON(cwd) + `,"mcpServers":[]}}`)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.SessionID == "" {
		a.t.Fatalf("session/new: %s", r.Raw)
	}
	return res.SessionID
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestBadInputAnswered sends every kind of bad input: each request gets a
// JSON-RPC error with the right code whose data.path (and message) names
// the offending member, and the agent keeps serving.
func TestBadInputAnswered(t *testing.T) {
	a := serveRaw(t, acp.Options{})
	cwd := mustJSON(t.TempDir())
	sid := mustJSON(a.newSession(t.TempDir()))
	newWith := func(id, servers string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":{"cwd":` + cwd + `,"mcpServers":` + servers + `}}`
	}
	for _, tc := range []struct {
		name, line string
		id         string // the id the answer carries
		code       int
		path       string // want data.path (filter errors); "-" for none
	}{
		{"no method", `{"id":5}`, `5`, -32600, "method"},
		{"no method, jsonrpc", `{"jsonrpc":"2.0","id":"x"}`, `"x"`, -32600, "method"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":6,"method":"initialize","params":{"protocolVersion":1}}`, `6`, -32600, "jsonrpc"},
		{"jsonrpc missing", `{"id":7,"method":"initialize","params":{"protocolVersion":1}}`, `7`, -32600, "jsonrpc"},
		{"jsonrpc number", `{"jsonrpc":2,"id":8,"method":"initialize","params":{"protocolVersion":1}}`, `8`, -32600, "jsonrpc"},
		{"method number", `{"jsonrpc":"2.0","id":9,"method":5,"params":{}}`, `9`, -32600, "method"},
		{"method empty", `{"jsonrpc":"2.0","id":10,"method":""}`, `10`, -32600, "method"},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"session/list","params":{}}`, `null`, -32600, "id"},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"session/list","params":{}}`, `null`, -32600, "id"},
		{"batch", `[{"jsonrpc":"2.0","id":11,"method":"session/list","params":{}}]`, `null`, -32600, ""},
		{"number", `5`, `null`, -32600, ""},
		{"invalid, no id", `{"jsonrpc":"2.0","method":7}`, `null`, -32600, "method"},
		{"args string", newWith(`20`, `[{"name":"a","command":"x","args":"-v"}]`), `20`, -32602, "mcpServers[0].args"},
		{"args element", newWith(`21`, `[{"name":"a","command":"x","args":["-v",3]}]`), `21`, -32602, "mcpServers[0].args[1]"},
		{"env string", newWith(`22`, `[{"name":"a","command":"x","env":"A=1"}]`), `22`, -32602, "mcpServers[0].env"},
		{"env value", newWith(`23`, `[{"name":"a","command":"x","env":{"A":1}}]`), `23`, -32602, "mcpServers[0].env.A"},
		{"env pair value", newWith(`24`, `[{"name":"a","command":"x","env":[{"name":"A","value":true}]}]`), `24`, -32602, "mcpServers[0].env[0].value"},
		{"env pair name", newWith(`25`, `[{"name":"a","command":"x","env":[{"value":"v"}]}]`), `25`, -32602, "mcpServers[0].env[0].name"},
		{"headers string", newWith(`26`, `[{"type":"http","name":"h","url":"http://127.0.0.1:1/","headers":"Authorization: x"}]`), `26`, -32602, "mcpServers[0].headers"},
		{"header value", newWith(`27`, `[{"name":"h","url":"http://127.0.0.1:1/","headers":{"X-Key":["v"]}}]`), `27`, -32602, "mcpServers[0].headers.X-Key"},
		{"type grpc", newWith(`28`, `[{"type":"grpc","name":"g","url":"http://127.0.0.1:1/"}]`), `28`, -32602, "mcpServers[0].type"},
		{"type number", newWith(`29`, `[{"type":1,"name":"g","url":"http://127.0.0.1:1/"}]`), `29`, -32602, "mcpServers[0].type"},
		{"servers object", newWith(`30`, `{"a":{"command":"x"}}`), `30`, -32602, "mcpServers"},
		{"entry string", newWith(`31`, `[{"name":"a","command":"x"},"b"]`), `31`, -32602, "mcpServers[1]"},
		{"name missing", newWith(`32`, `[{"command":"x"}]`), `32`, -32602, "mcpServers[0].name"},
		{"name duplicate", newWith(`33`, `[{"name":"a","command":"x"},{"name":"a","url":"http://127.0.0.1/"}]`), `33`, -32602, "mcpServers[1].name"},
		{"no command, no url", newWith(`34`, `[{"name":"n"}]`), `34`, -32602, "mcpServers[0]"},
		{"stdio without command", newWith(`35`, `[{"type":"stdio","name":"n","url":"http://127.0.0.1/"}]`), `35`, -32602, "mcpServers[0].command"},
		{"http without url", newWith(`36`, `[{"type":"http","name":"n","command":"x"}]`), `36`, -32602, "mcpServers[0].url"},
		{"load args", `{"jsonrpc":"2.0","id":37,"method":"session/load","params":{"sessionId":"sess_x","cwd":` + cwd + `,"mcpServers":[{"name":"a","command":"x","args":"y"}]}}`, `37`, -32602, "mcpServers[0].args"},
		{"resume env", `{"jsonrpc":"2.0","id":38,"method":"session/resume","params":{"sessionId":"sess_x","cwd":` + cwd + `,"mcpServers":[{"name":"a","command":"x","env":"y"}]}}`, `38`, -32602, "mcpServers[0].env"},
		{"authenticate", `{"jsonrpc":"2.0","id":40,"method":"authenticate","params":{"methodId":"anything"}}`, `40`, -32602, "-"},
		{"load traversal", `{"jsonrpc":"2.0","id":41,"method":"session/load","params":{"sessionId":"../../etc","cwd":` + cwd + `,"mcpServers":[]}}`, `41`, -32602, "-"},
		{"resume traversal", `{"jsonrpc":"2.0","id":42,"method":"session/resume","params":{"sessionId":"../x","cwd":` + cwd + `,"mcpServers":[]}}`, `42`, -32602, "-"},
		{"prompt block type", `{"jsonrpc":"2.0","id":46,"method":"session/prompt","params":{"sessionId":` + sid + `,"prompt":[{"type":"text","text":"hi"},{"type":"video","uri":"x"}]}}`, `46`, -32602, "prompt[1].type"},
		{"prompt block string", `{"jsonrpc":"2.0","id":47,"method":"session/prompt","params":{"sessionId":` + sid + `,"prompt":["hi"]}}`, `47`, -32602, "prompt[0]"},
		// Member names are case-sensitive (the SDK's decoding is not).
		{"McpServers", `{"jsonrpc":"2.0","id":44,"method":"session/new","params":{"cwd":` + cwd + `,"McpServers":[{"name":"s","command":"/nonexistent","args":[],"env":[]}]}}`, `44`, -32602, "-"},
		{"Params", `{"jsonrpc":"2.0","id":45,"method":"session/new","Params":{"cwd":` + cwd + `,"mcpServers":[]}}`, `45`, -32602, "-"},
		{"list cursor", `{"jsonrpc":"2.0","id":43,"method":"session/list","params":{"cursor":"not-a-cursor"}}`, `43`, -32602, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a.t = t
			r := a.call(tc.line)
			if r.Error == nil || string(r.ID) != tc.id || r.Error.Code != tc.code {
				t.Fatalf("%s\n -> %s\nwant id %s, code %d", tc.line, r.Raw, tc.id, tc.code)
			}
			if tc.path != "-" && (r.Error.Data.Path != tc.path || !strings.Contains(r.Error.Message, tc.path)) {
				t.Errorf("%s\n -> %s\nwant data.path %q, named in the message", tc.line, r.Raw, tc.path)
			}
		})
	}
	a.t = t
	a.probe() // still serving
}

// TestNoReplyToNotifications: a notification is never answered, even a
// bad one, and a request sent without an id is not run.
func TestNoReplyToNotifications(t *testing.T) {
	a := serveRaw(t, acp.Options{})
	cwd := mustJSON(t.TempDir())
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}`,
		`{"jsonrpc":"2.0","method":"session/new","params":{"cwd":` + cwd + `,"mcpServers":[]}}`,
		`{"jsonrpc":"2.0","method":"session/new","params":{"cwd":` + cwd + `,"mcpServers":[{"name":"a","command":"x","args":"y"}]}}`,
		`{"jsonrpc":"2.0","method":"_acpgate/unknown","params":{}}`,
	} {
		a.send(line)
	}
	r := a.probe()
	var res struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Sessions) != 0 {
		t.Errorf("a session/new without an id created a session: %s", r.Raw)
	}
}

// TestValidShapesStillWork: the liberal mcpServers shapes real clients
// send are accepted (their servers fail to start: the command does not
// exist, which is a status, not an error).
func TestValidShapesStillWork(t *testing.T) {
	a := serveRaw(t, acp.Options{StartupBudget: time.Second})
	r := a.call(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":` + mustJSON(t.TempDir()) + `,"mcpServers":[` +
		`{"name":"a","command":"/nonexistent/a"},` +
		`{"type":"stdio","name":"b","command":"/nonexistent/b","args":null,"env":null},` +
		`{"name":"c","command":"/nonexistent/c","args":[],"env":{"Z":"2","A":"1"}},` +
		`{"name":"d","command":"/nonexistent/d","env":[{"name":"A","value":"1"}]},` +
		`{"type":"http","name":"e","url":"http://127.0.0.1:1/mcp"},` +
		`{"name":"f","url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer x"}},` +
		`{"type":"sse","name":"g","url":"http://127.0.0.1:1/sse","headers":[]},` +
		`{"type":"streamable-http","name":"h","url":"http://127.0.0.1:1/mcp"},` +
		`{"type":"streamableHttp","name":"i","url":"http://127.0.0.1:1/mcp"}]}}`)
	if r.Error != nil {
		t.Fatalf("valid shapes rejected: %s", r.Raw)
	}
	for _, want := range []string{`"name":"a"`, `"name":"d"`, `"name":"g"`, `"transport":"sse"`, `"name":"i"`} {
		if !strings.Contains(r.Raw, want) {
			t.Errorf("result lacks %s: %s", want, r.Raw)
		}
	}
}

// blockingModel is a model whose every answer waits for release (or its
// context's end); started receives a value as each call begins.
type blockingModel struct {
	started chan struct{}
	release chan struct{}
}

func (m *blockingModel) Complete(ctx context.Context, _ gateway.ModelRequest, _ func(gateway.Delta)) (gateway.ModelResponse, error) {
	m.started <- struct{}{}
	select {
	case <-m.release:
	case <-ctx.Done():
		return gateway.ModelResponse{}, ctx.Err()
	}
	return gateway.ModelResponse{Message: gateway.Message{Role: gateway.RoleAssistant, Content: []gateway.Content{{Type: gateway.ContentText, Text: "done"}}}, Stop: gateway.StopEndTurn}, nil
}

// TestPromptWhileRunningQueues: a prompt sent while another runs waits
// for it (the running one is not cancelled), then runs; no error, and
// never -32000 ("authentication required" in ACP).
func TestPromptWhileRunningQueues(t *testing.T) {
	m := &blockingModel{started: make(chan struct{}, 2), release: make(chan struct{})}
	a := serveRaw(t, acp.Options{Provider: m})
	sid := mustJSON(a.newSession(t.TempDir()))
	a.send(`{"jsonrpc":"2.0","id":"first","method":"session/prompt","params":{"sessionId":` + sid + `,"prompt":[{"type":"text","text":"hi"}]}}`)
	<-m.started
	a.send(`{"jsonrpc":"2.0","id":"second","method":"session/prompt","params":{"sessionId":` + sid + `,"prompt":[{"type":"text","text":"again"}]}}`)
	close(m.release)
	if r := a.next(); string(r.ID) != `"first"` || r.Error != nil || !strings.Contains(r.Raw, `"stopReason":"end_turn"`) {
		t.Fatalf("first prompt: %s, want end_turn", r.Raw)
	}
	<-m.started // the second turn reached the model
	if r := a.next(); string(r.ID) != `"second"` || r.Error != nil || !strings.Contains(r.Raw, `"stopReason":"end_turn"`) {
		t.Errorf("second prompt: %s", r.Raw)
	}
}

// TestParamTypesNamed: a member of the wrong JSON type, or params that are
// not an object, are answered with -32602 whose data.path names the
// member and whose message says what it must be, never the Go decoder's
// text.
func TestParamTypesNamed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, acp.Options{}, nil)
	sid := h.newSession().SessionId
	for _, tc := range []struct {
		method string
		params any
		path   string
		says   string
	}{
		{"session/prompt", map[string]any{"sessionId": 7, "prompt": []any{}}, "sessionId", "sessionId: must be a string, got number"},
		{"session/new", []any{1}, "params", "params: must be an object, got array"},
		{"session/load", map[string]any{"sessionId": true, "cwd": "/", "mcpServers": []any{}}, "sessionId", "must be a string, got bool"},
		{"session/set_mode", map[string]any{"sessionId": sid, "modeId": 3}, "modeId", "must be a string, got number"},
		{"providers/set", map[string]any{"providerId": "main", "apiType": "openai", "baseUrl": 5}, "baseUrl", "baseUrl: must be a string, got number"},
		{"mcp/message", map[string]any{"serverId": "s", "requestId": 5, "method": "ping"}, "requestId", "requestId: must be a string, got number"},
	} {
		r := h.call(tc.method, tc.params)
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Data.Path != tc.path || !strings.Contains(r.Error.Message, tc.says) || strings.Contains(r.Raw, "Go struct") || strings.Contains(r.Raw, "json:") {
			t.Errorf("%s %s: %s", tc.method, mustJSON(tc.params), r.Raw)
		}
	}
}
