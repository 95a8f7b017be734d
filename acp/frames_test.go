package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/testdata/testbin"
)

// decodeServers runs a session/new line through the filter and decodes its
// mcpServers the way the SDK does; the filter's answer, if any, is the
// error.
func decodeServers(t testing.TB, line string) ([]acpsdk.McpServer, error) {
	var out bytes.Buffer
	f := newInputFilter(strings.NewReader(line+"\n"), &out, slog.New(slog.DiscardHandler))
	f.start()
	got, _ := io.ReadAll(f)
	if out.Len() > 0 {
		var reply struct {
			Error *acpsdk.RequestError `json:"error"`
		}
		if err := json.Unmarshal(out.Bytes(), &reply); err != nil || reply.Error == nil {
			t.Fatalf("filter answered %q", out.String())
		}
		return nil, reply.Error
	}
	var msg struct {
		Params acpsdk.NewSessionRequest `json:"params"`
	}
	if err := json.Unmarshal(got, &msg); err != nil {
		return nil, err
	}
	return msg.Params.McpServers, nil
}

func TestNormalizeServers(t *testing.T) {
	line := `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[` +
		`{"name":"a","command":"srv"},` +
		`{"type":"stdio","name":"b","command":"srv","args":["-x"]},` +
		`{"name":"c","command":"srv","args":[],"env":{"Z":"2","A":"1"}},` +
		`{"type":"http","name":"d","url":"http://127.0.0.1:1/mcp"},` +
		`{"name":"e","url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer x"}},` +
		`{"type":"sse","name":"f","url":"http://127.0.0.1:1/sse"},` +
		`{"type":"streamable-http","name":"g","url":"http://127.0.0.1:1/mcp","headers":[]}]}}`
	servers, err := decodeServers(t, line)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := serverSpecs(servers)
	if err != nil {
		t.Fatal(err)
	}
	got := testbin.JSON(t, specs)
	for _, want := range []string{
		`"Name":"a","Transport":"stdio","Command":"srv"`,
		`"Name":"b","Transport":"stdio","Command":"srv","Args":["-x"]`,
		`"Name":"c","Transport":"stdio","Command":"srv","Args":[],"Env":{"A":"1","Z":"2"}`,
		`"Name":"d","Transport":"http"`,
		`"Name":"e","Transport":"http","Command":"","Args":null,"Env":null,"Cwd":"","URL":"http://127.0.0.1:1/mcp","Headers":{"Authorization":"Bearer x"}`,
		`"Name":"f","Transport":"sse"`,
		`"Name":"g","Transport":"http"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("specs lack %s\n%s", want, got)
		}
	}
	for _, bad := range []struct{ servers, path string }{
		{`[{"name":"x"}]`, "mcpServers[0]"},
		{`[{"command":"x"}]`, "mcpServers[0].name"},
		{`[{"name":"x","command":"a"},{"name":"x","url":"http://127.0.0.1/"}]`, "mcpServers[1].name"},
		{`[{"name":"x","command":"a","args":"-v"}]`, "mcpServers[0].args"},
		{`[{"name":"x","command":"a","env":{"weird key":1}}]`, `mcpServers[0].env["weird key"]`},
	} {
		_, err := decodeServers(t, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":`+bad.servers+`}}`)
		var re *acpsdk.RequestError
		if !errors.As(err, &re) || re.Code != codeInvalidParams || re.Data.(map[string]any)["path"] != bad.path {
			t.Errorf("%s: %v, want invalid params at %s", bad.servers, err, bad.path)
		}
	}
}

// TestMalformedErrorRepaired: a client's response whose error the SDK
// cannot decode (it would drop the response, and the agent's request would
// wait forever) reaches the SDK as a well-formed internal error; good
// responses pass unchanged.
func TestMalformedErrorRepaired(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}`
	in := `{"jsonrpc":"2.0","id":1,"error":"denied"}` + "\n" + `{"jsonrpc":"2.0","id":2,"error":{"code":1.5,"message":"x"}}` + "\n" + good + "\n"
	var out bytes.Buffer
	f := newInputFilter(strings.NewReader(in), &out, slog.New(slog.DiscardHandler))
	f.start()
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 || out.Len() != 0 {
		t.Fatalf("passed %q, answered %q", got, out.String())
	}
	for i, l := range lines[:2] {
		var msg struct { // the SDK's decoding of a message
			ID    json.RawMessage      `json:"id"`
			Error *acpsdk.RequestError `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil || msg.Error == nil || msg.Error.Code != -32603 || string(msg.ID) != fmt.Sprint(i+1) {
			t.Errorf("response %d handed on as %s (%v)", i+1, l, err)
		}
	}
	var want, got3 any
	_ = json.Unmarshal([]byte(good), &want)
	if err := json.Unmarshal([]byte(lines[2]), &got3); err != nil || !reflect.DeepEqual(got3, want) {
		t.Errorf("good response changed: %s", lines[2])
	}
}

func TestInputFilterErrors(t *testing.T) {
	var out bytes.Buffer
	in := "not json\n\n" + `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" + strings.Repeat("x", maxFrame+10) + "\n"
	f := newInputFilter(strings.NewReader(in), &out, slog.New(slog.DiscardHandler))
	f.start()
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	// The good message passes, renamed (extensions.go).
	if string(got) != `{"id":1,"jsonrpc":"2.0","method":"_acpgate/initialize","params":{}}`+"\n" {
		t.Errorf("passed on %q", got)
	}
	var codes []int
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var reply struct {
			Error acpsdk.RequestError `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &reply); err != nil {
			t.Fatalf("reply %q: %v", l, err)
		}
		codes = append(codes, reply.Error.Code)
	}
	if !slices.Equal(codes, []int{codeParseError, codeInvalidRequest}) {
		t.Errorf("answered with codes %v", codes)
	}
}

// TestErrorsKeepTheLeadingID: a message over 10 MiB, and one nested
// deeper than the decoder goes, are answered with the id at their start;
// with the id after the part at fault (or none), the answer's id is null.
func TestErrorsKeepTheLeadingID(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"big-1","method":"session/prompt","params":{"text":"` + strings.Repeat("x", maxFrame) + `"}}`,
		`{"jsonrpc":"2.0","id":42,"method":"session/new","params":` + deep + `}`,
		`{"jsonrpc":"2.0","method":"session/new","params":` + deep + `,"id":43}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"session/new","params":` + deep + `}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	f := newInputFilter(strings.NewReader(in), &out, slog.New(slog.DiscardHandler))
	f.start()
	if got, err := io.ReadAll(f); err != nil || len(got) != 0 {
		t.Fatalf("passed on %q, %v", got, err)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var reply struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &reply); err != nil {
			t.Fatalf("reply %q: %v", l, err)
		}
		ids = append(ids, string(reply.ID))
	}
	if want := []string{`"big-1"`, "42", "null", "null"}; !slices.Equal(ids, want) {
		t.Errorf("answered ids %v, want %v", ids, want)
	}
}

// FuzzInput feeds arbitrary client input through the input filter and the
// decoding NewSession does: nothing panics, everything handed to the SDK is
// one JSON-RPC 2.0 message per line that the SDK can decode, and the
// mcpServers of every session/new handed on convert without error.
func FuzzInput(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[{"name":"a","command":"x"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[{"type":"http","name":"h","url":"http://127.0.0.1/","headers":{"a":"b"}}]}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"x","cwd":"/","mcpServers":[{"name":1,"env":[null]}]}}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"/call a {}"}]}}`,
		"{not json",
		`{"jsonrpc":"2.0","method":"session/new","params":{"mcpServers":{"a":1}}}`,
		"\x00\xff\n{}\n[]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		in := newInputFilter(bytes.NewReader(data), &out, slog.New(slog.DiscardHandler))
		in.start()
		passed, err := io.ReadAll(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(passed, []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var env struct { // what the SDK decodes of every message
				JSONRPC string               `json:"jsonrpc"`
				ID      *json.RawMessage     `json:"id"`
				Method  string               `json:"method"`
				Params  json.RawMessage      `json:"params"`
				Result  json.RawMessage      `json:"result"`
				Error   *acpsdk.RequestError `json:"error"`
			}
			if err := json.Unmarshal(line, &env); err != nil {
				t.Fatalf("handed on a line the SDK cannot decode: %q: %v", line, err)
			}
			if env.Method != "" && env.JSONRPC != "2.0" {
				t.Fatalf("handed on a request that is not JSON-RPC 2.0: %q", line)
			}
			var p acpsdk.NewSessionRequest
			if env.Method == acpsdk.AgentMethodSessionNew && json.Unmarshal(env.Params, &p) == nil {
				if _, err := serverSpecs(p.McpServers); err != nil {
					t.Fatalf("handed on servers that do not convert: %q: %v", line, err)
				}
			}
		}
		for _, reply := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			if len(reply) > 0 && !json.Valid(reply) {
				t.Fatalf("invalid reply %q", reply)
			}
		}
	})
}

func TestCreatedSession(t *testing.T) {
	for _, tc := range []struct {
		frame, want string
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"sess_1","modes":{}}}`, "sess_1"},
		{`{"jsonrpc":"2.0","id":"x","result":{"sessionId":"sess_2"}}` + "\n", "sess_2"},
		// A notification about the session, even one quoting a result.
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"text":"\"result\":{\"sessionId\":\"sess_1\"}"}}}`, ""},
		// A request from the agent to the client.
		{`{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"sessionId":"sess_1"}}`, ""},
		{`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad"}}`, ""},
		{`{"jsonrpc":"2.0","id":6,"result":{}}`, ""},
		{`not json`, ""},
	} {
		got, ok := createdSession([]byte(tc.frame))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("createdSession(%s) = %q, %v; want %q", tc.frame, got, ok, tc.want)
		}
	}
}
