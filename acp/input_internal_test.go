package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/acp/jsonrpc"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
)

// decodeServers checks a session/new line's params as its route does
// (normalizeServers) and decodes its mcpServers into the request type;
// the check's answer, if any, is the error.
func decodeServers(t testing.TB, line string) ([]acpsdk.McpServer, error) {
	var msg struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &msg); err != nil {
		t.Fatal(err)
	}
	params, ierr := normalizeServers(msg.Params, true)
	if ierr != nil {
		return nil, ierr.rpcError()
	}
	var p acpsdk.NewSessionRequest
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return p.McpServers, nil
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
		var re *jsonrpc.Error
		var data struct {
			Path string `json:"path"`
		}
		if !errors.As(err, &re) || re.Code != codeInvalidParams || json.Unmarshal(re.Data, &data) != nil || data.Path != bad.path {
			t.Errorf("%s: %v, want invalid params at %s", bad.servers, err, bad.path)
		}
	}
}

// FuzzInput feeds arbitrary client input through the connection and the
// routes of a bare agent: nothing panics, every answer is one JSON-RPC
// 2.0 message per line, and the mcpServers of every session/new that
// passes the checks convert without error.
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
		var out testbin.SyncBuffer
		served := func(ctx context.Context, r *jsonrpc.Request) (any, error) {
			if r.Method == acpsdk.AgentMethodSessionNew {
				params, ierr := normalizeServers(r.Params, true)
				if ierr != nil {
					return nil, ierr.rpcError()
				}
				var p acpsdk.NewSessionRequest
				if decodeParams(params, &p) == nil {
					if _, err := serverSpecs(p.McpServers); err != nil {
						t.Errorf("servers that passed do not convert: %q: %v", params, err)
					}
				}
			}
			return nil, nil
		}
		conn := jsonrpc.New(bytes.NewReader(data), &out, jsonrpc.Options{Handler: served})
		conn.Start()
		<-conn.Done()
		if err := conn.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, reply := range bytes.Split(bytes.TrimSpace([]byte(out.String())), []byte("\n")) {
			if len(reply) > 0 && !json.Valid(reply) {
				t.Fatalf("invalid reply %q", reply)
			}
		}
	})
}
