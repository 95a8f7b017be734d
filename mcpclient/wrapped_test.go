package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient/wire"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// fakeTransport answers initialize and holds every other request until its
// context ends; it reports each request that arrives and each
// notifications/cancelled sent.
type fakeTransport struct {
	arrived chan string // methods of held requests
	notices chan any    // requestIds of notifications/cancelled
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{arrived: make(chan string, 8), notices: make(chan any, 8)}
}

func (f *fakeTransport) Start(context.Context) error { return nil }
func (f *fakeTransport) Close() error                { return nil }
func (f *fakeTransport) GetSessionId() string        { return "" }

func (f *fakeTransport) SetNotificationHandler(func(mcp.JSONRPCNotification)) {}

func (f *fakeTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if req.Method == string(mcp.MethodInitialize) {
		result, _ := json.Marshal(map[string]any{
			"protocolVersion": ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "fake", "version": "1"},
		})
		return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: req.ID, Result: result}, nil
	}
	f.arrived <- req.Method
	<-ctx.Done()
	return nil, ctx.Err()
}

func (f *fakeTransport) SendNotification(_ context.Context, n mcp.JSONRPCNotification) error {
	if n.Method == string(mcp.MethodNotificationCancelled) {
		f.notices <- n.Params.AdditionalFields["requestId"]
	}
	return nil
}

// fakeHTTP is a fakeTransport that says it runs over HTTP.
type fakeHTTP struct{ *fakeTransport }

func (fakeHTTP) SetProtocolVersion(string) {}

// cancelOne starts a client on tr, sends tools/list, cancels it once it
// has arrived and returns when the client has given up on it.
func cancelOne(t *testing.T, tr transport.Interface, arrived <-chan string) {
	t.Helper()
	c := client.NewClient(tr, client.WithProtocolVersion(ProtocolVersion))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.ListTools(rctx, mcp.ListToolsRequest{})
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
}

// noticeWindow is how long a test waits to conclude that no notice comes.
// A notice is sent at once when it is sent at all (on a goroutine started
// before the request returns), so a slow machine can only make such a test
// pass wrongly, never fail wrongly.
const noticeWindow = 300 * time.Millisecond

// TestLibraryCancelNotice pins what mcp-go v1.2.1's client does when a
// request's context ends: it sends notifications/cancelled itself over any
// transport but a transport.HTTPConnection. wrapTransport relies on this
// (wire.LibraryCancels) to add the notice exactly where it is missing. If this
// fails after an upgrade of mcp-go, change wire.LibraryCancels to the new rule.
func TestLibraryCancelNotice(t *testing.T) {
	t.Parallel()
	plain := newFakeTransport()
	httpLike := newFakeTransport()
	for _, tc := range []struct {
		name string
		tr   transport.Interface
		fake *fakeTransport
	}{
		{"plain", plain, plain},
		{"HTTPConnection", fakeHTTP{httpLike}, httpLike},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cancelOne(t, tc.tr, tc.fake.arrived)
			want := wire.LibraryCancels(tc.tr)
			select {
			case <-tc.fake.notices:
				if !want {
					t.Fatalf("mcp-go now sends notifications/cancelled itself over a %s transport, "+
						"which wire.LibraryCancels says it does not: update wire.LibraryCancels, or every "+
						"cancelled request gets two notices", tc.name)
				}
			case <-time.After(noticeWindowFor(want)):
				if want {
					t.Fatalf("mcp-go no longer sends notifications/cancelled over a %s transport, "+
						"which wire.LibraryCancels says it does: update wire.LibraryCancels, or cancelled "+
						"requests get no notice", tc.name)
				}
			}
		})
	}
}

// noticeWindowFor is the wait for a notice that is expected (long: it
// must come) or not (noticeWindow).
func noticeWindowFor(expected bool) time.Duration {
	if expected {
		return 10 * time.Second
	}
	return noticeWindow
}

// TestWrapTransportKinds: the wrapper claims HTTP only for HTTP transports
// (mcp-go has HTTP-only branches beyond cancellation), and with mcp-go's
// client on top, every cancelled request gets exactly one notice.
func TestWrapTransportKinds(t *testing.T) {
	t.Parallel()
	own := wrapTransport(wire.NewStdioTransport(nil, nil, nil), &toolListing{}, wire.NewNotices(context.Background()), requestTrace{})
	if _, ok := own.(transport.HTTPConnection); ok {
		t.Error("wrapped stdio transport is a transport.HTTPConnection")
	}
	if _, ok := own.(transport.BidirectionalInterface); !ok {
		t.Error("wrapped stdio transport does not take server requests")
	}
	for _, tc := range []struct {
		name string
		http bool
	}{{"plain", false}, {"HTTPConnection", true}} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeTransport()
			var inner transport.Interface = fake
			if tc.http {
				inner = fakeHTTP{fake}
			}
			notes := wire.NewNotices(context.Background())
			tr := wrapTransport(inner, &toolListing{}, notes, requestTrace{})
			if _, ok := tr.(transport.HTTPConnection); ok != tc.http {
				t.Fatalf("wrapped %s transport: HTTPConnection = %v", tc.name, ok)
			}
			cancelOne(t, tr, fake.arrived)
			select {
			case <-fake.notices:
			case <-time.After(10 * time.Second):
				t.Fatal("no notifications/cancelled")
			}
			notes.Wait()
			select {
			case id := <-fake.notices:
				t.Fatalf("a second notifications/cancelled (request %v)", id)
			case <-time.After(noticeWindow):
			}
		})
	}
}
