package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/anthropic"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakeanthropic"
)

// A Provider for Anthropic's Messages API (here a scripted one on
// 127.0.0.1) asked with a tool: the model calls it, and the response
// carries the call for the gateway's Runner to run.
func ExampleProvider() {
	api := fakeanthropic.Start(fakeanthropic.Turn{Blocks: []fakeanthropic.Block{
		fakeanthropic.Text("Let me add them."),
		fakeanthropic.ToolUse("toolu_1", "add", `{"a":2,"b":3}`),
	}})
	defer api.Close()

	p, err := anthropic.New(anthropic.Config{BaseURL: api.URL, Model: "claude-fake"})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := p.Complete(context.Background(), gateway.ModelRequest{
		System:   "You are a calculator.",
		Messages: []gateway.Message{{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: "2 + 3?"}}}},
		Tools:    []gateway.ToolSpec{{Name: "add", Description: "Adds two numbers.", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}, func(gateway.Delta) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stop:", resp.Stop)
	fmt.Println("text:", resp.Message.Content[0].Text)
	for _, c := range resp.Message.ToolCalls {
		fmt.Println("call:", c.ID, c.Name, string(c.Arguments))
	}
	req := api.Requests()[0]
	fmt.Println("sent:", req.Model, len(req.Messages), "message,", len(req.Tools), "tool")
	// Output:
	// stop: tool_use
	// text: Let me add them.
	// call: toolu_1 add {"a":2,"b":3}
	// sent: claude-fake 1 message, 1 tool
}
