package mcpservers_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/acpgate/acpgate/internal/inputs/mcpservers"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
	"github.com/acpgate/acpgate/mcpclient"
)

// TestParseShapes: every shape is accepted and normalised into what
// acp-go-sdk decodes as intended (stdio with args and env arrays, http and
// sse with a type and a headers array), in the document's order.
func TestParseShapes(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"ACP list", `[
			{"name": "fs", "command": "fs-server", "args": ["--root", "/"], "env": [{"name": "TOKEN", "value": "t"}]},
			{"name": "bare", "command": "bare-server"},
			{"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "Authorization", "value": "Bearer x"}]},
			{"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse"}]`,
			`[{"args":["--root","/"],"command":"fs-server","env":[{"name":"TOKEN","value":"t"}],"name":"fs"},` +
				`{"args":[],"command":"bare-server","env":[],"name":"bare"},` +
				`{"headers":[{"name":"Authorization","value":"Bearer x"}],"name":"web","type":"http","url":"http://127.0.0.1:9/mcp"},` +
				`{"headers":[],"name":"old","type":"sse","url":"http://127.0.0.1:9/sse"}]`},
		{"ACP list, liberal", `[
			{"type": "stdio", "name": "b", "command": "b", "args": null, "env": null, "_meta": {"x": 1}},
			{"name": "c", "command": "c", "env": {"Z": "2", "A": "1"}},
			{"name": "f", "url": "https://h/mcp", "headers": {"Authorization": "Bearer x"}},
			{"type": "streamable-http", "name": "h", "url": "https://h/mcp", "headers": null},
			{"type": "streamableHttp", "name": "i", "url": "https://h/mcp"},
			{"type": null, "name": "both", "command": "x", "url": "https://h/"}]`,
			`[{"args":[],"command":"b","env":[],"name":"b"},` +
				`{"args":[],"command":"c","env":[{"name":"A","value":"1"},{"name":"Z","value":"2"}],"name":"c"},` +
				`{"headers":[{"name":"Authorization","value":"Bearer x"}],"name":"f","type":"http","url":"https://h/mcp"},` +
				`{"headers":[],"name":"h","type":"http","url":"https://h/mcp"},` +
				`{"headers":[],"name":"i","type":"http","url":"https://h/mcp"},` +
				`{"args":[],"command":"x","env":[],"name":"both"}]`},
		{"empty list", `[]`, `[]`},
		{"Claude Desktop", `{"mcpServers": {
			"zeta": {"command": "npx", "args": ["-y", "server"], "env": {"B": "2", "A": "1"}},
			"alpha": {"url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
			"remote": {"type": "streamable-http", "url": "https://example.com/mcp2"},
			"legacy": {"type": "sse", "url": "https://example.com/sse"},
			"off": {"command": "unused", "disabled": true},
			"on": {"command": "used", "disabled": false}
		}, "other": 1}`,
			`[{"args":["-y","server"],"command":"npx","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"name":"zeta"},` +
				`{"headers":[{"name":"X-Key","value":"k"}],"name":"alpha","type":"http","url":"https://example.com/mcp"},` +
				`{"headers":[],"name":"remote","type":"http","url":"https://example.com/mcp2"},` +
				`{"headers":[],"name":"legacy","type":"sse","url":"https://example.com/sse"},` +
				`{"args":[],"command":"used","env":[],"name":"on"}]`},
		{"VS Code", `{"inputs": [], "servers": {
			"local": {"type": "stdio", "command": "srv"},
			"web": {"type": "http", "url": "http://localhost:3000/mcp"},
			"vs": {"type": "streamableHttp", "url": "https://h/"}}}`,
			`[{"args":[],"command":"srv","env":[],"name":"local"},{"headers":[],"name":"web","type":"http","url":"http://localhost:3000/mcp"},` +
				`{"headers":[],"name":"vs","type":"http","url":"https://h/"}]`},
		{"mcpServers wins over servers", `{"mcpServers": {"a": {"command": "a"}}, "servers": {"b": {"command": "b"}}}`,
			`[{"args":[],"command":"a","env":[],"name":"a"}]`},
		{"servers before mcpServers", `{"servers": {"b": {"command": "b"}}, "mcpServers": {"a": {"command": "a"}}}`,
			`[{"args":[],"command":"a","env":[],"name":"a"}]`},
		{"empty object", `{"mcpServers": {}}`, `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers, err := mcpservers.Parse([]byte(tc.doc), mcpservers.Options{CheckURLs: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := testbin.JSON(t, servers); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			// The normalised JSON reads back as the same servers
			// (acp/sdkservers checks what acp-go-sdk makes of it).
			var back []mcpservers.Server
			if err := json.Unmarshal([]byte(testbin.JSON(t, servers)), &back); err != nil || testbin.JSON(t, back) != tc.want {
				t.Errorf("round trip: %v %s", err, testbin.JSON(t, back))
			}
		})
	}
}

// TestParseErrors: every error path yields an *Error with the JSON path of
// the offending value, wrapping the sentinel of its kind.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, path string
		want            error
	}{
		{"empty", ``, "", mcpservers.ErrSyntax},
		{"blank", " \n", "", mcpservers.ErrSyntax},
		{"not JSON", `[{"name": }]`, "", mcpservers.ErrSyntax},
		{"trailing data", `{"mcpServers": {}} {}`, "", mcpservers.ErrSyntax},
		{"string", `"x"`, "", mcpservers.ErrKind},
		{"number", `5`, "", mcpservers.ErrKind},
		{"no servers member", `{"other": {}}`, "mcpServers", mcpservers.ErrMissing},
		{"mcpServers array", `{"mcpServers": []}`, "mcpServers", mcpservers.ErrKind},
		{"servers string", `{"servers": "x"}`, "servers", mcpservers.ErrKind},
		{"object entry string", `{"mcpServers": {"s": "npx server"}}`, "mcpServers.s", mcpservers.ErrKind},
		{"object entry null", `{"mcpServers": {"s": null}}`, "mcpServers.s", mcpservers.ErrKind},
		{"object name blank", `{"mcpServers": {" ": {"command": "x"}}}`, `mcpServers[" "]`, mcpservers.ErrEmpty},
		{"object name duplicate", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, "mcpServers.a", mcpservers.ErrDuplicate},
		{"object name quoted in path", `{"mcpServers": {"my server": {"args": []}}}`, `mcpServers["my server"]`, mcpservers.ErrNoTransport},
		{"disabled string", `{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}`, "mcpServers.a.disabled", mcpservers.ErrKind},
		{"neither command nor url", `{"mcpServers": {"bad": {"args": []}}}`, "mcpServers.bad", mcpservers.ErrNoTransport},
		{"unknown type", `{"mcpServers": {"ws": {"type": "websocket", "url": "ws://h/"}}}`, "mcpServers.ws.type", mcpservers.ErrUnsupportedType},
		{"type number", `[{"type": 1, "name": "g", "url": "https://h/"}]`, "[0].type", mcpservers.ErrKind},
		{"env value number", `{"mcpServers": {"e": {"command": "x", "env": {"N": 1}}}}`, "mcpServers.e.env.N", mcpservers.ErrKind},
		{"env key quoted", `{"mcpServers": {"e": {"command": "x", "env": {"A B": 1}}}}`, `mcpServers.e.env["A B"]`, mcpservers.ErrKind},
		{"env empty key", `[{"name": "a", "command": "x", "env": {"": "v"}}]`, "[0].env", mcpservers.ErrEmpty},
		{"env string", `[{"name": "a", "command": "x", "env": "A=1"}]`, "[0].env", mcpservers.ErrKind},
		{"env pair not object", `[{"name": "a", "command": "x", "env": ["A=1"]}]`, "[0].env[0]", mcpservers.ErrKind},
		{"env pair name missing", `[{"name": "a", "command": "x", "env": [{"value": "v"}]}]`, "[0].env[0].name", mcpservers.ErrMissing},
		{"env pair value missing", `[{"name": "a", "command": "x", "env": [{"name": "A"}]}]`, "[0].env[0].value", mcpservers.ErrMissing},
		{"env pair value bool", `[{"name": "a", "command": "x", "env": [{"name": "A", "value": true}]}]`, "[0].env[0].value", mcpservers.ErrKind},
		{"headers string", `[{"type": "http", "name": "h", "url": "https://h/", "headers": "x"}]`, "[0].headers", mcpservers.ErrKind},
		{"header value array", `[{"name": "h", "url": "https://h/", "headers": {"X-Key": ["v"]}}]`, "[0].headers.X-Key", mcpservers.ErrKind},
		{"list entry number", `[1]`, "[0]", mcpservers.ErrKind},
		{"list entry string", `[{"name": "a", "command": "x"}, "b"]`, "[1]", mcpservers.ErrKind},
		{"name missing", `[{"command": "x"}]`, "[0].name", mcpservers.ErrMissing},
		{"name number", `[{"name": 1, "command": "x"}]`, "[0].name", mcpservers.ErrKind},
		{"name blank", `[{"name": " ", "command": "x"}]`, "[0].name", mcpservers.ErrEmpty},
		{"name duplicate", `[{"name": "a", "command": "x"}, {"name": "a", "url": "https://h/"}]`, "[1].name", mcpservers.ErrDuplicate},
		{"name newline", `[{"name": "a\n# SYSTEM", "command": "x"}]`, "[0].name", mcpclient.ErrBadName},
		{"name escape", `[{"name": "a\u001b[31m", "command": "x"}]`, "[0].name", mcpclient.ErrBadName},
		{"name bidi override", `[{"name": "a\u202eb", "command": "x"}]`, "[0].name", mcpclient.ErrBadName},
		{"name line separator", `[{"name": "a\u2028b", "command": "x"}]`, "[0].name", mcpclient.ErrBadName},
		{"object name newline", `{"mcpServers": {"a\nb": {"command": "x"}}}`, `mcpServers["a\nb"]`, mcpclient.ErrBadName},
		{"stdio without command", `[{"type": "stdio", "name": "n", "url": "https://h/"}]`, "[0].command", mcpservers.ErrMissing},
		{"command empty", `[{"name": "n", "command": ""}]`, "[0].command", mcpservers.ErrEmpty},
		{"http without url", `[{"type": "http", "name": "n", "command": "x"}]`, "[0].url", mcpservers.ErrMissing},
		{"url number", `[{"type": "sse", "name": "n", "url": 5}]`, "[0].url", mcpservers.ErrKind},
		{"args string", `[{"name": "a", "command": "x", "args": "-v"}]`, "[0].args", mcpservers.ErrKind},
		{"args element", `[{"name": "a", "command": "x", "args": ["-v", 3]}]`, "[0].args[1]", mcpservers.ErrKind},
		{"url scheme", `[{"name": "h", "type": "http", "url": "nope"}]`, "[0].url", mcpclient.ErrURLScheme},
		{"url no host", `{"servers": {"h": {"url": "https:///x"}}}`, "servers.h.url", mcpclient.ErrURLHost},
		{"url insecure", `{"mcpServers": {"h": {"url": "http://example.com/"}}}`, "mcpServers.h.url", mcpclient.ErrInsecureHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mcpservers.Parse([]byte(tc.doc), mcpservers.Options{CheckURLs: true})
			var perr *mcpservers.Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if perr.Path != tc.path || !errors.Is(err, tc.want) {
				t.Errorf("Parse = %q (path %q), want path %q wrapping %v", err, perr.Path, tc.path, tc.want)
			}
		})
	}
}

// TestParseListPaths: a request's list is reported at its place in the
// params, and URLs are left to mcpclient unless asked for.
func TestParseListPaths(t *testing.T) {
	_, err := mcpservers.ParseList(json.RawMessage(`[{"name": "a", "command": "x", "env": {"K": 1}}]`), "mcpServers", mcpservers.Options{})
	var perr *mcpservers.Error
	if !errors.As(err, &perr) || perr.Path != "mcpServers[0].env.K" || perr.Error() != "mcpServers[0].env.K: must be a string, got number" {
		t.Errorf("ParseList = %v", err)
	}
	_, err = mcpservers.ParseList(json.RawMessage(`{"a": {}}`), "mcpServers", mcpservers.Options{})
	if !errors.As(err, &perr) || perr.Path != "mcpServers" || !errors.Is(err, mcpservers.ErrKind) {
		t.Errorf("ParseList(object) = %v", err)
	}
	servers, err := mcpservers.ParseList(json.RawMessage(`[{"name": "p", "url": "http://example.com/"}]`), "mcpServers", mcpservers.Options{})
	if err != nil || len(servers) != 1 || servers[0].Transport != mcpclient.TransportHTTP {
		t.Errorf("plain http without CheckURLs: %v %v", servers, err)
	}
	if _, err := mcpservers.ParseList(json.RawMessage(`[{"name": "p", "url": "http://example.com/"}]`), "", mcpservers.Options{CheckURLs: true, AllowInsecureHTTP: true}); err != nil {
		t.Errorf("plain http allowed: %v", err)
	}
}

// TestEnvSecretNotQuoted: an error about an env or header value never
// quotes it.
func TestEnvSecretNotQuoted(t *testing.T) {
	_, err := mcpservers.Parse([]byte(`[{"name": "a", "command": "x", "env": [{"name": "TOKEN", "value": ["sk-secret-1234"]}]}]`), mcpservers.Options{})
	if err == nil || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("error %v", err)
	}
}

func TestParseType(t *testing.T) {
	for typ, want := range map[string]mcpclient.Transport{
		"stdio": mcpclient.TransportStdio, "http": mcpclient.TransportHTTP, "sse": mcpclient.TransportSSE,
		"streamable-http": mcpclient.TransportHTTP, "streamableHttp": mcpclient.TransportHTTP,
	} {
		if got, err := mcpservers.ParseType(typ); got != want || err != nil {
			t.Errorf("ParseType(%q) = %q, %v; want %q", typ, got, err, want)
		}
	}
	for _, typ := range []string{"", "websocket", "HTTP", "acp"} {
		if _, err := mcpservers.ParseType(typ); !errors.Is(err, mcpservers.ErrUnsupportedType) {
			t.Errorf("ParseType(%q) = %v, want ErrUnsupportedType", typ, err)
		}
	}
	for _, tc := range []struct {
		cmd, url bool
		want     mcpclient.Transport
	}{{true, true, mcpclient.TransportStdio}, {true, false, mcpclient.TransportStdio}, {false, true, mcpclient.TransportHTTP}, {false, false, ""}} {
		if got := mcpservers.Infer(tc.cmd, tc.url); got != tc.want {
			t.Errorf("Infer(%v, %v) = %q, want %q", tc.cmd, tc.url, got, tc.want)
		}
	}
}

// TestSpecs: entries become mcpclient specs (env and headers as maps, an
// acp server's serverId as ServerID); an empty entry is refused at its
// path.
func TestSpecs(t *testing.T) {
	servers, err := mcpservers.ParseList([]byte(`[{"name": "s", "command": "c", "args": ["a"], "env": {"K": "V"}},
		{"name": "h", "url": "https://h/", "headers": {"X": "1"}}, {"type": "sse", "name": "e", "url": "https://h/sse"},
		{"type": "acp", "name": "t", "serverId": "srv-1"}]`), "mcpServers", mcpservers.Options{ACP: true})
	if err != nil {
		t.Fatal(err)
	}
	specs, err := mcpservers.Specs(servers, "mcpServers")
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"Name":"s","Transport":"stdio","Command":"c","Args":["a"],"Env":{"K":"V"}},{"Name":"h","Transport":"http","URL":"https://h/","Headers":{"X":"1"}},{"Name":"e","Transport":"sse","URL":"https://h/sse"},{"Name":"t","Transport":"acp","ServerID":"srv-1"}]`
	type brief struct {
		Name      string
		Transport mcpclient.Transport
		Command   string            `json:",omitempty"`
		Args      []string          `json:",omitempty"`
		Env       map[string]string `json:",omitempty"`
		URL       string            `json:",omitempty"`
		Headers   map[string]string `json:",omitempty"`
		ServerID  string            `json:",omitempty"`
	}
	var got []brief
	for _, s := range specs {
		got = append(got, brief{s.Name, s.Transport, s.Command, s.Args, s.Env, s.URL, s.Headers, s.ServerID})
	}
	if testbin.JSON(t, got) != want {
		t.Errorf("got  %s\nwant %s", testbin.JSON(t, got), want)
	}
	_, err = mcpservers.Specs([]mcpservers.Server{servers[0], {}}, "mcpServers")
	var perr *mcpservers.Error
	if !errors.As(err, &perr) || perr.Path != "mcpServers[1]" || !errors.Is(err, mcpservers.ErrUnsupportedType) {
		t.Errorf("Specs(empty) = %v", err)
	}
}

// TestParseACP: an acp server (MCP over ACP) is taken only when asked for,
// with its serverId; the SDK decodes the normalised entry as one. A
// missing or blank serverId or name is an error naming it.
func TestParseACP(t *testing.T) {
	list := `[{"type": "acp", "name": "tools", "serverId": "550e8400", "_meta": {"x": 1}}]`
	servers, err := mcpservers.ParseList([]byte(list), "mcpServers", mcpservers.Options{ACP: true})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"name":"tools","serverId":"550e8400","type":"acp"}]`
	if got := testbin.JSON(t, servers); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	var back []mcpservers.Server
	if err := json.Unmarshal([]byte(want), &back); err != nil || !reflect.DeepEqual(back, servers) {
		t.Errorf("round trip: %v %s", err, testbin.JSON(t, back))
	}
	for _, tc := range []struct {
		name, list, path string
		acp              bool
		want             error
		says             string
	}{
		{"not advertised", list, "mcpServers[0].type", false, mcpservers.ErrUnsupportedType, "mcpCapabilities.acp"},
		{"no serverId", `[{"type": "acp", "name": "t"}]`, "mcpServers[0].serverId", true, mcpservers.ErrMissing, "missing"},
		{"the old id", `[{"type": "acp", "name": "t", "id": "x"}]`, "mcpServers[0].serverId", true, mcpservers.ErrMissing, `"id" is its old name`},
		{"blank serverId", `[{"type": "acp", "name": "t", "serverId": " "}]`, "mcpServers[0].serverId", true, mcpservers.ErrEmpty, "must not be empty"},
		{"serverId number", `[{"type": "acp", "name": "t", "serverId": 7}]`, "mcpServers[0].serverId", true, mcpservers.ErrKind, "must be a string"},
		{"no name", `[{"type": "acp", "serverId": "x"}]`, "mcpServers[0].name", true, mcpservers.ErrMissing, "missing"},
		{"blank name", `[{"type": "acp", "name": "", "serverId": "x"}]`, "mcpServers[0].name", true, mcpservers.ErrEmpty, "must not be empty"},
		{"in a file", `{"mcpServers": {"t": {"type": "acp", "serverId": "x"}}}`, "mcpServers.t.type", false, mcpservers.ErrUnsupportedType, "MCP over ACP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if strings.HasPrefix(tc.list, "{") {
				_, err = mcpservers.Parse([]byte(tc.list), mcpservers.Options{})
			} else {
				_, err = mcpservers.ParseList([]byte(tc.list), "mcpServers", mcpservers.Options{ACP: tc.acp})
			}
			var perr *mcpservers.Error
			if !errors.As(err, &perr) || perr.Path != tc.path || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v, want %v at %s saying %q", err, tc.want, tc.path, tc.says)
			}
		})
	}
}

// TestNamesAndBuilders: an entry of no transport does not marshal; CheckNames finds a
// duplicate; the builders never leave a nil array.
func TestNamesAndBuilders(t *testing.T) {
	list := []mcpservers.Server{
		mcpservers.Stdio("a", "cmd", nil, nil),
		mcpservers.Remote(mcpclient.TransportHTTP, "b", "https://h/", nil),
		mcpservers.Remote(mcpclient.TransportSSE, "c", "https://h/sse", nil),
		mcpservers.ACP("d", "id-d"),
		{Name: "e"},
	}
	if _, err := json.Marshal(list[4]); !errors.Is(err, mcpservers.ErrUnsupportedType) {
		t.Errorf("an entry of no transport marshals: %v", err)
	}
	if got := testbin.JSON(t, list[:3]); got != `[{"args":[],"command":"cmd","env":[],"name":"a"},{"headers":[],"name":"b","type":"http","url":"https://h/"},{"headers":[],"name":"c","type":"sse","url":"https://h/sse"}]` {
		t.Errorf("builders: %s", got)
	}
	if err := mcpservers.CheckNames(list[:3]); err != nil {
		t.Error(err)
	}
	if err := mcpservers.CheckNames(append(list[:3:3], mcpservers.Stdio("b", "x", nil, nil))); !errors.Is(err, mcpservers.ErrDuplicate) {
		t.Errorf("CheckNames = %v, want ErrDuplicate", err)
	}
}
