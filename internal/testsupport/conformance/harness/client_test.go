package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acpgate/acpgate/internal/testsupport/fake/fakellm"
)

// peer plays acpgate's side of the wire: it sends requests to a harness
// client over a ClientSideConnection and reads the answers.
type peer struct {
	t    *testing.T
	c    *client
	in   io.Writer      // to the client
	out  *bufio.Scanner // from the client
	next int
}

func newPeer(t *testing.T) *peer {
	toClient, in := io.Pipe()
	out, fromClient := io.Pipe()
	log := slog.New(slog.DiscardHandler)
	c := newClient(log, 10*time.Second)
	conn := acp.NewClientSideConnection(c, fromClient, toClient)
	conn.SetLogger(log)
	t.Cleanup(func() {
		in.Close()
		fromClient.Close()
		<-conn.Done()
		c.closeFollows()
	})
	return &peer{t: t, c: c, in: in, out: bufio.NewScanner(out)}
}

// call sends method with params and returns the result (failing the test
// on an error answer).
func (p *peer) call(method string, params any) json.RawMessage {
	p.t.Helper()
	p.next++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.next, "method": method, "params": params})
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		p.t.Fatal(err)
	}
	if !p.out.Scan() {
		p.t.Fatalf("no answer to %s: %v", method, p.out.Err())
	}
	var resp struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &resp); err != nil || resp.ID != p.next || resp.Error != nil {
		p.t.Fatalf("answer to %s: %s (%v)", method, p.out.Bytes(), err)
	}
	return resp.Result
}

// elicit sends elicitation/create and returns the decoded answer.
func (p *peer) elicit(req acp.UnstableCreateElicitationRequest) acp.UnstableCreateElicitationResponse {
	p.t.Helper()
	var resp acp.UnstableCreateElicitationResponse
	if err := json.Unmarshal(p.call(acp.ClientMethodElicitationCreate, req), &resp); err != nil {
		p.t.Fatal(err)
	}
	return resp
}

// TestURLElicitationFollowed: a URL elicitation is accepted and the URL is
// fetched, its redirect followed to the (loopback) redirect listener, as a
// browser would.
func TestURLElicitationFollowed(t *testing.T) {
	codes := make(chan string, 1)
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query().Get("code")
		io.WriteString(w, "signed in")
	}))
	defer listener.Close()
	authz := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, listener.URL+"/callback?code=c0de&state="+r.URL.Query().Get("state"), http.StatusFound)
	}))
	defer authz.Close()

	p := newPeer(t)
	resp := p.elicit(acp.NewUnstableCreateElicitationRequestUrl("e1", authz.URL+"/authorize?state=s1"))
	if resp.Accept == nil {
		t.Fatalf("answer %+v, want accept", resp)
	}
	if got := <-codes; got != "c0de" {
		t.Errorf("the listener got code %q, want c0de", got)
	}
	errs, err := p.c.waitFollowed(context.Background(), 1)
	if err != nil || errs[0] != nil {
		t.Errorf("follow: %v %v", errs, err)
	}
}

// TestURLElicitationNotLoopback: a URL on another host is declined and
// never fetched; a redirect to another host is not followed.
func TestURLElicitationNotLoopback(t *testing.T) {
	p := newPeer(t)
	// 192.0.2.0/24 is TEST-NET-1: nothing answers there.
	if resp := p.elicit(acp.NewUnstableCreateElicitationRequestUrl("e1", "http://192.0.2.1/authorize")); resp.Decline == nil {
		t.Fatalf("answer %+v, want decline", resp)
	}
	authz := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1/callback", http.StatusFound)
	}))
	defer authz.Close()
	if resp := p.elicit(acp.NewUnstableCreateElicitationRequestUrl("e2", authz.URL)); resp.Accept == nil {
		t.Fatalf("answer %+v, want accept", resp)
	}
	errs, err := p.c.waitFollowed(context.Background(), 1)
	if err != nil || len(errs) != 1 || !errors.Is(errs[0], errNotLoopback) {
		t.Errorf("follows %v (%v), want one that stopped with errNotLoopback", errs, err)
	}
}

// TestFormElicitation: a form is accepted with the defaults of its
// required fields (or a value of their type); optional fields are left
// for acpgate to fill in (SEP-1034).
func TestFormElicitation(t *testing.T) {
	p := newPeer(t)
	req := acp.NewUnstableCreateElicitationRequestForm(acp.UnstableElicitationSchema{
		Properties: map[string]any{
			"name":    map[string]any{"type": "string", "default": "John Doe"},
			"age":     map[string]any{"type": "integer"},
			"status":  map[string]any{"type": "string", "enum": []any{"active", "inactive"}},
			"ok":      map[string]any{"type": "boolean"},
			"comment": map[string]any{"type": "string", "default": "optional"},
		},
		Required: []string{"name", "age", "status", "ok"},
	})
	req.Form.Message = "fill in"
	resp := p.elicit(req)
	if resp.Accept == nil {
		t.Fatalf("answer %+v, want accept", resp)
	}
	want := map[string]any{"name": "John Doe", "age": float64(0), "status": "active", "ok": false}
	if !reflect.DeepEqual(resp.Accept.Content, want) {
		t.Errorf("content %v, want %v", resp.Accept.Content, want)
	}
}

// TestPlan: scenarios that need `oauth` keys define the server in the
// configuration file, with credentials as secret://env references to
// acpgate's environment; the others pass it in session/new.
func TestPlan(t *testing.T) {
	p, err := planFor("auth/client-credentials-jwt", `{"name":"auth/client-credentials-jwt","client_id":"cid","private_key_pem":"PEM","signing_algorithm":"RS256"}`)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.configFile("http://localhost:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(cfg, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"mcpServers": map[string]any{"conformance": map[string]any{
		"type": "http", "url": "http://localhost:1/mcp", "oauth": map[string]any{
			"grantType": "client_credentials", "clientId": "cid", "tokenEndpointAuthMethod": "private_key_jwt",
			"privateKey": "secret://env/CONFORMANCE_PRIVATE_KEY", "signingAlgorithm": "RS256",
		},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config %s", cfg)
	}
	if !reflect.DeepEqual(p.env, []string{"CONFORMANCE_PRIVATE_KEY=PEM"}) || p.signIn {
		t.Errorf("env %q, signIn %v", p.env, p.signIn)
	}

	p, err = planFor("auth/metadata-default", "")
	if err != nil || p.oauth != nil || !p.signIn || len(p.calls) != 1 || p.calls[0].tool != "test-tool" {
		t.Errorf("auth/metadata-default: %+v %v", p, err)
	}
	if cfg, err := p.configFile("http://localhost:1/mcp"); err != nil || string(cfg) != "{}" {
		t.Errorf("config %s %v, want {}", cfg, err)
	}
	if _, err := planFor("auth/pre-registration", "{"); err == nil {
		t.Error("a malformed context is accepted")
	}
}

// TestScenarioArguments: the calls whose arguments come from the
// scenario: http-custom-headers' context toolCalls, verbatim; the invalid
// x-mcp-header tools, which may fail; the schema echo, made by the fake
// model.
func TestScenarioArguments(t *testing.T) {
	p, err := planFor("http-custom-headers", `{"name":"http-custom-headers","toolCalls":[{"name":"test_custom_headers","arguments":{"region":"us-west1","priority":42,"tab_val":"\tx"}},{"name":"test_custom_headers_null","arguments":{"verbose":null}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range p.calls {
		text, err := c.promptText()
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, text)
	}
	want := []string{`/call mcp__conformance__test_custom_headers {"priority":42,"region":"us-west1","tab_val":"\tx"}`, `/call mcp__conformance__test_custom_headers_null {"verbose":null}`}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("calls %q, want %q", texts, want)
	}

	p, _ = planFor("http-invalid-tool-headers", "")
	if len(p.calls) != 1+len(invalidHeaderTools) || p.calls[0].tool != "valid_tool" || p.calls[0].mayFail || !p.calls[1].mayFail {
		t.Errorf("http-invalid-tool-headers: %+v", p.calls)
	}
	p, _ = planFor("http-standard-headers", "")
	if text, _ := p.calls[2].promptText(); text != `/call mcp_read_resource {"server":"conformance","uri":"file:///path/to/file%20name.txt"}` {
		t.Errorf("the resource read is %q", text)
	}

	p, _ = planFor("json-schema-2020-12-preservation", "")
	if p.model == nil || len(p.calls) != 1 || p.calls[0].text == "" {
		t.Fatalf("json-schema-2020-12-preservation: %+v", p)
	}
	schema := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false}`)
	turn := p.model.respond(fakellm.Request{Tools: []fakellm.Tool{
		{Name: "mcp__conformance__json_schema_echo", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "mcp__conformance__json_schema_2020_12_tool", Parameters: schema},
	}})
	if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Name != "mcp__conformance__json_schema_echo" || turn.ToolCalls[0].Arguments != `{"schema":`+string(schema)+`}` {
		t.Errorf("the model's turn: %+v", turn)
	}
	turn = p.model.respond(fakellm.Request{Messages: []fakellm.Message{{Role: "user"}, {Role: "assistant"}, {Role: "tool"}}})
	if turn.Text == "" || len(turn.ToolCalls) != 0 {
		t.Errorf("after the tool's result the model's turn is %+v", turn)
	}
}
