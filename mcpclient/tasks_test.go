package mcpclient_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// progressLog collects a call's progress reports.
type progressLog struct {
	mu   sync.Mutex
	seen []mcpclient.Progress
	task chan string // the task id, once (first report of a task)
}

func newProgressLog() *progressLog { return &progressLog{task: make(chan string, 1)} }

func (l *progressLog) add(p mcpclient.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.TaskID != "" && len(l.seen) == 0 {
		l.task <- p.TaskID
	}
	l.seen = append(l.seen, p)
}

func (l *progressLog) all() []mcpclient.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcpclient.Progress(nil), l.seen...)
}

// A tool that requires tasks runs as one: its result comes through
// tasks/result, and its status and progress notifications are reported
// with the task's id. Over stdio they arrive in order, the last progress
// before the result; over HTTP the progress notifications come on the
// listening stream, which may deliver the last one after the task's
// result, or the first before the task exists (the spec orders no two
// streams), so only the task's id on the reports after it is known is
// required there.
func TestTaskCall(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			opts, _ := fastOpts(t)
			spec := stdio("s")
			if mode == "http" {
				spec = mcpclient.ServerSpec{Name: "s", Transport: mcpclient.TransportHTTP, URL: netServer(t, mode)}
			}
			m := start(t, opts, spec)
			log := newProgressLog()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := m.CallTool(ctx, "s", "task", map[string]any{"steps": 3, "interval_ms": 20}, mcpclient.WithProgress(log.add))
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "task done 3" {
				t.Errorf("result %q", got)
			}
			seen := log.all()
			// Over HTTP a progress notification may also overtake the
			// response that creates the task: it is reported before the
			// task is known, without its id.
			first := slices.IndexFunc(seen, func(p mcpclient.Progress) bool { return p.Status == "working" && p.TaskID != "" })
			if first < 0 || mode == "stdio" && first != 0 {
				t.Fatalf("reports %+v, want the task working first", seen)
			}
			for _, p := range seen[first:] {
				if p.TaskID != seen[first].TaskID {
					t.Errorf("report %+v is not of task %s", p, seen[first].TaskID)
				}
			}
			seen = seen[first:]
			last := seen[len(seen)-1]
			if mode == "stdio" && (last.Progress != 3 || last.Total != 3 || last.Message != "step 3/3") {
				t.Errorf("last report %+v, want step 3/3 of task %s", last, seen[0].TaskID)
			}
		})
	}
}

// Cancelling a task call's context cancels the task (tasks/cancel).
func TestTaskCancel(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	m := start(t, opts, stdio("s", "-record", rec))
	log := newProgressLog()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "s", "task", map[string]any{"steps": 0, "hold": true}, mcpclient.WithProgress(log.add))
		done <- err
	}()
	<-log.task
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled task call: %v", err)
	}
	testbin.WaitFor(t, "tasks/cancel", func() bool { return hasLine(lines(), "tasks/cancel") })
	testbin.WaitFor(t, "the task's end", func() bool { return hasLine(lines(), "cancelled task") })
}

// A task that outlives the call timeout is left running: the call fails
// with a TaskRunningError naming it, and no tasks/cancel is sent.
func TestTaskOutlivesTimeout(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	rec, lines := recordFile(t)
	spec := stdio("s", "-record", rec)
	spec.CallTimeout = 300 * time.Millisecond
	m := start(t, opts, spec)
	log := newProgressLog()
	_, err := m.CallTool(context.Background(), "s", "task", map[string]any{"steps": 0, "hold": true}, mcpclient.WithProgress(log.add))
	var tr *mcpclient.TaskRunningError
	if !errors.As(err, &tr) || !errors.Is(err, mcpclient.ErrTaskRunning) || !errors.Is(err, mcpclient.ErrCallTimeout) {
		t.Fatalf("err %v, want a TaskRunningError", err)
	}
	if tr.TaskID != <-log.task || tr.Status != "working" || !strings.Contains(err.Error(), tr.TaskID) {
		t.Errorf("TaskRunningError %+v", tr)
	}
	// The server still answers; once the manager is closed (it waits for
	// what it sends off the caller's path), no tasks/cancel was sent.
	call(t, m, "s", "echo", map[string]any{"text": "x"})
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if hasLine(lines(), "tasks/cancel") {
		t.Errorf("the task was cancelled:\n%s", strings.Join(lines(), "\n"))
	}
}

// The reference server's simulate-research-query (taskSupport required)
// completes as a task, its stages reported as status messages.
func TestTaskEverything(t *testing.T) {
	t.Parallel()
	needEverything(t)
	opts, _ := fastOpts(t)
	m := start(t, opts, mcpclient.ServerSpec{Name: "e", Command: "node", Args: []string{everythingJS, "stdio"}, Cwd: everythingDir})
	mustReady(t, m, "e")
	log := newProgressLog()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, "e", "simulate-research-query", map[string]any{"topic": "tasks"}, mcpclient.WithProgress(log.add))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !strings.Contains(got, "Research Report: tasks") {
		t.Errorf("result %q", got)
	}
	stages := map[string]bool{}
	for _, p := range log.all() {
		stages[p.StatusMessage] = true
	}
	if !stages["Generating report..."] {
		t.Errorf("status messages %v, want the last stage", stages)
	}
}
