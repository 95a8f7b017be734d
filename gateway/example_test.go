package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpgate/acpgate/gateway"
)

// scriptedModel stands in for a real Provider (gateway/anthropic,
// gateway/openaicompat): it calls the tool "add" first, then answers with
// what the tool returned.
type scriptedModel struct{}

func (scriptedModel) Complete(_ context.Context, req gateway.ModelRequest, onDelta func(gateway.Delta)) (gateway.ModelResponse, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != gateway.RoleTool {
		call := gateway.ToolCall{ID: "call_1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}
		return gateway.ModelResponse{Stop: gateway.StopToolUse, Message: gateway.Message{ToolCalls: []gateway.ToolCall{call}}}, nil
	}
	answer := "2 + 3 = " + last.Result.ModelText()
	onDelta(gateway.Delta{Text: answer}) // a real provider streams its answer in pieces
	return gateway.ModelResponse{
		Stop:    gateway.StopEndTurn,
		Message: gateway.Message{Content: []gateway.Content{{Type: gateway.ContentText, Text: answer}}},
	}, nil
}

// A turn in which the model calls a tool, gets its result and answers. The
// Sink sees the turn as it happens; the TurnResult holds the messages to
// append to the conversation.
func ExampleRunner() {
	add := gateway.Tool{
		Name:        "add",
		Description: "Adds two numbers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		Kind:        gateway.KindOther,
		Execute: func(_ context.Context, args json.RawMessage, _ func(gateway.Progress)) (gateway.Result, error) {
			var in struct{ A, B float64 }
			if err := json.Unmarshal(args, &in); err != nil {
				return gateway.Result{}, err
			}
			return gateway.TextResult(fmt.Sprint(in.A + in.B)), nil
		},
	}

	r := gateway.NewRunner(gateway.RunnerOptions{System: "You are a calculator."})
	res, err := r.Run(context.Background(), gateway.RunOptions{
		Model: scriptedModel{},
		Input: []gateway.Content{{Type: gateway.ContentText, Text: "What is 2 + 3?"}},
		// No Policy and no Approver: every tool is allowed, every call approved.
		ToolAccess: gateway.ToolAccess{Tools: gateway.NewToolset(nil, []gateway.Tool{add})},
		Sink: func(ev gateway.Event) {
			switch ev.Kind {
			case gateway.EventToolCallStarted:
				fmt.Printf("call %s %s\n", ev.Call.Name, ev.Call.RawInput)
			case gateway.EventToolCallFinished:
				fmt.Printf("result %s (failed: %t)\n", gateway.PlainText(ev.Result.Content), ev.Failed)
			case gateway.EventText:
				fmt.Printf("text %q\n", ev.Text)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stop:", res.Stop)
	for _, m := range res.Messages {
		fmt.Println("message:", m.Role)
	}
	// Output:
	// call add {"a":2,"b":3}
	// result 5 (failed: false)
	// text "2 + 3 = 5"
	// stop: end_turn
	// message: user
	// message: assistant
	// message: tool
	// message: assistant
}
