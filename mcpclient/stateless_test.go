package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpgate/acpgate/mcpclient"
)

// statelessServer is a bare 2026-07-28 streamable HTTP server, as the
// conformance suite's mocks are: POST only (no GET stream: 404), no
// initialize handshake (400 -32020 without MCP-Protocol-Version).
// refuseFirst answers the first POST with -32022 listing 2026-07-28;
// needsToken answers every request but initialize without a bearer token
// with 401 and a challenge.
type statelessServer struct {
	refuseFirst, needsToken bool

	mu      sync.Mutex
	methods []string // every POST's method, with "!" for a refused one
}

func (s *statelessServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	s.mu.Lock()
	first := len(s.methods) == 0
	refused := "!"
	defer func() { s.mu.Lock(); s.methods = append(s.methods, refused+req.Method); s.mu.Unlock() }()
	s.mu.Unlock()
	answer := func(status int, v map[string]any) {
		v["jsonrpc"], v["id"] = "2.0", req.ID
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case s.needsToken && req.Method != "initialize" && r.Header.Get("Authorization") == "":
		w.Header().Set("WWW-Authenticate", `Bearer scope="mcp"`)
		http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
	case r.Header.Get("MCP-Protocol-Version") == "":
		answer(http.StatusBadRequest, map[string]any{"error": map[string]any{"code": -32020, "message": "Missing MCP-Protocol-Version header"}})
	case s.refuseFirst && first:
		answer(http.StatusBadRequest, map[string]any{"error": map[string]any{"code": -32022, "message": "Unsupported protocol version",
			"data": map[string]any{"supported": []string{"2026-07-28"}, "requested": r.Header.Get("MCP-Protocol-Version")}}})
	case req.Method == "server/discover":
		refused = ""
		answer(http.StatusOK, map[string]any{"result": map[string]any{"supportedVersions": []string{"2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{}}, "resultType": "complete",
			"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "stateless", "version": "1"}}}})
	case req.Method == "tools/list":
		refused = ""
		answer(http.StatusOK, map[string]any{"result": map[string]any{"tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}, "resultType": "complete"}})
	default:
		refused = ""
		answer(http.StatusOK, map[string]any{"result": map[string]any{"resultType": "complete"}})
	}
}

// startStateless serves srv on 127.0.0.1 and starts a Manager with it as
// the http server "s".
func startStateless(t *testing.T, srv *statelessServer) *mcpclient.Manager {
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	opts, _ := fastOpts(t)
	return start(t, opts, mcpclient.ServerSpec{Name: "s", Transport: mcpclient.TransportHTTP, URL: ts.URL, AllowInsecureHTTP: true})
}

// A 2026-07-28 server that refuses the first server/discover with -32022
// while listing the very version sent is probed again with it (SEP-2575),
// not taken for an older server: it is ready on 2026-07-28, with no GET
// stream and no initialize ever sent.
func TestStatelessRetryOnUnsupportedVersion(t *testing.T) {
	t.Parallel()
	srv := &statelessServer{refuseFirst: true}
	m := startStateless(t, srv)
	mustReady(t, m, "s")
	if st, _ := m.Status("s"); st.ProtocolVersion != "2026-07-28" {
		t.Errorf("protocol %q, want 2026-07-28", st.ProtocolVersion)
	}
	methods := srv.seen(t)
	if len(methods) < 2 || methods[0] != "!server/discover" || methods[1] != "server/discover" {
		t.Fatalf("requests %q, want a refused server/discover, then server/discover", methods)
	}
}

// A 2026-07-28 server that answers server/discover with 401 wants a
// sign-in: the server waits for one (needs-auth), and is not taken for an
// older server (no initialize, no SSE fallback, not failed).
func TestStatelessDiscoverNeedsSignIn(t *testing.T) {
	t.Parallel()
	srv := &statelessServer{needsToken: true}
	m := startStateless(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := m.Status("s")
	if st.State != mcpclient.StateNeedsAuth || !errors.Is(st.Err, mcpclient.ErrNeedsAuth) {
		t.Fatalf("state %s (%v), want needs-auth", st.State, st.Err)
	}
	srv.seen(t)
}

// seen returns the methods srv was sent ("!" before a refused one),
// failing the test if an initialize was among them: a 2026-07-28 server is
// never taken for an older one.
func (s *statelessServer) seen(t *testing.T) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.methods {
		if m == "initialize" || m == "!initialize" {
			t.Fatalf("an initialize was sent: %q", s.methods)
		}
	}
	return slices.Clone(s.methods)
}
