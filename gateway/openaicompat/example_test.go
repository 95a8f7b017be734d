package openaicompat_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/acpgate/acpgate/gateway"
	"github.com/acpgate/acpgate/gateway/openaicompat"
	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// A Provider for an OpenAI-compatible endpoint (here a scripted one on
// 127.0.0.1) completing one request: the answer streams in pieces
// through the callback, then comes whole with its stop reason and usage.
func ExampleProvider() {
	endpoint := fakellm.Start(fakellm.Turn{Text: "Hello from the model."})
	defer endpoint.Close()

	p, err := openaicompat.New(openaicompat.Config{BaseURL: endpoint.URL, Model: "fake-model"})
	if err != nil {
		fmt.Println(err)
		return
	}
	var streamed strings.Builder
	resp, err := p.Complete(context.Background(), gateway.ModelRequest{
		System:   "Be brief.",
		Messages: []gateway.Message{{Role: gateway.RoleUser, Content: []gateway.Content{{Type: gateway.ContentText, Text: "Hi"}}}},
	}, func(d gateway.Delta) { streamed.WriteString(d.Text) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("streamed: %q\n", streamed.String())
	fmt.Printf("answer: %q (stop: %s)\n", resp.Message.Content[0].Text, resp.Stop)
	fmt.Printf("usage: %d in, %d out\n", resp.Usage.InputTokens, resp.Usage.OutputTokens)

	// What the endpoint was sent: the system prompt first.
	req := endpoint.Requests()[0]
	fmt.Println("sent:", req.Model, len(req.Messages), "messages, stream:", req.Stream)
	// Output:
	// streamed: "Hello from the model."
	// answer: "Hello from the model." (stop: end_turn)
	// usage: 10 in, 5 out
	// sent: fake-model 2 messages, stream: true
}
