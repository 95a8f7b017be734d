package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// decodeServers runs a session/new line through the filter and decodes its
// mcpServers the way the SDK does, then converts them like NewSession.
func decodeServers(t testing.TB, line string) ([]acpsdk.McpServer, error) {
	var out bytes.Buffer
	f := newInputFilter(strings.NewReader(line+"\n"), &out, slog.New(slog.DiscardHandler))
	f.start()
	got, _ := io.ReadAll(f)
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
	got := mustJSONT(t, specs)
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
	for _, bad := range []struct{ servers, want string }{
		{`[{"name":"x"}]`, "needs a command (stdio) or a url"},
		{`[{"command":"x"}]`, "missing name"},
		{`[{"name":"x","command":"a"},{"name":"x","url":"http://127.0.0.1/"}]`, `duplicate server name "x"`},
	} {
		servers, err := decodeServers(t, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":`+bad.servers+`}}`)
		if err == nil {
			_, err = serverSpecs(servers)
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.servers, err, bad.want)
		}
	}
}

func mustJSONT(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
	if string(got) != `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n" {
		t.Errorf("passed on %q", got)
	}
	replies := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(replies) != 2 || !strings.Contains(replies[0], `"code":-32700`) || !strings.Contains(replies[1], `"code":-32600`) {
		t.Errorf("replies %q", replies)
	}
}

// FuzzInput feeds arbitrary client input through the input filter and the
// decoding NewSession does: nothing panics, and everything handed to the
// SDK is one valid JSON message per line.
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
			if !json.Valid(line) {
				t.Fatalf("invalid JSON handed on: %q", line)
			}
			var msg struct {
				Method string                   `json:"method"`
				Params acpsdk.NewSessionRequest `json:"params"`
			}
			if json.Unmarshal(line, &msg) == nil && strings.HasPrefix(msg.Method, "session/") {
				_, _ = serverSpecs(msg.Params.McpServers)
			}
		}
		for _, reply := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			if len(reply) > 0 && !json.Valid(reply) {
				t.Fatalf("invalid reply %q", reply)
			}
		}
	})
}
