package mcpclient

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// taskClock is an injected clock for the task table, safe for concurrent use.
type taskClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *taskClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *taskClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestTable(t *testing.T) (*clientTasks, *taskClock) {
	t.Helper()
	clock := &taskClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	ct := newClientTasks(context.Background(), slog.New(slog.DiscardHandler))
	ct.now = clock.now
	t.Cleanup(ct.close)
	return ct, clock
}

// answers returns a runner that answers res, and a runner that blocks until
// its context ends (closing started first and ended after).
func answers(res any) taskRunner {
	return func(context.Context, func(mcp.TaskStatus, string)) (any, error) { return res, nil }
}

func blocks(started, ended chan struct{}) taskRunner {
	return func(ctx context.Context, _ func(mcp.TaskStatus, string)) (any, error) {
		close(started)
		<-ctx.Done()
		close(ended)
		return nil, ctx.Err()
	}
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
	}
}

func TestClientTasksUnknownID(t *testing.T) {
	t.Parallel()
	ct, _ := newTestTable(t)
	for _, method := range []mcp.MCPMethod{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel} {
		_, ok, err := ct.serve(context.Background(), string(method), map[string]any{"taskId": "nope"})
		var re *RequestError
		if !ok || !errors.Is(err, errUnknownTask) || !errors.As(taskRequestErr(err), &re) || re.Code != mcp.INVALID_PARAMS {
			t.Errorf("%s of an unknown task: %v (handled %v)", method, err, ok)
		}
	}
}

// TestClientTasksTTL: a task is kept for its TTL (the server's, capped at
// maxClientTaskTTL), then forgotten; a still-running one is cancelled.
func TestClientTasksTTL(t *testing.T) {
	t.Parallel()
	ct, clock := newTestTable(t)
	ms := int64(1000)
	done, err := ct.create(context.Background(), &ms, answers("ok"))
	if err != nil || *done.TTL != 1000 || done.Status != mcp.TaskStatusWorking {
		t.Fatalf("create: %+v %v", done, err)
	}
	if _, err := ct.result(context.Background(), done.TaskId); err != nil {
		t.Fatal(err)
	}
	huge := int64(time.Hour / time.Millisecond)
	started, ended := make(chan struct{}), make(chan struct{})
	running, err := ct.create(context.Background(), &huge, blocks(started, ended))
	if err != nil || *running.TTL != maxClientTaskTTL.Milliseconds() {
		t.Fatalf("create: %+v %v (want the TTL capped)", running, err)
	}
	wait(t, started, "start")

	clock.advance(999 * time.Millisecond)
	if got, err := ct.get(done.TaskId); err != nil || got.Status != mcp.TaskStatusCompleted {
		t.Fatalf("within its TTL: %+v %v", got, err)
	}
	clock.advance(time.Millisecond)
	if _, err := ct.get(done.TaskId); !errors.Is(err, errUnknownTask) {
		t.Errorf("after its TTL: %v, want forgotten", err)
	}
	clock.advance(maxClientTaskTTL)
	if _, err := ct.get(running.TaskId); !errors.Is(err, errUnknownTask) {
		t.Errorf("running task after its TTL: %v, want forgotten", err)
	}
	wait(t, ended, "end of the expired task's handler")
}

// TestClientTasksCap: at most maxClientTasks tasks; a finished one is
// forgotten to make room, running ones are not.
func TestClientTasksCap(t *testing.T) {
	t.Parallel()
	ct, _ := newTestTable(t)
	first, err := ct.create(context.Background(), nil, answers("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ct.result(context.Background(), first.TaskId); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < maxClientTasks; i++ {
		if _, err := ct.create(context.Background(), nil, blocks(make(chan struct{}), make(chan struct{}))); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	if _, err := ct.create(context.Background(), nil, blocks(make(chan struct{}), make(chan struct{}))); err != nil {
		t.Fatalf("a finished task should make room: %v", err)
	}
	if _, err := ct.get(first.TaskId); !errors.Is(err, errUnknownTask) {
		t.Errorf("the finished task is still kept: %v", err)
	}
	if _, err := ct.create(context.Background(), nil, answers("ok")); !errors.Is(err, errTooManyTasks) {
		t.Errorf("task %d: %v, want errTooManyTasks", maxClientTasks+1, err)
	}
	if n := len(ct.list()); n != maxClientTasks {
		t.Errorf("%d tasks listed", n)
	}
}

// TestClientTasksCancel: tasks/cancel ends the handler; cancelling a task
// that has ended is an error (invalid params), and changes nothing.
func TestClientTasksCancel(t *testing.T) {
	t.Parallel()
	ct, _ := newTestTable(t)
	started, ended := make(chan struct{}), make(chan struct{})
	task, err := ct.create(context.Background(), nil, blocks(started, ended))
	if err != nil {
		t.Fatal(err)
	}
	wait(t, started, "start")
	got, err := ct.cancelTask(task.TaskId)
	if err != nil || got.Status != mcp.TaskStatusCancelled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	wait(t, ended, "end of the cancelled handler")
	if _, err := ct.result(context.Background(), task.TaskId); !errors.Is(err, context.Canceled) {
		t.Errorf("result of a cancelled task: %v", err)
	}
	_, err = ct.cancelTask(task.TaskId)
	var re *RequestError
	if !errors.Is(err, errTaskEnded) || !errors.As(taskRequestErr(err), &re) || re.Code != mcp.INVALID_PARAMS {
		t.Errorf("cancel of a cancelled task: %v", err)
	}
	done, _ := ct.create(context.Background(), nil, answers("ok"))
	if _, err := ct.result(context.Background(), done.TaskId); err != nil {
		t.Fatal(err)
	}
	if _, err := ct.cancelTask(done.TaskId); !errors.Is(err, errTaskEnded) {
		t.Errorf("cancel of a completed task: %v", err)
	}
	if got, _ := ct.get(done.TaskId); got.Status != mcp.TaskStatusCompleted {
		t.Errorf("the completed task became %s", got.Status)
	}
}

// TestClientTasksClose: closing the table (the connection) ends every
// handler before it returns, and refuses new tasks.
func TestClientTasksClose(t *testing.T) {
	t.Parallel()
	ct := newClientTasks(context.Background(), slog.New(slog.DiscardHandler))
	var endeds []chan struct{}
	for range 3 {
		started, ended := make(chan struct{}), make(chan struct{})
		if _, err := ct.create(context.Background(), nil, blocks(started, ended)); err != nil {
			t.Fatal(err)
		}
		wait(t, started, "start")
		endeds = append(endeds, ended)
	}
	ct.close()
	for i, ended := range endeds {
		select {
		case <-ended:
		default:
			t.Errorf("handler %d still running after close", i)
		}
	}
	if _, err := ct.create(context.Background(), nil, answers("ok")); !errors.Is(err, errTasksClosed) {
		t.Errorf("create after close: %v", err)
	}
}

// TestClientTasksResultOfExpired: a tasks/result waiting for a task that
// is forgotten when its TTL passes (while still running) ends with
// errUnknownTask instead of waiting for the connection to close.
func TestClientTasksResultOfExpired(t *testing.T) {
	t.Parallel()
	ct, clock := newTestTable(t)
	ms := int64(1000)
	started, ended := make(chan struct{}), make(chan struct{})
	task, err := ct.create(context.Background(), &ms, blocks(started, ended))
	if err != nil {
		t.Fatal(err)
	}
	wait(t, started, "start")
	got := make(chan error, 1)
	go func() {
		_, err := ct.result(context.Background(), task.TaskId)
		got <- err
	}()
	clock.advance(time.Second)
	ct.list() // a poll of the server sweeps
	select {
	case err := <-got:
		if !errors.Is(err, errUnknownTask) {
			t.Errorf("result: %v, want errUnknownTask", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tasks/result still waits for a forgotten task")
	}
	wait(t, ended, "end of the expired task's handler")
}
