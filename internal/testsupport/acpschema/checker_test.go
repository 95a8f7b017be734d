package acpschema_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/acpschema"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// loaded is the schema, compiled once for all the tests.
var loaded = sync.OnceValues(func() (*acpschema.Checker, error) {
	return acpschema.Load(filepath.Join(testbin.ModuleRoot(), acpschema.SDKDir))
})

// checker returns a Checker for a new connection.
func checker(t *testing.T) *acpschema.Checker {
	t.Helper()
	c, err := loaded()
	if err != nil {
		t.Fatalf("the pinned TypeScript SDK's schema is not installed? run `make npm`: %v", err)
	}
	return c.New()
}

// The client's requests the agent's responses in the tests answer.
const (
	initializeRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	newSessionRequest = `{"jsonrpc":"2.0","id":"s-2","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`
	forkRequest       = `{"jsonrpc":"2.0","id":3,"method":"session/fork","params":{"sessionId":"sess","cwd":"/tmp"}}`
	extensionRequest  = `{"jsonrpc":"2.0","id":4,"method":"_acpgate/status","params":{}}`
	unknownRequest    = `{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{}}`
)

// update is a session/update notification with the update u (JSON).
func update(u string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess","update":` + u + `}}`
}

func TestAgentAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, frame string
		schema      string // which schema accepts it
	}{
		{"initialize result", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`, acpschema.Stable},
		{"session/new result", `{"jsonrpc":"2.0","id":"s-2","result":{"sessionId":"sess"}}`, acpschema.Stable},
		{"error response", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`, acpschema.Stable},
		{"error response to no request", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, acpschema.Stable},
		{"agent_message_chunk", update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`), acpschema.Stable},
		{"tool_call", update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":"read","status":"pending"}`), acpschema.Stable},
		{"tool_call_update", update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`), acpschema.Stable},
		{"request_permission", `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"sess","toolCall":{"toolCallId":"t1"},` +
			`"options":[{"optionId":"a","name":"Allow","kind":"allow_once"}]}}`, acpschema.Stable},
		{"$/cancel_request", `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}`, acpschema.Stable},
		{"session/fork result (unstable)", `{"jsonrpc":"2.0","id":3,"result":{"sessionId":"forked"}}`, acpschema.Unstable},
		{"plan_removed (unstable)", update(`{"sessionUpdate":"plan_removed","planId":"p1"}`), acpschema.Unstable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checker(t)
			for _, r := range []string{initializeRequest, newSessionRequest, forkRequest, unknownRequest} {
				c.Client([]byte(r))
			}
			if err := c.Agent([]byte(tc.frame)); err != nil {
				t.Fatalf("refused: %v", err)
			}
			n := c.Counts()
			if got := n.Checked(); got != 1 || n.Invalid != 0 {
				t.Errorf("counts %+v, want one frame checked, none invalid", n)
			}
			if unstable := len(n.Unstable) > 0; unstable != (tc.schema == acpschema.Unstable) {
				t.Errorf("accepted only by the unstable schema: %v, want %v (%s)", unstable, !unstable, n)
			}
		})
	}
}

func TestAgentRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, frame string
		want        error  // errors.Is; nil: the schema's refusal
		location    string // the failing keyword (the first one's)
		method      string
	}{
		{"tool_call without toolCallId", update(`{"sessionUpdate":"tool_call","title":"Read"}`), nil, "#/$defs/ToolCall/required", "session/update"},
		{"text block without text", update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}`), nil, "#/$defs/TextContent/required", "session/update"},
		{"unknown sessionUpdate", update(`{"sessionUpdate":"no_such_update"}`), nil, "#/$defs/SessionUpdate/oneOf", "session/update"},
		{"initialize result without protocolVersion", `{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}}`, nil, "#/$defs/InitializeResponse/required", "initialize"},
		{"permission option of an unknown kind", `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"sess","toolCall":{"toolCallId":"t1"},` +
			`"options":[{"optionId":"a","name":"Allow","kind":"allow_forever"}]}}`, nil, "#/$defs/PermissionOptionKind/oneOf", "session/request_permission"},
		{"error without message", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601}}`, nil, "#/$defs/Error/required", "no/such/method"},
		{"unknown request method", `{"jsonrpc":"2.0","id":8,"method":"mcp/connect","params":{"serverId":"x"}}`, acpschema.ErrUnknownMethod, "", "mcp/connect"},
		{"unknown notification method", `{"jsonrpc":"2.0","method":"mcp/disconnected","params":{}}`, acpschema.ErrUnknownMethod, "", "mcp/disconnected"},
		{"client method sent by the agent", `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"sess","prompt":[]}}`, acpschema.ErrUnknownMethod, "", "session/prompt"},
		{"result for a method the schema does not know", `{"jsonrpc":"2.0","id":5,"result":{}}`, acpschema.ErrUnknownMethod, "", "no/such/method"},
		{"result to no request", `{"jsonrpc":"2.0","id":99,"result":{}}`, acpschema.ErrUnknownID, "", ""},
		{"no jsonrpc", `{"id":1,"result":{"protocolVersion":1}}`, acpschema.ErrNotJSONRPC, "", "initialize"},
		{"not JSON", `{"jsonrpc":"2.0",`, acpschema.ErrNotJSONRPC, "", ""},
		{"neither request nor response", `{"jsonrpc":"2.0","id":1}`, acpschema.ErrNotJSONRPC, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checker(t)
			for _, r := range []string{initializeRequest, newSessionRequest, unknownRequest} {
				c.Client([]byte(r))
			}
			err := c.Agent([]byte(tc.frame))
			var fe *acpschema.FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FrameError", err)
			}
			t.Log(err)
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if locs := fe.Locations(); tc.location != "" && (len(locs) == 0 || locs[0] != tc.location) {
				t.Errorf("failing keywords %q, want %q first", locs, tc.location)
			}
			if tc.want == nil && len(fe.Problems) == 0 {
				t.Errorf("a schema refusal without problems: %v", err)
			}
			if fe.Method != tc.method {
				t.Errorf("method %q, want %q", fe.Method, tc.method)
			}
			if n := c.Counts(); n.Invalid != 1 {
				t.Errorf("counts %+v, want one invalid", n)
			}
		})
	}
}

// TestRefusalNamesTheUpdate: a refused session/update says which update,
// and the unstable schema's refusal is reported for a method both know.
func TestRefusalNamesTheUpdate(t *testing.T) {
	err := checker(t).Agent([]byte(update(`{"sessionUpdate":"tool_call","title":"Read"}`)))
	var fe *acpschema.FrameError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v", err)
	}
	if fe.Kind != acpschema.Notification || fe.Update != "tool_call" || fe.Schema != acpschema.Unstable {
		t.Errorf("got %+v", fe)
	}
	for _, want := range []string{"session/update notification (tool_call)", "#/$defs/ToolCall/required", `"/update"`, "toolCallId"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// TestExtensionsSkipped: extension methods and the answers to the client's
// are counted, not checked.
func TestExtensionsSkipped(t *testing.T) {
	c := checker(t)
	c.Client([]byte(extensionRequest))
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":4,"result":{"anything":1}}`,
		`{"jsonrpc":"2.0","method":"_acpgate/progress","params":"not an object"}`,
		`{"jsonrpc":"2.0","id":10,"method":"_acpgate/ask","params":{}}`,
	} {
		if err := c.Agent([]byte(f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if n := c.Counts(); n.Skipped != 3 || n.Checked() != 0 {
		t.Errorf("counts %+v, want 3 skipped, none checked", n)
	}
}

// TestAnswerMatchedOnce: an answer is checked against the request it
// answers; a second answer to the same id answers nothing.
func TestAnswerMatchedOnce(t *testing.T) {
	c := checker(t)
	c.Client([]byte(newSessionRequest))
	c.Client([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess"}}`)) // a notification: no answer
	c.Client([]byte(`not json`))
	if err := c.Agent([]byte(`{"jsonrpc":"2.0","id":"s-2","result":{"sessionId":"sess"}}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Agent([]byte(`{"jsonrpc":"2.0","id":"s-2","result":{"sessionId":"sess"}}`)); !errors.Is(err, acpschema.ErrUnknownID) {
		t.Errorf("a second answer: %v, want ErrUnknownID", err)
	}
	// Ids are matched by value and type: 2 is not "2".
	c.Client([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`))
	if err := c.Agent([]byte(`{"jsonrpc":"2.0","id":"2","result":{"sessionId":"sess"}}`)); !errors.Is(err, acpschema.ErrUnknownID) {
		t.Errorf("an answer to id \"2\" for id 2: %v, want ErrUnknownID", err)
	}
}

func TestCountsAndSummary(t *testing.T) {
	c := checker(t)
	c.Client([]byte(initializeRequest))
	c.Client([]byte(forkRequest))
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"forked"}}`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"Internal error"}}`,
		update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}`),
		update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"b"}}`),
		update(`{"sessionUpdate":"tool_call","title":"no id"}`),
		`{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"sess","path":"/a"}}`,
		`{"jsonrpc":"2.0","method":"_acpgate/x","params":{}}`,
	} {
		_ = c.Agent([]byte(f))
	}
	n := c.Counts()
	want := acpschema.Counts{Requests: 1, Notifications: 3, Responses: 3, ErrorResponses: 1, Skipped: 1, Invalid: 1,
		Updates: map[string]int{"agent_message_chunk": 2, "tool_call": 1}, Unstable: map[string]int{"response session/fork": 1}}
	if fmt.Sprint(n) != fmt.Sprint(want) {
		t.Errorf("counts\n%v, want\n%v", n, want)
	}
	s := c.Summary()
	for _, part := range []string{"7 messages validated", "1 requests", "3 notifications [session/update: agent_message_chunk 2, tool_call 1]",
		"3 responses [1 errors]", "1 accepted only by the unstable schema [response session/fork 1]", "1 extension messages skipped", "1 invalid"} {
		if !strings.Contains(s, part) {
			t.Errorf("summary %q does not say %q", s, part)
		}
	}
	var total acpschema.Counts
	total.Add(n)
	total.Add(n)
	if total.Checked() != 14 || total.Updates["agent_message_chunk"] != 4 || total.Unstable["response session/fork"] != 2 {
		t.Errorf("Add twice: %v", total)
	}
	if n.Updates["agent_message_chunk"] != 2 {
		t.Errorf("Add changed the counts added: %v", n)
	}
}

// TestConcurrent feeds one Checker from both directions at once (run with
// -race).
func TestConcurrent(t *testing.T) {
	c := checker(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				id := fmt.Sprintf(`"g%d-%d"`, g, i)
				c.Client([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`))
				if err := c.Agent([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"sessionId":"s"}}`)); err != nil {
					t.Error(err)
					return
				}
				_ = c.Agent([]byte(update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`)))
				_ = c.Counts()
			}
		})
	}
	wg.Wait()
	if n := c.Counts(); n.Responses != 400 || n.Notifications != 400 || n.Invalid != 0 {
		t.Errorf("counts %v", n)
	}
}

func TestLines(t *testing.T) {
	var got []string
	w := acpschema.Lines(func(l []byte) { got = append(got, string(l)) })
	for _, p := range []string{`{"a":`, `1}` + "\n" + `{"b":2}` + "\r\n\n  \n" + `{"c"`, `:3}` + "\n", `{"unended":true}`} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if want := []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// BenchmarkAgent is the cost of checking a typical frame.
func BenchmarkAgent(b *testing.B) {
	c, err := loaded()
	if err != nil {
		b.Skip(err)
	}
	frame := []byte(update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"` +
		strings.Repeat("x", 1000) + `"}}]}`))
	for b.Loop() {
		if err := c.Agent(frame); err != nil {
			b.Fatal(err)
		}
	}
}
