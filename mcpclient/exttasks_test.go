package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
	"github.com/mark3labs/mcp-go/mcp"
)

// extServer is the test server with the 2026-07-28 Tasks extension.
func extServer(args ...string) mcpclient.ServerSpec {
	return stdio("s", append([]string{"-protocol", "2026-07-28", "-ext-tasks"}, args...)...)
}

// A tool answered with a CreateTaskResult is followed to its result: each
// poll's status message is reported, in order, with the task's id.
func TestExtTaskCompletes(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, extServer())
	log := newProgressLog()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, "s", "ext_job", map[string]any{"steps": 3}, mcpclient.WithProgress(log.add))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != "job done 3" {
		t.Errorf("result %q", got)
	}
	var msgs []string
	for _, p := range log.all() {
		if p.TaskID != "ext-1" {
			t.Errorf("report %+v, want task ext-1", p)
		}
		msgs = append(msgs, p.Status+": "+p.StatusMessage)
	}
	want := []string{"working: started", "working: step 1", "working: step 2", "working: step 3", "completed: done"}
	if fmt.Sprint(msgs) != fmt.Sprint(want) {
		t.Errorf("reports %q, want %q", msgs, want)
	}
}

// extServerOver is extServer over transport tr: stdio, or streamable HTTP
// (the server runs for the test).
func extServerOver(t *testing.T, tr string, args ...string) mcpclient.ServerSpec {
	if tr == "stdio" {
		return extServer(args...)
	}
	url := netServer(t, "http", append([]string{"-protocol", "2026-07-28", "-ext-tasks"}, args...)...)
	return mcpclient.ServerSpec{Name: "s", Transport: mcpclient.TransportHTTP, URL: url}
}

// An input_required task's elicitation goes to the Elicitor, attributed to
// the call, once (the server shows the key again after the tasks/update),
// and its answer reaches the result; over stdio and streamable HTTP.
func TestExtTaskInput(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) { testExtTaskInput(t, tr) })
	}
}

func testExtTaskInput(t *testing.T, tr string) {
	h := &handlers{ElicitFunc: func(context.Context, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
	}}
	opts, _ := fastOpts(t)
	opts.Elicitor = h
	rec, lines := recordFile(t)
	m := start(t, opts, extServerOver(t, tr, "-record", rec))
	log := newProgressLog()
	res := callWith(t, m, "ext_job", map[string]any{"steps": 1, "ask": true}, mcpclient.WithProgress(log.add))
	got, ok := strings.CutPrefix(text(t, res), "job done 1 answer ")
	var answer mcpclient.ElicitResult
	if !ok || json.Unmarshal([]byte(got), &answer) != nil || answer.Action != mcpclient.ElicitAccept || answer.Content["name"] != "Ann" {
		t.Errorf("result %q", text(t, res))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.elicits) != 1 || h.elicits[0].Tool != "ext_job" || h.elicits[0].Server != "s" || h.elicits[0].Message != "Your name?" {
		t.Errorf("elicitations %+v, want one for ext_job", h.elicits)
	}
	if n := testbin.Count(lines(), "ext tasks/update [answer-ext-1]"); n != 1 {
		t.Errorf("%d tasks/update, want 1:\n%s", n, strings.Join(lines(), "\n"))
	}
	if tr == "http" && !hasLine(lines(), "http Mcp-Name ext-1") {
		t.Errorf("tasks/* carried no Mcp-Name header naming the task:\n%s", strings.Join(lines(), "\n"))
	}
	sawInput := false
	for _, p := range log.all() {
		sawInput = sawInput || p.Status == "input_required"
	}
	if !sawInput {
		t.Errorf("reports %+v, want input_required among them", log.all())
	}
}

// A failed task fails the call with its JSON-RPC error.
func TestExtTaskFailed(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, extServer())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := m.CallTool(ctx, "s", "ext_job", map[string]any{"fail": true})
	var re *mcpclient.RequestError
	if !errors.Is(err, mcpclient.ErrTaskFailed) || !errors.As(err, &re) || re.Code != -32603 || re.Message != "job failed" {
		t.Fatalf("err %v, want ErrTaskFailed with the RequestError -32603", err)
	}
}

// Cancelling the call's context cancels the task with tasks/cancel, and
// sends no notifications/cancelled.
func TestExtTaskCancel(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	m := start(t, opts, extServer("-record", rec))
	log := newProgressLog()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "s", "ext_job", map[string]any{"steps": 1000000}, mcpclient.WithProgress(log.add))
		done <- err
	}()
	select {
	case <-log.task:
	case err := <-done:
		t.Fatalf("the call ended before its task was reported: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled task call: %v", err)
	}
	testbin.WaitFor(t, "tasks/cancel", func() bool { return hasLine(lines(), "ext tasks/cancel ext-1") })
	// Not closed first: closing would cut the tasks/cancel's own answer
	// short, which mcp-go follows with a notice about that request.
	call(t, m, "s", "echo", map[string]any{"text": "x"})
	if hasLine(lines(), "notice cancelled") {
		t.Errorf("a request was cancelled with notifications/cancelled:\n%s", strings.Join(lines(), "\n"))
	}
}

// A CreateTaskResult whose task has already completed carries no result:
// one tasks/get fetches it.
func TestExtTaskCompletedAtOnce(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, extServer())
	if got := text(t, call(t, m, "s", "ext_job", map[string]any{"steps": 2, "instant": true})); got != "job done 2" {
		t.Errorf("result %q", got)
	}
}

// A task that outlives the call timeout without news is left running.
func TestExtTaskOutlivesTimeout(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	opts.Elicitor = &handlers{ElicitFunc: func(ctx context.Context, _ mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
		<-ctx.Done() // the user never answers
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}, nil
	}}
	spec := extServer()
	// Long enough for the input_required status to arrive first on a
	// loaded machine; the call then waits this out without news.
	spec.CallTimeout = time.Second
	m := start(t, opts, spec)
	_, err := m.CallTool(context.Background(), "s", "ext_job", map[string]any{"ask": true})
	var tr *mcpclient.TaskRunningError
	if !errors.As(err, &tr) || tr.TaskID != "ext-1" || tr.Status != "input_required" {
		t.Fatalf("err %v, want a TaskRunningError for ext-1 waiting for input", err)
	}
}

// A server that needs a capability acpgate does not declare (here
// elicitation, without an Elicitor) refuses with -32021, which names it.
func TestExtTaskMissingCapability(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, extServer())
	_, err := m.CallTool(context.Background(), "s", "ext_job", map[string]any{"ask": true})
	var mc *mcpclient.MissingCapabilityError
	if !errors.As(err, &mc) || !errors.Is(err, mcpclient.ErrMissingCapability) || mc.Capability != "elicitation" || mc.Request != "tools/call ext_job" {
		t.Fatalf("err %v, want a MissingCapabilityError naming elicitation", err)
	}
}

// A CreateTaskResult answering a request other than tools/call fails it
// as an invalid response, and the server stays ready.
func TestExtTaskInvalidAnswer(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m := start(t, opts, extServer())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.ReadResource(ctx, "s", "test://ext-task"); !errors.Is(err, mcpclient.ErrInvalidResponse) {
		t.Fatalf("err %v, want ErrInvalidResponse", err)
	}
	mustReady(t, m, "s")
	if got := text(t, call(t, m, "s", "echo", map[string]any{"text": "hi"})); got != "hi" {
		t.Errorf("echo %q", got)
	}
}

// A connection on 2025-11-25 does not declare the extension in initialize
// (it is of 2026-07-28 requests only).
func TestExtTasksNotDeclaredOnLegacy(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	m := start(t, opts, stdio("s", "-record", rec))
	if st, _ := m.Status("s"); st.ProtocolVersion != "2025-11-25" {
		t.Fatalf("protocol %q", st.ProtocolVersion)
	}
	for _, l := range lines() {
		if caps, ok := strings.CutPrefix(l, "capabilities "); ok {
			var c map[string]json.RawMessage
			if err := json.Unmarshal([]byte(caps), &c); err != nil {
				t.Fatal(err)
			}
			// The skills extension is of both revisions (skills.go); the
			// Tasks extension of 2026-07-28 only.
			if string(c["extensions"]) != `{"io.modelcontextprotocol/skills":{}}` {
				t.Errorf("initialize declared %s", caps)
			}
			return
		}
	}
	t.Fatalf("no capabilities recorded:\n%s", strings.Join(lines(), "\n"))
}

// callWith calls tool on server "s" with opts within 20 seconds.
func callWith(t *testing.T, m *mcpclient.Manager, tool string, args map[string]any, opts ...mcpclient.CallOption) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, "s", tool, args, opts...)
	if err != nil {
		t.Fatalf("CallTool %s: %v", tool, err)
	}
	return res
}
