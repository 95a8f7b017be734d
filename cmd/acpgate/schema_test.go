package main_test

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/internal/acpschema"
	"github.com/acpgate/acpgate/testdata/testbin"
)

// knownSchemaViolations are the ways acpgate's messages are known to break
// the ACP JSON Schema of the pinned TypeScript SDK (acpschema.SDKDir): a
// frame refused for one of these does not fail its test; any other refusal
// does. It is a to-do list: each entry goes once acpgate sends what the
// schema asks for (the full suite's report, printed by TestMain with -v,
// lists the entries no test met any more).
//
// An entry matches a refused frame by its method (and, for session/update,
// its sessionUpdate) and one of the schema's failing keywords
// (acpschema.Problem.Location), or, with location "", a method the schema
// does not know; a frame is known when each of its failing keywords is.
var knownSchemaViolations = []knownViolation{
	// MCP over ACP (acp/tunnel.go; TestMCPOverACP): acpgate follows an
	// earlier version of this unstable part of the schema, with
	// connections (mcp/connect, then mcp/message and mcp/disconnect by
	// connectionId); the pinned one has none: the client declares a
	// server in session/new ({"type":"acp","name","serverId"}) and each
	// mcp/message names it by serverId, with the inner MCP request's own
	// id (requestId).
	{method: "mcp/connect", why: "acpgate opens a connection to the client's server, mcp/connect {serverId}, answered with a connectionId; " +
		"the schema has no mcp/connect: mcp/message goes to the serverId directly"},
	{method: "mcp/message", location: "#/$defs/MessageMcpRequest/required", why: "acpgate's requests carry {connectionId, method, params}; " +
		"MessageMcpRequest requires serverId and requestId (a string id of the inner MCP request, not the outer JSON-RPC id)"},
	{method: "mcp/message", notification: true, why: "acpgate sends the inner MCP notifications (notifications/initialized, …) " +
		"as mcp/message notifications {connectionId, method, params}; the schema has no agent-to-client mcp/message notification " +
		"(MessageMcpNotification goes from the client, the provider, to the agent, about an active request)"},
	{method: "mcp/disconnect", why: "acpgate closes its connection with mcp/disconnect {connectionId}; the schema has no such method " +
		"(no connections: a server lasts as long as the session that declared it)"},
}

// knownViolation is an entry of knownSchemaViolations.
type knownViolation struct {
	method string
	// notification: the entry is for notifications of method, not
	// requests (or, for a response, the request it answers).
	notification bool
	update       string // sessionUpdate of a session/update ("": any)
	location     string // the failing keyword ("": acpschema.ErrUnknownMethod)
	why          string // what acpgate sends, what the schema wants
}

// matches reports whether v covers the failing keyword loc of fe.
func (v knownViolation) matches(fe *acpschema.FrameError, loc string) bool {
	return v.method == fe.Method && v.notification == (fe.Kind == acpschema.Notification) &&
		(v.update == "" || v.update == fe.Update) && v.location == loc
}

// String names the entry in the report.
func (v knownViolation) String() string {
	s := v.method
	if v.notification {
		s += " notification"
	}
	if v.update != "" {
		s += " " + v.update
	}
	if v.location == "" {
		return s + ": unknown method"
	}
	return s + ": " + v.location
}

// known returns the entries of knownSchemaViolations that cover each of
// fe's failing keywords, or nil if one is not covered.
func known(fe *acpschema.FrameError) []int {
	locs := fe.Locations()
	if errors.Is(fe, acpschema.ErrUnknownMethod) {
		locs = []string{""}
	}
	var hits []int
	for _, loc := range locs {
		i := slices.IndexFunc(knownSchemaViolations, func(v knownViolation) bool { return v.matches(fe, loc) })
		if i < 0 {
			return nil
		}
		hits = append(hits, i)
	}
	return hits
}

// acpSchema checks every ACP connection to acpgate the tests make.
var acpSchema = &schemaSuite{load: sync.OnceValues(func() (*acpschema.Checker, error) {
	return acpschema.Load(filepath.Join(testbin.ModuleRoot(), acpschema.SDKDir))
})}

// schemaSuite is the ACP schema check of the agents the tests run: the
// schema, compiled once per test binary on first use, and what all the
// connections' checks counted, which TestMain prints at the end.
type schemaSuite struct {
	load func() (*acpschema.Checker, error)

	mu    sync.Mutex
	conns int
	total acpschema.Counts
	known []int // frames refused, by entry of knownSchemaViolations
}

// reporting is m, printing the suite's counts after the tests ran.
func (s *schemaSuite) reporting(m interface{ Run() int }) interface{ Run() int } {
	return runFunc(func() int {
		code := m.Run()
		if r := s.report(); r != "" {
			fmt.Println(r)
		}
		return code
	})
}

// runFunc is a func as a testing.M.
type runFunc func() int

// Run calls f.
func (f runFunc) Run() int { return f() }

// report is what the checks counted, in a few lines ("" if no test made
// a connection).
func (s *schemaSuite) report() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "acp schema: %s; %d connections", s.total, s.conns)
	for i, v := range knownSchemaViolations {
		if i < len(s.known) && s.known[i] > 0 {
			fmt.Fprintf(&b, "\nacp schema: known violation (knownSchemaViolations), %d frames: %s", s.known[i], v)
		} else {
			fmt.Fprintf(&b, "\nacp schema: known violation not met in this run: %s", v)
		}
	}
	return b.String()
}

// connection returns the check of one connection, which fails t at its
// end if the agent wrote a frame the schema refuses that is not in
// knownSchemaViolations.
func (s *schemaSuite) connection(t testing.TB) *schemaConn {
	t.Helper()
	chk, err := s.load()
	if err != nil {
		t.Fatalf("the ACP schema (the pinned TypeScript SDK's; `make npm` installs it): %v", err)
	}
	c := &schemaConn{chk: chk.New(), known: make([]int, len(knownSchemaViolations))}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.bad) > 0 {
			t.Errorf("acp schema: acpgate wrote %d frames the ACP schema refuses (not in knownSchemaViolations):\n%s", len(c.bad), strings.Join(c.bad, "\n"))
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.conns++
		s.total.Add(c.chk.Counts())
		if s.known == nil {
			s.known = make([]int, len(knownSchemaViolations))
		}
		for i, n := range c.known {
			s.known[i] += n
		}
	})
	return c
}

// schemaConn is the schema check of one connection to acpgate.
type schemaConn struct {
	chk *acpschema.Checker

	mu    sync.Mutex
	bad   []string // refused frames not known: the refusal and the frame
	known []int    // known refusals, by entry of knownSchemaViolations
}

// client is what the client writes to the agent, line by line.
func (c *schemaConn) client() io.Writer { return acpschema.Lines(c.chk.Client) }

// agent is what the agent writes to the client, line by line.
func (c *schemaConn) agent() io.Writer { return acpschema.Lines(c.agentFrame) }

// agentFrame checks one frame the agent wrote.
func (c *schemaConn) agentFrame(frame []byte) {
	err := c.chk.Agent(frame)
	var fe *acpschema.FrameError
	if err == nil || !errors.As(err, &fe) {
		return
	}
	hits := known(fe)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range hits {
		c.known[i]++
	}
	if hits == nil {
		c.bad = append(c.bad, fmt.Sprintf("  %v\n    frame: %s", err, clip(frame, 300)))
	}
}

// stdin is the agent's stdin w, with what is written to it checked too.
func (c *schemaConn) stdin(w io.WriteCloser) io.WriteCloser {
	return teeWriteCloser{Writer: io.MultiWriter(c.client(), w), Closer: w}
}

// teeWriteCloser writes through a tee and closes the pipe.
type teeWriteCloser struct {
	io.Writer
	io.Closer
}

// clip is frame cut to at most n bytes, saying so.
func clip(frame []byte, n int) string {
	if len(frame) <= n {
		return string(frame)
	}
	return fmt.Sprintf("%s… (%d bytes)", frame[:n], len(frame))
}

// TestKnownSchemaViolations: every entry says why; a refused frame is
// known only when each of its failing keywords is, for its method and
// kind.
func TestKnownSchemaViolations(t *testing.T) {
	for _, v := range knownSchemaViolations {
		if v.method == "" || v.why == "" {
			t.Errorf("entry %s: no method or no why", v)
		}
	}
	problem := func(loc string) acpschema.Problem { return acpschema.Problem{Location: loc} }
	for _, tc := range []struct {
		fe    *acpschema.FrameError
		known bool
	}{
		{&acpschema.FrameError{Kind: acpschema.Request, Method: "mcp/connect", Err: acpschema.ErrUnknownMethod}, true},
		{&acpschema.FrameError{Kind: acpschema.Notification, Method: "mcp/connect", Err: acpschema.ErrUnknownMethod}, false},
		{&acpschema.FrameError{Kind: acpschema.Request, Method: "mcp/message", Problems: []acpschema.Problem{problem("#/$defs/MessageMcpRequest/required")}}, true},
		{&acpschema.FrameError{Kind: acpschema.Request, Method: "mcp/message", Problems: []acpschema.Problem{
			problem("#/$defs/MessageMcpRequest/required"), problem("#/$defs/MessageMcpRequest/properties/method/type")}}, false},
		{&acpschema.FrameError{Kind: acpschema.Request, Method: "session/request_permission", Problems: []acpschema.Problem{problem("#/$defs/MessageMcpRequest/required")}}, false},
		{&acpschema.FrameError{Kind: acpschema.Request, Method: "no/such/method", Err: acpschema.ErrUnknownMethod}, false},
	} {
		if got := known(tc.fe) != nil; got != tc.known {
			t.Errorf("%v (%q): known %v, want %v", tc.fe, tc.fe.Locations(), got, tc.known)
		}
	}
}
