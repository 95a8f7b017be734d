package acp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp"
	"github.com/acpgate/acpgate/session"
)

// exampleClient is the editor's side of the connection, reduced to what
// the example needs: it prints the agent's messages. It advertises no
// capabilities, so the agent asks nothing else of it; the embedded nil
// Client stands in for the methods it leaves out.
type exampleClient struct{ acpsdk.Client }

func (exampleClient) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		fmt.Printf("agent: %q\n", c.Content.Text.Text)
	}
	return nil
}

// Serve runs the agent on any pair of streams: here io.Pipes, with
// acp-go-sdk's client side at the other end, as an editor would be on
// acpgate's stdin and stdout. The session has no MCP servers and no model
// is configured, so the example needs neither.
func ExampleServe() {
	dir, err := os.MkdirTemp("", "acpgate-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store, err := session.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}

	toAgent, agentIn := io.Pipe()    // the client writes, the agent reads
	fromAgent, agentOut := io.Pipe() // the agent writes, the client reads
	served := make(chan error, 1)
	go func() {
		served <- acp.Serve(context.Background(), toAgent, agentOut, acp.Options{
			Name:           "acpgate",
			Version:        "example",
			Store:          store,
			NoModelMessage: "No model is configured.",
		})
		agentOut.Close()
	}()

	ctx := context.Background()
	conn := acpsdk.NewClientSideConnection(exampleClient{}, agentIn, fromAgent)
	conn.SetLogger(slog.New(slog.DiscardHandler)) // before any traffic
	info, err := conn.Initialize(ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("protocol version:", info.ProtocolVersion)
	fmt.Println("agent info:", info.AgentInfo.Name, info.AgentInfo.Version)

	sess, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A slash command is answered by the agent itself; any other prompt
	// goes to the model, here the NoModelMessage. The agent's messages
	// reach the client before the answer to the prompt does.
	for _, text := range []string{"/mcp", "Hello"} {
		resp, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("stop:", resp.StopReason)
	}

	// The client hangs up: Serve closes the session and returns.
	agentIn.Close()
	fmt.Println("Serve returned:", <-served)
	// Output:
	// protocol version: 1
	// agent info: acpgate example
	// agent: "This session has no MCP servers. Pass them in mcpServers when the session is created."
	// stop: end_turn
	// agent: "No model is configured."
	// stop: end_turn
	// Serve returned: <nil>
}
