package gateway_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/gateway"
)

// lister is a ModelLister answering from a function, counting its calls.
type lister struct {
	mu    sync.Mutex
	calls int
	list  func(ctx context.Context, n int) ([]gateway.ModelInfo, error)
}

func (l *lister) ListModels(ctx context.Context) ([]gateway.ModelInfo, error) {
	l.mu.Lock()
	l.calls++
	n := l.calls
	l.mu.Unlock()
	return l.list(ctx, n)
}

func (l *lister) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

var errDown = errors.New("down")

// TestCatalog: the first asking waits for the first fetch; a list is
// fetched once per key; a failure is not waited for again but retried in
// the background; an asking whose context ends gets nil.
func TestCatalog(t *testing.T) {
	ctx := context.Background()
	c := gateway.NewCatalog(0)
	ok := &lister{list: func(context.Context, int) ([]gateway.ModelInfo, error) {
		return []gateway.ModelInfo{{ID: "a"}}, nil
	}}
	for range 3 {
		if got := c.Models(ctx, "k1", ok); len(got) != 1 || got[0].ID != "a" {
			t.Fatalf("models %v", got)
		}
	}
	if ok.count() != 1 {
		t.Errorf("%d fetches of a known list", ok.count())
	}

	// Fails first, then succeeds: the asking after the failure does not
	// wait for the retry it starts.
	release := make(chan struct{})
	flaky := &lister{list: func(_ context.Context, n int) ([]gateway.ModelInfo, error) {
		if n == 1 {
			return nil, errDown
		}
		<-release
		return []gateway.ModelInfo{{ID: "b"}}, nil
	}}
	if got := c.Models(ctx, "k2", flaky); got != nil {
		t.Errorf("after a failed fetch: %v", got)
	}
	if got := c.Models(ctx, "k2", flaky); got != nil {
		t.Errorf("while the retry runs: %v", got)
	}
	close(release)
	<-c.Prefetch(ctx, "k2", flaky) // the retry under way
	if got := c.Models(ctx, "k2", flaky); len(got) != 1 || got[0].ID != "b" || flaky.count() != 2 {
		t.Errorf("after the retry: %v (%d fetches)", got, flaky.count())
	}

	// A fetch that never answers: the asking ends with its context.
	hang := make(chan struct{})
	defer close(hang)
	slow := &lister{list: func(ctx context.Context, _ int) ([]gateway.ModelInfo, error) {
		select {
		case <-hang:
		case <-ctx.Done():
		}
		return nil, errDown
	}}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got := c.Models(cctx, "k3", slow); got != nil {
		t.Errorf("slow: %v", got)
	}
}
