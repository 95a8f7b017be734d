package mcpclient

import (
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// statusLog records the status messages a call's onProgress receives.
type statusLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *statusLog) add(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, msg)
}

func (l *statusLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// taskCall is a call following task "t", reporting to onProgress.
func taskCall(onProgress func(Progress)) *callState {
	cs := &callState{tool: "task", timer: time.NewTimer(time.Hour), timeout: time.Hour, onProgress: onProgress}
	cs.task.Store(&taskState{id: "t"})
	return cs
}

func working(msg string) mcp.Task {
	return mcp.Task{TaskId: "t", Status: mcp.TaskStatusWorking, StatusMessage: msg}
}

// Two goroutines report a task's status (the poller and the transport's
// reader): while the older report is still being delivered, a newer one
// comes. The newer one is delivered after it, never before, so the card
// ends on the newest status.
func TestTaskReportsInOrder(t *testing.T) {
	t.Parallel()
	s := &server{}
	s.caller = &caller{}
	log := &statusLog{}
	newerSeen := make(chan struct{}) // the newer report reached onProgress
	newerDone := make(chan struct{}) // its taskReport returned
	var cs *callState
	cs = taskCall(func(p Progress) {
		if p.StatusMessage == "newer" {
			log.add(p.StatusMessage)
			close(newerSeen)
			return
		}
		go func() {
			s.caller.taskReport(cs, working("newer"))
			close(newerDone)
		}()
		// Delivery that does not wait for this one overtakes it within
		// microseconds; delivery that waits (the fix) is never seen here,
		// and the bound only ends the chance the old code had to fail.
		select {
		case <-newerSeen:
		case <-time.After(100 * time.Millisecond):
		}
		log.add(p.StatusMessage)
	})
	defer cs.timer.Stop()
	s.caller.taskReport(cs, working("older"))
	<-newerDone
	if got := log.all(); len(got) != 2 || got[0] != "older" || got[1] != "newer" {
		t.Fatalf("delivered %q, want [older newer]", got)
	}
}

// A report overtaken between its snapshot and its delivery is dropped.
func TestTaskReportStaleDropped(t *testing.T) {
	t.Parallel()
	ts := &taskState{id: "t"}
	ts.mu.Lock()
	ts.p.StatusMessage = "older"
	older, olderSeq := ts.snapshot()
	ts.p.StatusMessage = "newer"
	newer, newerSeq := ts.snapshot()
	ts.mu.Unlock()
	log := &statusLog{}
	add := func(p Progress) { log.add(p.StatusMessage) }
	ts.deliver(newerSeq, newer, add)
	ts.deliver(olderSeq, older, add)
	if got := log.all(); len(got) != 1 || got[0] != "newer" {
		t.Fatalf("delivered %q, want [newer]", got)
	}
}
