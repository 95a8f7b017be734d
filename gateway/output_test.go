package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// outputModels are the two providers, each on its fake endpoint, scripted
// with: an answer of text (then thinking, for the one that sends thinking
// first) past the cap; a call whose arguments go past their cap, beside
// a call that is fine; and a last answer.
func outputModels(t *testing.T, text string, args string) map[string]gateway.Provider {
	oa := fakellm.Start(
		fakellm.Turn{Text: text},
		fakellm.Turn{SequentialToolCalls: true, ToolCalls: []fakellm.ToolCall{
			{ID: "ok", Name: "echo", Arguments: `{"text":"hi"}`}, {ID: "long", Name: "echo", Arguments: args}}},
		fakellm.Turn{Text: "done"},
	)
	t.Cleanup(oa.Close)
	an := fakeanthropic.Start(
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{{Type: "text", Text: text}}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{
			{Type: "tool_use", ID: "ok", Name: "echo", Input: `{"text":"hi"}`}, {Type: "tool_use", ID: "long", Name: "echo", Input: args}}},
		fakeanthropic.Turn{Blocks: []fakeanthropic.Block{{Type: "text", Text: "done"}}},
	)
	t.Cleanup(an.Close)
	return map[string]gateway.Provider{
		"openaicompat": oa.Provider(t, openaicompat.Config{}),
		"anthropic":    an.Provider(t, anthropic.Config{}),
	}
}

// TestOutputCaps: with either provider, an answer past the text cap is
// kept up to the cap (sent and kept alike) and ends the turn with
// ErrAnswerTooLong and max_tokens; a call whose arguments pass their cap
// is not run, its arguments are dropped, the model is told why as its
// result, and the turn goes on.
func TestOutputCaps(t *testing.T) {
	const limit = 1000
	text := strings.Repeat("é", 3000) // two bytes each: the cut falls inside none
	args := `{"text":"` + strings.Repeat("x", 5000) + `"}`
	for name, model := range outputModels(t, text, args) {
		t.Run(name, func(t *testing.T) {
			ran := 0
			echo := namedTool("echo")
			echo.Execute = func(context.Context, json.RawMessage, func(gateway.Progress)) (gateway.Result, error) {
				ran++
				return gateway.Result{Content: []gateway.Content{{Type: gateway.ContentText, Text: "hi"}}}, nil
			}
			r := gateway.NewRunner(gateway.RunnerOptions{})
			limits := gateway.OutputLimits{MaxAnswerBytes: limit, MaxArgumentBytes: limit}
			var ev events
			res, err := r.Run(context.Background(), gateway.RunOptions{Model: model, Input: userInput("talk"), Sink: ev.sink, Output: limits, ToolAccess: tools(echo)})
			if !errors.Is(err, gateway.ErrAnswerTooLong) || res.Stop != gateway.StopMaxTokens {
				t.Fatalf("stop %s, err %v; want max_tokens and ErrAnswerTooLong", res.Stop, err)
			}
			want := strings.Repeat("é", limit/2)
			if got := ev.text(gateway.EventText); got != want {
				t.Errorf("the sink got %d bytes of text, want the %d before the cap", len(got), len(want))
			}
			if kept := res.Messages[len(res.Messages)-1]; kept.Text() != want || kept.Native != nil || len(kept.ToolCalls) != 0 {
				t.Errorf("kept %d bytes, native %v, calls %v; want the %d bytes sent", len(kept.Text()), kept.Native, kept.ToolCalls, len(want))
			}

			ev = events{}
			res, err = r.Run(context.Background(), gateway.RunOptions{Model: model, Input: userInput("call"), Sink: ev.sink, Output: limits, ToolAccess: tools(echo)})
			if err != nil || res.Stop != gateway.StopEndTurn {
				t.Fatalf("stop %s, err %v; want the turn to go on to its end", res.Stop, err)
			}
			if ran != 1 {
				t.Errorf("echo ran %d times, want once (the call within the cap)", ran)
			}
			var long *gateway.Result
			for _, m := range res.Messages {
				for _, c := range m.ToolCalls {
					if c.ID == "long" && string(c.Arguments) != "{}" {
						t.Errorf("the long call's arguments were kept: %d bytes", len(c.Arguments))
					}
				}
				if m.Role == gateway.RoleTool && m.ToolCallID == "long" {
					long = m.Result
				}
			}
			if long == nil || !long.IsError || !strings.Contains(long.ModelText(), "not run") || !strings.Contains(long.ModelText(), "1000 bytes") {
				t.Errorf("the long call's result: %+v", long)
			}
			for _, e := range ev.kinds(gateway.EventToolCallStarted) {
				if len(e.Call.RawInput) > limit {
					t.Errorf("call %s announced with %d bytes of arguments", e.Call.ID, len(e.Call.RawInput))
				}
			}
		})
	}
}

// TestOneLongEvent: an answer sent as one event, 16 MiB of data lines the
// SDK would gather whole before decoding any, is stopped on the wire past
// twice the cap: the turn ends with ErrAnswerTooLong and most of the
// event is never read.
func TestOneLongEvent(t *testing.T) {
	const flood = 16 << 20
	srv := fakellm.Start(fakellm.Turn{Flood: &fakellm.Flood{TextBytes: flood, OneEvent: true}})
	t.Cleanup(srv.Close)
	r := gateway.NewRunner(gateway.RunnerOptions{})
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("talk"),
		Output: gateway.OutputLimits{MaxAnswerBytes: 1000, MaxArgumentBytes: 1000}})
	if !errors.Is(err, gateway.ErrAnswerTooLong) || res.Stop != gateway.StopMaxTokens {
		t.Fatalf("stop %s, err %v; want max_tokens and ErrAnswerTooLong", res.Stop, err)
	}
	if sent := srv.Flooded(); sent > flood/2 {
		t.Errorf("%d of the event's %d bytes were read", sent, flood)
	}
}

// TestWholeAnswerBounded: with streaming off, a whole answer's body is
// read up to four times the larger cap, and past that the turn ends as
// an answer too long.
func TestWholeAnswerBounded(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Text: strings.Repeat("a", 1<<20)})
	t.Cleanup(srv.Close)
	r := gateway.NewRunner(gateway.RunnerOptions{})
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{NoStream: true}), Input: userInput("talk"),
		Output: gateway.OutputLimits{MaxAnswerBytes: 1000, MaxArgumentBytes: 1000}})
	if !errors.Is(err, gateway.ErrAnswerTooLong) || res.Stop != gateway.StopMaxTokens {
		t.Fatalf("stop %s, err %v; want max_tokens and ErrAnswerTooLong", res.Stop, err)
	}
	// Stopped on the wire, not after the SDK had read and decoded it all.
	if want := fmt.Sprintf("the answer went past %d bytes", 4*1000+64<<10); !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want it to say %q", err, want)
	}
}

// TestNothingKeptOfAnEmptyStop: an answer stopped before any of its text
// came (its first event too long) adds no empty assistant message to the
// conversation, which an endpoint could refuse on every later request.
func TestNothingKeptOfAnEmptyStop(t *testing.T) {
	srv := fakellm.Start(fakellm.Turn{Flood: &fakellm.Flood{TextBytes: 1 << 20, OneEvent: true}})
	t.Cleanup(srv.Close)
	r := gateway.NewRunner(gateway.RunnerOptions{})
	res, err := r.Run(context.Background(), gateway.RunOptions{Model: srv.Provider(t, openaicompat.Config{}), Input: userInput("talk"),
		Output: gateway.OutputLimits{MaxAnswerBytes: 1000, MaxArgumentBytes: 1000}})
	if !errors.Is(err, gateway.ErrAnswerTooLong) {
		t.Fatalf("err %v, want ErrAnswerTooLong", err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != gateway.RoleUser {
		t.Errorf("the turn added %+v, want the user's message only", res.Messages)
	}
}
