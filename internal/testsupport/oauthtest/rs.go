package oauthtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// rsHandler serves the protected MCP server and its metadata.
func (s *Server) rsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		s.servePRM(w, r, false)
	})
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", func(w http.ResponseWriter, r *http.Request) {
		s.servePRM(w, r, true)
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		if !s.config().LegacyMetadata {
			http.NotFound(w, r)
			return
		}
		s.serveASMetadata(w, r)
	})
	mux.Handle("/mcp", s.protect(s.mcp))
	sse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.sse.ServeHTTP(w, r) })
	mux.Handle("/sse", s.protect(sse))
	mux.Handle("/message", s.protect(sse))
	return mux
}

// prmURL is where the protected-resource metadata is.
func (s *Server) prmURL(cfg Config) string {
	if cfg.RootMetadata {
		return s.RS.URL + "/.well-known/oauth-protected-resource"
	}
	return s.RS.URL + "/.well-known/oauth-protected-resource/mcp"
}

func (s *Server) servePRM(w http.ResponseWriter, r *http.Request, root bool) {
	s.record("prm", r)
	cfg := s.config()
	if cfg.NoResourceMetadata || root != cfg.RootMetadata {
		http.NotFound(w, r)
		return
	}
	resource := s.MCPURL()
	if root {
		resource = s.RS.URL
	}
	if cfg.Resource != "" {
		resource = cfg.Resource
	}
	md := map[string]any{"resource": resource, "authorization_servers": []string{s.Issuer()}}
	if cfg.ScopesSupported != nil {
		md["scopes_supported"] = cfg.ScopesSupported
	}
	writeJSON(w, http.StatusOK, md)
}

// protect puts the bearer check, and the tools' scope checks, in front of
// h.
func (s *Server) protect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.record("mcp", r)
		cfg := s.config()
		scheme := "Bearer "
		if cfg.DPoP {
			scheme = "DPoP "
		}
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), scheme)
		s.mu.Lock()
		g := s.tokens[tok]
		s.mu.Unlock()
		if g == nil || time.Now().After(g.expiry) || (g.resource != s.MCPURL() && g.resource != s.RS.URL && g.resource != cfg.Resource) {
			s.challenge(w, cfg, http.StatusUnauthorized, "invalid_token", cfg.ChallengeScope)
			return
		}
		if cfg.DPoP && !s.resourceProof(w, r, cfg, tok, g) {
			return
		}
		if need := s.toolScope(r, cfg); need != "" && !hasAll(g.scopes, need) {
			s.challenge(w, cfg, http.StatusForbidden, "insufficient_scope", need)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// challenge answers status with a Bearer challenge.
func (s *Server) challenge(w http.ResponseWriter, cfg Config, status int, code, scope string) {
	params := []string{fmt.Sprintf("error=%q", code)}
	if scope != "" {
		params = append(params, fmt.Sprintf("scope=%q", scope))
	}
	if !cfg.NoResourceMetadata && !cfg.NoChallengeMetadata {
		params = append(params, fmt.Sprintf("resource_metadata=%q", s.prmURL(cfg)))
	}
	scheme := "Bearer "
	if cfg.DPoP {
		scheme = "DPoP "
	}
	w.Header().Set("WWW-Authenticate", scheme+strings.Join(params, ", "))
	oauthError(w, status, code, "")
}

// toolScope returns the scope the tool a tools/call request calls needs
// ("" for none, or another request). It leaves r's body readable.
func (s *Server) toolScope(r *http.Request, cfg Config) string {
	if r.Method != http.MethodPost || len(cfg.ToolScopes) == 0 {
		return ""
	}
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var msg struct {
		Method string
		Params struct{ Name string }
	}
	if json.Unmarshal(b, &msg) != nil || msg.Method != "tools/call" {
		return ""
	}
	return cfg.ToolScopes[msg.Params.Name]
}
