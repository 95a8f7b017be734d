package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

type ctxKey struct{}

// TestStdioPeekBeforeNextMessage: Peek sees a response, with its
// request's context, before the transport reads the message after it:
// the notification that follows finds what Peek recorded.
func TestStdioPeekBeforeNextMessage(t *testing.T) {
	t.Parallel()
	stdoutR, stdoutW := io.Pipe()
	stdinR, stdinW := io.Pipe()
	defer stdoutW.Close()
	tr := NewStdioTransport(NewJSONLines(stdoutR, 1<<20, discardLog{}, &TooLargeIDs{}, nil), stdinW, &TooLargeIDs{})
	peeked := make(chan string, 1)
	tr.Peek = func(ctx context.Context, resp *transport.JSONRPCResponse) {
		peeked <- ctx.Value(ctxKey{}).(string) + " " + string(resp.Result)
	}
	seen := make(chan string, 1)
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		select {
		case p := <-peeked:
			seen <- "after peek: " + p
		default:
			seen <- "before peek"
		}
	})
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	got := make(chan *transport.JSONRPCResponse, 1)
	go func() {
		ctx := context.WithValue(context.Background(), ctxKey{}, "the call")
		resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(7)), Method: "tools/call"})
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	// The request arrives (SendRequest waits for its answer from before
	// it writes); then the response and a notification in one write.
	if line, err := bufio.NewReader(stdinR).ReadString('\n'); err != nil || !strings.Contains(line, `"tools/call"`) {
		t.Fatalf("request %q: %v", line, err)
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{"task": map[string]any{"taskId": "t"}}})
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`
	if _, err := stdoutW.Write(append(append(msg, '\n'), note+"\n"...)); err != nil {
		t.Fatal(err)
	}
	if s := <-seen; s != `after peek: the call {"task":{"taskId":"t"}}` {
		t.Errorf("notification handled %s", s)
	}
	if resp := <-got; resp == nil || string(resp.Result) != `{"task":{"taskId":"t"}}` {
		t.Errorf("response %+v", resp)
	}
}
