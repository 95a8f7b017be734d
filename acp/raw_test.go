package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestWireName: a private method name the SDK writes is renamed on its
// way out, in a request or a notification, and nothing else is touched.
func TestWireName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":12,"method":"_acpgate/raw/mcp/connect","params":{"serverId":"s"}}`,
			`{"jsonrpc":"2.0","id":12,"method":"mcp/connect","params":{"serverId":"s"}}`},
		{`{"jsonrpc":"2.0","method":"_acpgate/raw/mcp/message","params":{"connectionId":"c","method":"notifications/initialized"}}`,
			`{"jsonrpc":"2.0","method":"mcp/message","params":{"connectionId":"c","method":"notifications/initialized"}}`},
		// Not the method member: a result, params, a string id.
		{`{"jsonrpc":"2.0","id":3,"result":{"method":"_acpgate/raw/x"}}`, ""},
		{`{"jsonrpc":"2.0","id":4,"method":"session/update","params":{"method":"_acpgate/raw/x"}}`, ""},
		{`{"jsonrpc":"2.0","id":"5","method":"_acpgate/raw/mcp/message"}`, ""},
		{`{"jsonrpc":"2.0","id":6,"method":"_acpgate/raw-notification/mcp/message"}`, ""},
		{`not json`, ""},
	} {
		in := []byte(tc.in)
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if got := wireName(in); string(got) != want {
			t.Errorf("wireName(%s) = %s, want %s", tc.in, got, want)
		}
		if string(in) != tc.in {
			t.Errorf("wireName modified its argument: %s", in)
		}
	}
}

// filterLines runs input through the input filter and returns the lines
// handed to the SDK and those answered.
func filterLines(t *testing.T, input string) (passed, answered []string) {
	t.Helper()
	var out bytes.Buffer
	f := newInputFilter(strings.NewReader(input), &out, slog.New(slog.DiscardHandler))
	f.start()
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return splitLines(string(got)), splitLines(out.String())
}

// splitLines splits text into its non-empty lines.
func splitLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestInputFilterMCPOverACP: the filter hands a client's mcp/message on
// under the private names the agent serves (request or notification),
// takes acp servers only after initialize, and turns an answer over the
// message bound into an error for the request it answers.
func TestInputFilterMCPOverACP(t *testing.T) {
	passed, answered := filterLines(t, `{"jsonrpc":"2.0","id":1,"method":"mcp/message","params":{"connectionId":"c","method":"ping"}}
{"jsonrpc":"2.0","method":"mcp/message","params":{"connectionId":"c","method":"notifications/tools/list_changed"}}
`)
	if len(answered) != 0 || len(passed) != 2 ||
		!strings.Contains(passed[0], `"method":"_acpgate/raw/mcp/message"`) || !strings.Contains(passed[0], `"id":1`) ||
		!strings.Contains(passed[1], `"method":"_acpgate/raw-notification/mcp/message"`) || strings.Contains(passed[1], `"id"`) {
		t.Errorf("passed %q, answered %q", passed, answered)
	}

	session := `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[{"type":"acp","name":"t","serverId":"s-1"}]}}` + "\n"
	passed, answered = filterLines(t, session)
	if len(passed) != 0 || len(answered) != 1 || !strings.Contains(answered[0], `"path":"mcpServers[0].type"`) || !strings.Contains(answered[0], "-32602") {
		t.Errorf("before initialize: passed %q, answered %q", passed, answered)
	}
	passed, answered = filterLines(t, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`+"\n"+session)
	if len(answered) != 0 || len(passed) != 2 || !strings.Contains(passed[1], `{"id":"s-1","name":"t","type":"acp"}`) {
		t.Errorf("after initialize: passed %q, answered %q", passed, answered)
	}

	big := `{"jsonrpc":"2.0","id":"t-7","result":{"content":[{"type":"text","text":"` + strings.Repeat("x", maxFrame) + `"}]}}` + "\n"
	passed, answered = filterLines(t, big)
	var resp struct {
		ID    string `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if len(answered) != 0 || len(passed) != 1 || json.Unmarshal([]byte(passed[0]), &resp) != nil ||
		resp.ID != "t-7" || resp.Error.Code != -32603 || !strings.Contains(resp.Error.Message, "larger than 10 MiB") {
		t.Errorf("an over-long answer: passed %.200q, answered %q", passed, answered)
	}
}
