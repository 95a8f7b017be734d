package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/compact"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// summaries makes srv answer the compactor's summary requests with a
// summary, leaving the others to its script.
func summaries(srv *fakellm.Server) {
	srv.SetResponder(func(req fakellm.Request) (fakellm.Turn, bool) {
		if len(req.Messages) > 0 && req.Messages[0].Role == "system" && req.Messages[0].Content == compact.Instructions {
			return fakellm.Turn{Text: "The user read parts of a file."}, true
		}
		return fakellm.Turn{}, false
	})
}

// bigHistory is turns turns, each a read of size bytes and an answer.
func bigHistory(turns, size int) []gateway.Message {
	var h []gateway.Message
	for i := range turns {
		id := fmt.Sprintf("old_%d", i)
		h = append(h,
			gateway.Message{Role: gateway.RoleUser, Content: userInput(fmt.Sprintf("read part %d", i))},
			gateway.Message{Role: gateway.RoleAssistant, ToolCalls: []gateway.ToolCall{{ID: id, Name: "read", Arguments: json.RawMessage(`{}`)}}},
			gateway.Message{Role: gateway.RoleTool, ToolCallID: id, ToolName: "read", Result: &gateway.Result{Content: userInput(strings.Repeat("z", size))}},
			gateway.Message{Role: gateway.RoleAssistant, Content: userInput(fmt.Sprintf("part %d read", i))},
		)
	}
	return h
}

// readTool returns size bytes.
func readTool(size int) gateway.Tool {
	tl := namedTool("read")
	tl.Execute = func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
		return gateway.TextResult(strings.Repeat("r", size)), nil
	}
	return tl
}

// TestRunCompactsBeforeTheWindow: with the window known, a turn whose
// requests would pass the threshold is compacted before each such request
// (before the first, and again in the middle of the turn); no request
// reaches the endpoint's window; the turn's result carries the compacted
// history.
func TestRunCompactsBeforeTheWindow(t *testing.T) {
	const window = 8000
	srv := fakellm.Start(
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "n1", Name: "read", Arguments: `{}`}}},
		fakellm.Turn{ToolCalls: []fakellm.ToolCall{{ID: "n2", Name: "read", Arguments: `{}`}}},
		fakellm.Turn{Text: "done"},
	)
	defer srv.Close()
	srv.SetWindow(window)
	summaries(srv)
	var ev events
	r := gateway.NewRunner(gateway.RunnerOptions{})
	history := bigHistory(6, 4000) // ~6200 tokens: over 80 % of 8000 with the tools
	res, err := r.Run(context.Background(), gateway.RunOptions{
		Model: srv.Provider(t, openaicompat.Config{}), History: history, Input: userInput("read two more parts"),
		ToolAccess: tools(readTool(12000)), Sink: ev.sink, ContextWindow: window, Compactor: compact.New(nil),
	})
	if err != nil || res.Stop != gateway.StopEndTurn {
		t.Fatalf("stop %s, %v", res.Stop, err)
	}
	if st := srv.Stats(); st.Refused != 0 || st.MaxTokens > window {
		t.Errorf("stats %+v: a request passed the window", st)
	}
	compactions := ev.kinds(gateway.EventCompacted)
	if len(compactions) < 2 {
		t.Fatalf("%d compactions, want one before the turn and one in it", len(compactions))
	}
	if c := compactions[0].Compaction; c.Elided == 0 || c.After >= c.Before {
		t.Errorf("first compaction %+v", c)
	}
	if len(res.Messages) != 6 || res.Messages[5].Text() != "done" {
		t.Errorf("the turn's messages: %d", len(res.Messages))
	}
	if res.History == nil {
		t.Fatal("no compacted history")
	}
	// The history ends with the turn, and is what the last request sent
	// plus the answer.
	reqs := srv.Requests()
	var last fakellm.Request
	for _, q := range reqs {
		if q.Messages[0].Role != "system" {
			last = q
		}
	}
	if len(res.History) != len(last.Messages)+1 || res.History[len(res.History)-1].Text() != "done" {
		t.Errorf("history of %d messages; the last request had %d", len(res.History), len(last.Messages))
	}
	var calls, results int
	for _, m := range res.History {
		calls += len(m.ToolCalls)
		if m.Role == gateway.RoleTool {
			results++
		}
	}
	if calls != results {
		t.Errorf("%d calls and %d results in the history", calls, results)
	}
}

// TestRunRetriesAfterContextLength: with the window unknown, the
// endpoint's context-length error compacts the conversation and the
// request is sent once more; the turn completes.
func TestRunRetriesAfterContextLength(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: "fine"})
	defer srv.Close()
	srv.SetWindow(6000)
	summaries(srv)
	var ev events
	res, err := gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{
		Model: srv.Provider(t, openaicompat.Config{}), History: bigHistory(8, 4000), Input: userInput("go on"),
		Sink: ev.sink, Compactor: compact.New(nil),
	})
	if err != nil || res.Stop != gateway.StopEndTurn || ev.text(gateway.EventText) != "fine" {
		t.Fatalf("stop %s, %v, said %q", res.Stop, err, ev.text(gateway.EventText))
	}
	if st := srv.Stats(); st.Refused != 1 {
		t.Errorf("stats %+v, want one refusal", st)
	}
	if len(ev.kinds(gateway.EventCompacted)) != 1 || res.History == nil {
		t.Errorf("%d compactions, history %v", len(ev.kinds(gateway.EventCompacted)), res.History != nil)
	}
}

// TestContextLengthError: the endpoint's context-length error is
// ErrContextLength (by its code); without a compactor the turn fails with
// it.
func TestContextLengthError(t *testing.T) {
	srv := fakellm.Start()
	defer srv.Close()
	srv.SetWindow(100)
	_, err := gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{
		Model: srv.Provider(t, openaicompat.Config{}), History: bigHistory(1, 4000), Input: userInput("hi"),
	})
	if !errors.Is(err, gateway.ErrContextLength) || !errors.Is(err, gateway.ErrProvider) {
		t.Errorf("error %v", err)
	}
	// The same status without the code is another error.
	other := fakellm.Start(fakellm.Turn{Status: 400, ErrorMessage: "maximum context length exceeded"})
	defer other.Close()
	_, err = gateway.NewRunner(gateway.RunnerOptions{}).Run(context.Background(), gateway.RunOptions{Model: other.Provider(t, openaicompat.Config{}), Input: userInput("hi")})
	if err == nil || errors.Is(err, gateway.ErrContextLength) {
		t.Errorf("a 400 without the code: %v", err)
	}
}

// fitFunc is a gateway.Compactor made of its Fit.
type fitFunc func(ctx context.Context, f gateway.FitRequest) (*gateway.Compaction, error)

func (f fitFunc) Fit(ctx context.Context, r gateway.FitRequest) (*gateway.Compaction, error) {
	return f(ctx, r)
}

func (fitFunc) Observe(gateway.ModelRequest, gateway.Usage) {}

// TestRunReportsCompaction: the sink hears when a compaction starts and
// how it ends: compacted, or failed with the reason (wrapping
// context.Canceled when the turn was cancelled meanwhile); a compactor
// that does nothing is not heard of.
func TestRunReportsCompaction(t *testing.T) {
	boom := errors.New("boom")
	done := &gateway.Compaction{Messages: []gateway.Message{{Role: gateway.RoleUser, Content: userInput("compacted")}}, Turns: 1}
	for _, c := range []struct {
		name  string
		fit   func(ctx context.Context, cancel context.CancelFunc, f gateway.FitRequest) (*gateway.Compaction, error)
		kinds []gateway.EventKind // the compaction events, in order
		err   error               // what the failure wraps
	}{
		{name: "fits", fit: func(context.Context, context.CancelFunc, gateway.FitRequest) (*gateway.Compaction, error) {
			return nil, nil
		}},
		{name: "compacted", fit: func(_ context.Context, _ context.CancelFunc, f gateway.FitRequest) (*gateway.Compaction, error) {
			f.Started()
			return done, nil
		}, kinds: []gateway.EventKind{gateway.EventCompactionStarted, gateway.EventCompacted}},
		{name: "failed", fit: func(_ context.Context, _ context.CancelFunc, f gateway.FitRequest) (*gateway.Compaction, error) {
			f.Started()
			return nil, boom
		}, kinds: []gateway.EventKind{gateway.EventCompactionStarted, gateway.EventCompactionFailed}, err: boom},
		{name: "cancelled", fit: func(_ context.Context, cancel context.CancelFunc, f gateway.FitRequest) (*gateway.Compaction, error) {
			f.Started()
			cancel()
			return nil, boom // a model that does not wrap the context's error
		}, kinds: []gateway.EventKind{gateway.EventCompactionStarted, gateway.EventCompactionFailed}, err: context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ev events
			first := true
			compactor := fitFunc(func(ctx context.Context, f gateway.FitRequest) (*gateway.Compaction, error) {
				if !first {
					return nil, nil
				}
				first = false
				return c.fit(ctx, cancel, f)
			})
			_, _ = gateway.NewRunner(gateway.RunnerOptions{}).Run(ctx, gateway.RunOptions{Model: &scripted{}, Input: userInput("hi"), Sink: ev.sink, Compactor: compactor})
			var kinds []gateway.EventKind
			for _, e := range ev.all {
				switch e.Kind {
				case gateway.EventCompactionStarted, gateway.EventCompacted, gateway.EventCompactionFailed:
					kinds = append(kinds, e.Kind)
				}
				if e.Kind == gateway.EventCompactionFailed && !errors.Is(e.Err, c.err) {
					t.Errorf("failure %v, want one wrapping %v", e.Err, c.err)
				}
			}
			if !slices.Equal(kinds, c.kinds) {
				t.Errorf("events %v, want %v", kinds, c.kinds)
			}
		})
	}
}
