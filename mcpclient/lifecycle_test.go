package mcpclient_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// settledGoroutines is the goroutine count once goroutines that are
// ending have ended.
func settledGoroutines() int {
	runtime.GC()
	runtime.Gosched()
	return runtime.NumGoroutine()
}

func TestFailedNewLeavesNoGoroutine(t *testing.T) {
	before := settledGoroutines()
	events := func(mcpclient.Event) {}
	for range 100 {
		_, err := mcpclient.New([]mcpclient.ServerSpec{stdio("dup"), stdio("dup")}, &mcpclient.Options{OnEvent: events})
		if !errors.Is(err, mcpclient.ErrInvalidSpec) {
			t.Fatalf("New with duplicate names: %v", err)
		}
	}
	if after := settledGoroutines(); after > before+2 {
		t.Fatalf("100 failed New calls left %d goroutines behind", after-before)
	}
}

// A Reconfigure that is still stopping the old servers when Close begins
// must not start the new ones afterwards.
func TestReconfigureDuringCloseStartsNothing(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	recA, linesA := recordFile(t)
	recB, linesB := recordFile(t)
	m, err := mcpclient.New([]mcpclient.ServerSpec{stdio("a", "-record", recA, "-ignore-sigterm", "-ignore-stdin-eof")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustReady(t, m, "a")
	done := make(chan error, 1)
	go func() {
		// Stopping "a" takes the whole close bound (it ignores stdin EOF
		// and SIGTERM), so Close below lands in the middle of it.
		_, err := m.Reconfigure(context.Background(), []mcpclient.ServerSpec{stdio("b", "-record", recB)})
		done <- err
	}()
	testbin.WaitFor(t, "Reconfigure stopping a", func() bool { return hasLine(linesA(), "stdin eof") })
	if err := m.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; err != nil && !errors.Is(err, mcpclient.ErrClosed) {
		t.Fatalf("Reconfigure: %v", err)
	}
	if hasLine(linesB(), "started ") {
		t.Fatalf("server b was started by a Reconfigure that ended after Close began")
	}
	if st, _ := m.Status("b"); st.State == mcpclient.StateConnecting || st.State == mcpclient.StateReady {
		t.Fatalf("server b is %s after Close", st.State)
	}
}

// WaitSettled returns once a server is ready and the others have been
// quiet for the grace, while a server that never initializes goes on
// connecting.
func TestWaitSettledReturnsBeforeSlowServers(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	m, err := mcpclient.New([]mcpclient.ServerSpec{stdio("ok"), stdio("stuck", "-init-hang")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	m.Launch()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second) // < the 30 s connect timeout
	defer cancel()
	if err := m.WaitSettled(ctx, 200*time.Millisecond); err != nil {
		t.Fatalf("WaitSettled: %v", err)
	}
	if st, _ := m.Status("ok"); st.State != mcpclient.StateReady {
		t.Errorf("ok is %s", st.State)
	}
	if st, _ := m.Status("stuck"); st.State != mcpclient.StateConnecting {
		t.Errorf("stuck is %s, want still connecting", st.State)
	}
}

// TestWaitReturnsAfterOnEventSawTheChange pins the contract a view derived
// from events relies on: Wait returns only once OnEvent has returned from
// the event of the change it waited for, even while OnEvent is slow.
func TestWaitReturnsAfterOnEventSawTheChange(t *testing.T) {
	t.Parallel()
	opts, _ := fastOpts(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var seenReady atomic.Bool
	var enterOnce sync.Once
	opts.OnEvent = func(e mcpclient.Event) {
		if e.Kind == mcpclient.EventStatus && e.Status.State == mcpclient.StateReady {
			enterOnce.Do(func() { close(entered) })
			<-release
			seenReady.Store(true)
		}
	}
	m, err := mcpclient.New([]mcpclient.ServerSpec{stdio("a")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close(context.Background()) }()
	m.Launch()
	<-entered // the server is ready; OnEvent holds its event
	// OnEvent is let go while Wait runs: a Wait that does not wait for
	// the event returns long before OnEvent has finished.
	go close(release)
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !seenReady.Load() {
		t.Fatal("Wait returned before OnEvent had seen the server become ready")
	}
}
