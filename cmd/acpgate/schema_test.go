package main_test

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpgate/acpgate/internal/testsupport/acpschema"
	"github.com/acpgate/acpgate/internal/testsupport/testbin"
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
}

// sentUpdates is every kind of session/update acpgate sends. When the
// whole suite runs (no -run, no -short), each must have been validated at
// least once: a kind no test makes acpgate send would escape the check.
var sentUpdates = []string{
	"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan",
	"available_commands_update", "current_mode_update", "config_option_update", "session_info_update", "usage_update",
	"notice", "compaction_update", "compaction_summary_chunk",
}

// reporting is m, printing the suite's counts after the tests ran, and
// failing the run when the whole suite did not validate every kind of
// update acpgate sends.
func (s *schemaSuite) reporting(m interface{ Run() int }) interface{ Run() int } {
	return runFunc(func() int {
		code := m.Run()
		if r := s.report(); r != "" {
			fmt.Println(r)
		}
		if missing := s.unvalidated(); code == 0 && wholeSuite() && len(missing) > 0 {
			fmt.Printf("acp schema: no test made acpgate send these session updates, so none was validated: %v\n", missing)
			return 1
		}
		return code
	})
}

// wholeSuite reports whether the run is the whole suite: no -run, -skip
// or -short.
func wholeSuite() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}

// unvalidated returns the kinds of sentUpdates no check has seen.
func (s *schemaSuite) unvalidated() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, k := range sentUpdates {
		if s.total.Updates[k] == 0 {
			out = append(out, k)
		}
	}
	return out
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
	return fmt.Sprintf("acp schema: %s; %d connections", s.total, s.conns)
}

// connection returns the check of one connection, which fails t at its
// end if the agent wrote a frame the schema refuses.
func (s *schemaSuite) connection(t testing.TB) *schemaConn {
	t.Helper()
	chk, err := s.load()
	if err != nil {
		t.Fatalf("the ACP schema (the pinned TypeScript SDK's; `make npm` installs it): %v", err)
	}
	c := &schemaConn{chk: chk.New()}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.bad) > 0 {
			t.Errorf("acp schema: acpgate wrote %d frames the ACP schema refuses:\n%s", len(c.bad), strings.Join(c.bad, "\n"))
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.conns++
		s.total.Add(c.chk.Counts())
	})
	return c
}

// schemaConn is the schema check of one connection to acpgate.
type schemaConn struct {
	chk *acpschema.Checker

	mu  sync.Mutex
	bad []string // refused frames: the refusal and the frame
}

// client is what the client writes to the agent, line by line.
func (c *schemaConn) client() io.Writer { return acpschema.Lines(c.chk.Client) }

// agent is what the agent writes to the client, line by line.
func (c *schemaConn) agent() io.Writer { return acpschema.Lines(c.agentFrame) }

// agentFrame checks one frame the agent wrote: any refusal (a frame that
// is not JSON-RPC included) fails the test.
func (c *schemaConn) agentFrame(frame []byte) {
	err := c.chk.Agent(frame)
	if err == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bad = append(c.bad, fmt.Sprintf("  %v\n    frame: %s", err, clip(frame, 300)))
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
