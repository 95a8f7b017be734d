package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The protocol revisions the server speaks (-protocol).
const (
	protoLegacy = "2025-11-25" // initialize only; server/discover refused
	protoBoth   = "both"       // both (mcp-go's own behaviour)
	protoModern = "2026-07-28" // server/discover only; initialize refused
)

// modernFlags registers the flags of the 2026-07-28 features.
func modernFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.protocol, "protocol", protoLegacy, "revisions spoken: 2025-11-25 (refuses server/discover), both, or 2026-07-28 (refuses initialize)")
	fs.DurationVar(&c.toolsTTL, "tools-ttl", 0, "ttlMs of tools/list results (2026-07-28 requests only); tool changes are then not announced")
	fs.DurationVar(&c.startDelay, "start-delay", 0, "sleep this long at start before reading anything")
	fs.BoolVar(&c.refuseListen, "refuse-listen", false, "answer every subscriptions/listen with an error")
	fs.BoolVar(&c.discoverEmpty, "discover-empty", false, "http: answer server/discover with an empty result, as servers that answer every method do (speak 2025-11-25 otherwise)")
	fs.Int64Var(&c.readyAt, "ready-at", 0, "read nothing before this time (Unix nanoseconds): a server ready a set time after its launch, its own start-up work included")
}

// discoverEmptyHTTP returns h with a POSTed server/discover answered by
// an empty result (-discover-empty), or h itself.
func (a revisionRole) discoverEmptyHTTP(h http.Handler) http.Handler {
	if !a.cfg.discoverEmpty {
		return h
	}
	return answeringPOSTs(h, func(_ *http.Request, body []byte) (any, bool) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &req) != nil || req.Method != string(mcp.MethodServerDiscover) {
			return nil, false
		}
		return map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": req.ID, "result": map[string]any{}}, true
	})
}

// answeringPOSTs returns h with the POSTs that answer takes (reporting
// true) answered by what it returns, as application/json, before h sees
// them; h gets the others with their body intact.
func answeringPOSTs(h http.Handler, answer func(r *http.Request, body []byte) (any, bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if out, ok := answer(r, body); ok {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// waitReadyAt sleeps until -ready-at, if it is set and still ahead.
func (a revisionRole) waitReadyAt() {
	if a.cfg.readyAt > 0 {
		time.Sleep(time.Until(time.Unix(0, a.cfg.readyAt)))
	}
}

// protocolOptions are the server options of -tools-ttl.
func (a revisionRole) protocolOptions() []server.ServerOption {
	if a.cfg.toolsTTL <= 0 {
		return nil
	}
	return []server.ServerOption{
		server.WithMethodCacheHints(mcp.MethodToolsList, a.cfg.toolsTTL.Milliseconds(), mcp.CacheScopePrivate),
		server.WithToolCapabilities(false),
	}
}

// gateProtocol refuses, before mcp-go sees it, a request of a revision the
// server does not speak (see -protocol), and delays a server/discover
// answer by -init-delay as initialize's.
func (a revisionRole) gateProtocol(ctx context.Context, method mcp.MCPMethod) error {
	switch {
	case method == mcp.MethodServerDiscover && a.cfg.protocol == protoLegacy:
		return errors.New("method not found")
	case method == mcp.MethodSubscriptionsListen && a.cfg.refuseListen:
		return errors.New("subscriptions/listen refused (-refuse-listen)")
	case method == mcp.MethodInitialize && a.cfg.protocol == protoModern:
		return errors.New("initialize is not supported: this server speaks 2026-07-28 only")
	case method == mcp.MethodServerDiscover && a.cfg.initDelay > 0:
		t := time.NewTimer(a.cfg.initDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return errors.New("server/discover abandoned")
		}
	}
	return nil
}

// addModernTools registers the tool that asks through a multi round-trip
// input_required result (see the package doc).
func (a revisionRole) addModernTools() {
	a.srv.AddTool(mcp.NewTool("ask",
		mcp.WithDescription("Asks the user (input_required with an elicitation, 2026-07-28; mcp-go turns it into elicitation/create for older clients) and returns the answer as JSON."),
		mcp.WithString("message", mcp.DefaultString("Your name?")),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if resp, ok := req.Params.InputResponses["answer"]; ok {
			b, err := json.Marshal(resp)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return text("answer " + string(b)), nil
		}
		return server.NewInputRequestBuilder("asked").Elicit("answer", mcp.ElicitationParams{
			Message: req.GetString("message", "Your name?"),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
				"name": map[string]any{"type": "string"},
			}, "required": []string{"name"}},
		}).ToolResult(), nil
	})
}

// validProtocol reports whether -protocol names a known mode.
func validProtocol(p string) error {
	switch p {
	case protoLegacy, protoBoth, protoModern:
		return nil
	}
	return fmt.Errorf("unknown -protocol %q (want 2025-11-25, both or 2026-07-28)", p)
}

// revisionRole is the app's side of protocol revisions: discovery, which
// revisions it speaks, and the 2026-07-28 tools.
type revisionRole struct{ *app }
