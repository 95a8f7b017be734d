package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

// taskServer is a stdio MCP server (2025-11-25) written by hand that drives
// acpgate's client-side tasks: its tool "ask" sends a task-augmented
// sampling/createMessage or elicitation/create (argument "method") and then
// follows the task as argument "flow" says:
//
//   - "result": reads notifications/tasks/status until the task ends, then
//     asks tasks/result, tasks/get and tasks/list;
//   - "cancel": asks tasks/cancel, tasks/get, tasks/cancel again, tasks/get
//     of an unknown id and tasks/result;
//   - anything else: leaves the task running; "exit" then exits once the
//     call is answered.
//
// The tool's text is a JSON object with every answer (results or errors,
// in order) and the status notifications seen. The test binary runs it when
// MCPCLIENT_TEST_TASK_SERVER=1.
func taskServer() {
	ts := &scriptServer{sc: bufio.NewScanner(os.Stdin), enc: json.NewEncoder(os.Stdout)}
	ts.sc.Buffer(make([]byte, 1<<20), 1<<20)
	for {
		msg, ok := ts.read()
		if !ok {
			return
		}
		if msg.ID == nil || msg.Method == "" {
			continue // notifications, stray answers
		}
		var result any
		switch msg.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": "2025-11-25",
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "tasks", "version": "0.1"},
			}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "ask", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			var p struct {
				Arguments struct{ Method, Flow string } `json:"arguments"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			out, _ := json.Marshal(ts.ask(p.Arguments.Method, p.Arguments.Flow))
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": string(out)}}}
			if p.Arguments.Flow == "exit" {
				_ = ts.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
				return
			}
		case "ping":
			result = map[string]any{}
		default:
			_ = ts.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			continue
		}
		_ = ts.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	}
}

// scriptServer is taskServer's state: one request of its own at a time.
type scriptServer struct {
	sc       *bufio.Scanner
	enc      *json.Encoder
	next     int
	statuses []wireTask // the notifications/tasks/status seen
}

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
}

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval"`
	CreatedAt     string `json:"createdAt"`
}

// answer is one answer to a request of the script.
type answer struct {
	Method string          `json:"method"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *wireError      `json:"error,omitempty"`
}

// scriptResult is the tool's text.
type scriptResult struct {
	Answers  []answer   `json:"answers"`
	Statuses []wireTask `json:"statuses"`
}

// read reads one message, recording task status notifications.
func (ts *scriptServer) read() (wireMsg, bool) {
	for ts.sc.Scan() {
		var m wireMsg
		if json.Unmarshal(ts.sc.Bytes(), &m) != nil {
			continue
		}
		if m.Method == "notifications/tasks/status" {
			var t wireTask
			_ = json.Unmarshal(m.Params, &t)
			ts.statuses = append(ts.statuses, t)
		}
		return m, true
	}
	return wireMsg{}, false
}

// rpc sends a request and waits for its answer.
func (ts *scriptServer) rpc(method string, params any) answer {
	ts.next++
	id := fmt.Sprintf(`"s%d"`, ts.next)
	_ = ts.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	for {
		m, ok := ts.read()
		if !ok {
			return answer{Method: method, Error: &wireError{Message: "connection closed"}}
		}
		if string(m.ID) == id && m.Method == "" {
			return answer{Method: method, Result: m.Result, Error: m.Error}
		}
	}
}

// awaitEnd reads until a terminal status notification of task id.
func (ts *scriptServer) awaitEnd(id string) {
	ended := func() bool {
		for _, t := range ts.statuses {
			if t.TaskID == id && (t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled") {
				return true
			}
		}
		return false
	}
	for !ended() {
		if _, ok := ts.read(); !ok {
			return
		}
	}
}

func (ts *scriptServer) ask(method, flow string) scriptResult {
	var first answer
	task := map[string]any{"ttl": 60000}
	if method == "elicit" {
		first = ts.rpc("elicitation/create", map[string]any{"task": task, "message": "Your name?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
	} else {
		first = ts.rpc("sampling/createMessage", map[string]any{"task": task, "maxTokens": 10,
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}})
	}
	answers := []answer{first}
	var created struct{ Task wireTask }
	_ = json.Unmarshal(first.Result, &created)
	id := map[string]any{"taskId": created.Task.TaskID}
	switch flow {
	case "result":
		ts.awaitEnd(created.Task.TaskID)
		answers = append(answers, ts.rpc("tasks/result", id), ts.rpc("tasks/get", id), ts.rpc("tasks/list", map[string]any{}))
	case "cancel":
		answers = append(answers, ts.rpc("tasks/cancel", id), ts.rpc("tasks/get", id), ts.rpc("tasks/cancel", id),
			ts.rpc("tasks/get", map[string]any{"taskId": "no-such-task"}), ts.rpc("tasks/result", id))
	}
	return scriptResult{Answers: answers, Statuses: ts.statuses}
}

// askTasks calls the task server's "ask" and decodes what it saw.
func askTasks(t *testing.T, m *mcpclient.Manager, method, flow string) scriptResult {
	t.Helper()
	ctx := context.WithValue(context.Background(), ctxKey{}, "turn-1")
	res, err := m.CallTool(ctx, "tasks", "ask", map[string]any{"method": method, "flow": flow})
	if err != nil {
		t.Fatal(err)
	}
	var sr scriptResult
	if err := json.Unmarshal([]byte(text(t, res)), &sr); err != nil {
		t.Fatalf("%v: %s", err, text(t, res))
	}
	return sr
}

func taskServerSpec() mcpclient.ServerSpec {
	return mcpclient.ServerSpec{Name: "tasks", Command: os.Args[0], Env: map[string]string{"MCPCLIENT_TEST_TASK_SERVER": "1"}}
}

func statusesOf(sr scriptResult) []string {
	var out []string
	for _, s := range sr.Statuses {
		out = append(out, s.Status)
	}
	return out
}

// TestClientTaskSampling: a task-augmented sampling/createMessage is
// answered at once with a task (working, with a TTL and a poll interval);
// the Sampler runs attributed to the call with its values; the server is
// told "completed" and tasks/result returns the Sampler's answer with the
// related-task _meta; tasks/get and tasks/list show the completed task.
func TestClientTaskSampling(t *testing.T) {
	t.Parallel()
	h := &handlers{SampleFunc: func(ctx context.Context, r mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
		if ctx.Value(ctxKey{}) != "turn-1" || r.Origin != (mcpclient.Origin{Server: "tasks", Tool: "ask"}) {
			t.Errorf("the handler runs without the call's values or origin: %+v", r.Origin)
		}
		return mcpclient.SamplingResult{Model: "m1", Content: []mcpclient.SamplingContent{{Type: mcpclient.SamplingText, Text: "hello from the model"}}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Sampler = h
	m := start(t, opts, taskServerSpec())
	sr := askTasks(t, m, "sample", "result")
	if len(sr.Answers) != 4 {
		t.Fatalf("answers %+v", sr.Answers)
	}
	var created struct{ Task wireTask }
	if err := json.Unmarshal(sr.Answers[0].Result, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != "working" ||
		created.Task.TTL == nil || *created.Task.TTL != 60000 || created.Task.PollInterval == nil || created.Task.CreatedAt == "" {
		t.Fatalf("CreateTaskResult %s %+v", sr.Answers[0].Result, sr.Answers[0].Error)
	}
	var result struct {
		Model   string
		Content struct{ Text string }
		Meta    map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(sr.Answers[1].Result, &result); err != nil || result.Content.Text != "hello from the model" || result.Model != "m1" ||
		result.Meta["io.modelcontextprotocol/related-task"].TaskID != created.Task.TaskID {
		t.Errorf("tasks/result %s %+v", sr.Answers[1].Result, sr.Answers[1].Error)
	}
	var got wireTask
	if err := json.Unmarshal(sr.Answers[2].Result, &got); err != nil || got.Status != "completed" || got.TaskID != created.Task.TaskID {
		t.Errorf("tasks/get %s", sr.Answers[2].Result)
	}
	var list struct{ Tasks []wireTask }
	if err := json.Unmarshal(sr.Answers[3].Result, &list); err != nil || len(list.Tasks) != 1 || list.Tasks[0].Status != "completed" {
		t.Errorf("tasks/list %s", sr.Answers[3].Result)
	}
	if s := statusesOf(sr); len(s) != 1 || s[0] != "completed" {
		t.Errorf("status notifications %v, want [completed]", s)
	}
}

// TestClientTaskElicitation: an elicitation's task is input_required while
// the user is asked, then completed with the answer.
func TestClientTaskElicitation(t *testing.T) {
	t.Parallel()
	h := &handlers{ElicitFunc: func(ctx context.Context, r mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	m := start(t, opts, taskServerSpec())
	sr := askTasks(t, m, "elicit", "result")
	if s := statusesOf(sr); len(s) != 2 || s[0] != "input_required" || s[1] != "completed" {
		t.Errorf("status notifications %v, want [input_required completed]", s)
	}
	var result struct {
		Action  string
		Content map[string]string
	}
	if err := json.Unmarshal(sr.Answers[1].Result, &result); err != nil || result.Action != "accept" || result.Content["name"] != "Ada" {
		t.Errorf("tasks/result %s %+v", sr.Answers[1].Result, sr.Answers[1].Error)
	}
}

// TestClientTaskCancel: tasks/cancel from the server cancels the running
// handler (its context ends, and it returns); the task is cancelled;
// cancelling it again, or asking for an unknown task, is invalid params
// (-32602); its tasks/result is the cancellation error.
func TestClientTaskCancel(t *testing.T) {
	t.Parallel()
	stopped := make(chan struct{})
	h := &handlers{SampleFunc: func(ctx context.Context, _ mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
		defer close(stopped)
		<-ctx.Done()
		return mcpclient.SamplingResult{}, ctx.Err()
	}}
	opts, _ := fastOpts(t)
	opts.Sampler = h
	m := start(t, opts, taskServerSpec())
	sr := askTasks(t, m, "sample", "cancel")
	await(t, stopped, "end of the cancelled handler")
	if len(sr.Answers) != 6 {
		t.Fatalf("answers %+v", sr.Answers)
	}
	var cancelled, got wireTask
	if err := json.Unmarshal(sr.Answers[1].Result, &cancelled); err != nil || cancelled.Status != "cancelled" {
		t.Errorf("tasks/cancel %s %+v", sr.Answers[1].Result, sr.Answers[1].Error)
	}
	if err := json.Unmarshal(sr.Answers[2].Result, &got); err != nil || got.Status != "cancelled" {
		t.Errorf("tasks/get after cancel %s", sr.Answers[2].Result)
	}
	for i, want := range map[int]int{3: -32602, 4: -32602, 5: -32800} {
		if e := sr.Answers[i].Error; e == nil || e.Code != want {
			t.Errorf("%s: %+v, want error %d", sr.Answers[i].Method, e, want)
		}
	}
	if s := statusesOf(sr); len(s) != 1 || s[0] != "cancelled" {
		t.Errorf("status notifications %v, want [cancelled]", s)
	}
}

// TestClientTasksEndWithTheConnection: a task outlives the call it came
// with, but not the connection: when the server exits (and is restarted)
// its task's handler ends; so do those of a closed Manager, before Close
// returns.
func TestClientTasksEndWithTheConnection(t *testing.T) {
	t.Parallel()
	starts := make(chan chan struct{}, 2) // each handler's end, when it starts
	h := &handlers{SampleFunc: func(ctx context.Context, _ mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
		e := make(chan struct{})
		starts <- e
		<-ctx.Done()
		close(e)
		return mcpclient.SamplingResult{}, ctx.Err()
	}}
	opts, _ := fastOpts(t)
	opts.Sampler = h
	events := newEventLog()
	opts.OnEvent = events.add
	m := start(t, opts, taskServerSpec())
	askTasks(t, m, "sample", "exit")
	first := await(t, starts, "start of the handler")
	await(t, first, "end of the handler of the exited server's task")

	events.wait(t, "restart", func(mcpclient.Event) bool {
		st, _ := m.Status("tasks")
		return st.State == mcpclient.StateReady && st.Restarts > 0
	})
	askTasks(t, m, "sample", "leave")
	second := await(t, starts, "start of the second handler")
	select {
	case <-second:
		t.Fatal("the task ended with the call")
	default:
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
	default:
		t.Fatal("the task's handler outlived the connection")
	}
}

// TestReferenceServerAsyncRequests: the reference server shows its async
// tools to a client that declares task-augmented sampling and elicitation,
// and they complete through acpgate's tasks (the server polls every 1 s).
func TestReferenceServerAsyncRequests(t *testing.T) {
	t.Parallel()
	needEverything(t)
	h := &handlers{
		SampleFunc: func(_ context.Context, r mcpclient.SamplingRequest) (mcpclient.SamplingResult, error) {
			return mcpclient.SamplingResult{Model: "fake", StopReason: "endTurn",
				Content: []mcpclient.SamplingContent{{Type: mcpclient.SamplingText, Text: "sampled in the background"}}}, nil
		},
		ElicitFunc: func(_ context.Context, r mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
			return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"name": "Ada", "favoriteColor": "Blue"}}, nil
		},
	}
	opts, _ := fastOpts(t)
	opts.Sampler, opts.Elicitor = h, h
	m := start(t, opts, mcpclient.ServerSpec{Name: "e", Command: "node", Args: []string{everythingJS, "stdio"}, Cwd: everythingDir})
	mustReady(t, m, "e")
	for _, tool := range []string{"trigger-sampling-request-async", "trigger-elicitation-request-async"} {
		if !hasTool(m, "e", tool) {
			t.Fatalf("%s not listed", tool)
		}
	}
	t.Run("sampling", func(t *testing.T) {
		got := text(t, call(t, m, "e", "trigger-sampling-request-async", map[string]any{"prompt": "hi", "maxTokens": 20}))
		if !strings.HasPrefix(got, "[COMPLETED]") || !strings.Contains(got, "sampled in the background") {
			t.Errorf("trigger-sampling-request-async: %s", got)
		}
	})
	t.Run("elicitation", func(t *testing.T) {
		res := call(t, m, "e", "trigger-elicitation-request-async", map[string]any{})
		var all []string
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				all = append(all, tc.Text)
			}
		}
		got := strings.Join(all, "\n")
		if !strings.HasPrefix(got, "[COMPLETED]") || !strings.Contains(got, "- Name: Ada") || !strings.Contains(got, "- Favorite Color: Blue") {
			t.Errorf("trigger-elicitation-request-async: %s", got)
		}
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) != 1 || h.samples[0].Origin.Tool != "trigger-sampling-request-async" ||
		len(h.elicits) != 1 || h.elicits[0].Origin.Tool != "trigger-elicitation-request-async" {
		t.Errorf("requests not attributed to their calls: %+v %+v", h.samples, h.elicits)
	}
}

// TestNoTaskCapabilityOn20260728: the client tasks capability is declared
// in the 2025-11-25 handshake only; on 2026-07-28 (capabilities in every
// request's _meta) it is not.
func TestNoTaskCapabilityOn20260728(t *testing.T) {
	t.Parallel()
	h := &handlers{}
	rec, lines := recordFile(t)
	opts, _ := fastOpts(t)
	opts.Sampler, opts.Elicitor = h, h
	start(t, opts, stdio("s", "-protocol", "2026-07-28", "-record", rec))
	for _, l := range lines() {
		if rest, ok := strings.CutPrefix(l, "meta capabilities "); ok {
			var caps map[string]json.RawMessage
			if err := json.Unmarshal([]byte(rest), &caps); err != nil {
				t.Fatal(err)
			}
			if _, ok := caps["sampling"]; !ok {
				t.Fatalf("capabilities %s lack sampling", rest)
			}
			if _, ok := caps["tasks"]; ok {
				t.Errorf("tasks declared on 2026-07-28: %s", rest)
			}
			return
		}
	}
	t.Fatalf("no capabilities recorded: %q", lines())
}
