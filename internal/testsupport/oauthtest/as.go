package oauthtest

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// asHandler serves the authorization server.
func (s *Server) asHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serveASMetadata)
	mux.HandleFunc("POST /register", s.serveRegister)
	mux.HandleFunc("GET /authorize", s.serveAuthorize)
	mux.HandleFunc("POST /token", s.serveToken)
	mux.HandleFunc("POST /device", s.serveDevice)
	mux.HandleFunc("GET /device/verify", s.serveDeviceVerify)
	mux.HandleFunc("POST /idp/token", s.serveIdPToken)
	return mux
}

func (s *Server) serveASMetadata(w http.ResponseWriter, r *http.Request) {
	s.record("as-metadata", r)
	cfg := s.config()
	if cfg.NoServerMetadata {
		http.NotFound(w, r)
		return
	}
	base := s.Issuer()
	md := map[string]any{
		"issuer":                                base,
		"authorization_endpoint":                base + "/authorize",
		"token_endpoint":                        cmp.Or(cfg.TokenEndpoint, base+"/token"),
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": orDefault(cfg.AuthMethods, []string{"none"}),
		"grant_types_supported":                 orDefault(cfg.Grants, []string{"authorization_code", "refresh_token", "client_credentials"}),
	}
	if !cfg.NoRegistration {
		md["registration_endpoint"] = base + "/register"
	}
	if cfg.ServerScopes != nil {
		md["scopes_supported"] = cfg.ServerScopes
	}
	if cfg.CIMD {
		md["client_id_metadata_document_supported"] = true
	}
	if cfg.IssSupported {
		md["authorization_response_iss_parameter_supported"] = true
	}
	if cfg.Device {
		md["device_authorization_endpoint"] = base + "/device"
	}
	writeJSON(w, http.StatusOK, md)
}

func orDefault(v, def []string) []string {
	if v == nil {
		return def
	}
	return v
}

func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	req := Request{Kind: "register", Host: r.Host, Path: r.URL.Path, Header: r.Header.Clone()}
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	req.Form = url.Values{}
	for k, v := range body {
		b, _ := json.Marshal(v)
		req.Form.Set(k, string(b))
	}
	s.mu.Lock()
	s.log = append(s.log, req)
	s.mu.Unlock()
	cfg := s.config()
	if cfg.NoRegistration {
		http.NotFound(w, r)
		return
	}
	if cfg.RefuseRegistration {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "registration is closed")
		return
	}
	id := newToken("client-")
	out := map[string]any{"client_id": id}
	secret := ""
	if cfg.RegisterSecret {
		secret = newToken("secret-")
		out["client_secret"] = secret
	}
	if cfg.RegisterAuthMethod != "" {
		out["token_endpoint_auth_method"] = cfg.RegisterAuthMethod
	}
	s.mu.Lock()
	if s.cfg.Clients == nil {
		s.cfg.Clients = map[string]string{}
	}
	s.cfg.Clients[id] = secret
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	req := s.record("authorize", r)
	cfg := s.config()
	q := req.Form
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Hostname() != "127.0.0.1" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE S256 required", http.StatusBadRequest)
		return
	}
	out := redirect.Query()
	state := q.Get("state")
	if cfg.WrongState {
		state += "-forged"
	}
	out.Set("state", state)
	switch {
	case cfg.WrongIss:
		out.Set("iss", "http://127.0.0.1:1/not-the-issuer")
	case cfg.IssSlash:
		out.Set("iss", s.Issuer()+"/")
	case cfg.IssSupported:
		out.Set("iss", s.Issuer())
	}
	if cfg.Deny {
		out.Set("error", "access_denied")
		out.Set("error_description", "the user said no")
	} else {
		code := newToken("code-")
		s.mu.Lock()
		s.codes[code] = &grant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"),
			challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
		s.mu.Unlock()
		out.Set("code", code)
	}
	redirect.RawQuery = out.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	req := s.record("token", r)
	cfg := s.config()
	if cfg.HoldToken != nil && !s.hold(r, cfg) {
		return
	}
	f := req.Form
	clientID, ok := s.authenticate(r, f, cfg)
	if !ok {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	jkt, ok := s.tokenProof(w, r, cfg)
	if !ok {
		return
	}
	var g *grant
	switch f.Get("grant_type") {
	case "authorization_code":
		g = s.redeemCode(w, f, clientID)
	case "refresh_token":
		g = s.redeemRefresh(w, f, cfg)
	case "client_credentials":
		g = &grant{clientID: clientID, resource: f.Get("resource"), scopes: strings.Fields(f.Get("scope"))}
	case "urn:ietf:params:oauth:grant-type:device_code":
		g = s.redeemDevice(w, r, f)
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		g = s.redeemJAG(w, f, clientID)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	if g == nil {
		return // answered
	}
	bound := *g
	bound.jkt = jkt
	s.issue(w, &bound, cfg)
}

// hold keeps a token request waiting until cfg.HoldToken is closed (true)
// or the request ends (false), counting it in Hanging.
func (s *Server) hold(r *http.Request, cfg Config) bool {
	s.mu.Lock()
	s.hanging++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.hanging--
		s.mu.Unlock()
	}()
	select {
	case cfg.Holding <- struct{}{}:
	default:
	}
	select {
	case <-cfg.HoldToken:
		return true
	case <-r.Context().Done():
		return false
	}
}

// issue answers a token request with a new token for g.
func (s *Server) issue(w http.ResponseWriter, g *grant, cfg Config) {
	ttl := cfg.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	tok := newToken("at-")
	ng := *g
	ng.expiry = time.Now().Add(ttl)
	ng.scopes = slices.DeleteFunc(slices.Clone(g.scopes), func(s string) bool { return s == cfg.DropScope })
	out := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(ttl / time.Second)}
	if ng.jkt != "" {
		out["token_type"] = "DPoP"
	}
	if len(ng.scopes) > 0 {
		out["scope"] = strings.Join(ng.scopes, " ")
	}
	s.mu.Lock()
	s.tokens[tok] = &ng
	if cfg.RefreshTokens {
		rt := newToken("rt-")
		s.refresh[rt] = &ng
		out["refresh_token"] = rt
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) redeemCode(w http.ResponseWriter, f url.Values, clientID string) *grant {
	s.mu.Lock()
	g := s.codes[f.Get("code")]
	delete(s.codes, f.Get("code"))
	s.mu.Unlock()
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	switch {
	case g == nil:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown code")
	case g.clientID != clientID || g.redirectURI != f.Get("redirect_uri"):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code issued to another client or redirect")
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
	case g.resource != f.Get("resource"):
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request")
	default:
		return g
	}
	return nil
}

func (s *Server) redeemRefresh(w http.ResponseWriter, f url.Values, cfg Config) *grant {
	s.mu.Lock()
	g := s.refresh[f.Get("refresh_token")]
	delete(s.refresh, f.Get("refresh_token")) // rotated
	s.mu.Unlock()
	if g == nil || cfg.RevokeRefresh {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "refresh token revoked")
		return nil
	}
	return g
}

// authenticate checks the client's authentication and returns its id.
func (s *Server) authenticate(r *http.Request, f url.Values, cfg Config) (string, bool) {
	if user, pass, ok := r.BasicAuth(); ok {
		id, _ := url.QueryUnescape(user)
		secret, _ := url.QueryUnescape(pass)
		want, known := cfg.Clients[id]
		return id, known && want == secret && secret != ""
	}
	id := f.Get("client_id")
	if f.Get("client_assertion_type") != "" {
		return id, s.verifyAssertion(f.Get("client_assertion"), id, cfg)
	}
	if secret := f.Get("client_secret"); secret != "" {
		want, known := cfg.Clients[id]
		return id, known && want == secret
	}
	if f.Get("grant_type") == "refresh_token" {
		return id, true
	}
	if f.Get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" && cfg.WorkloadToken != "" {
		return id, true // the workload token is the credential (SEP-1933)
	}
	if strings.HasPrefix(id, "https://") && cfg.CIMD {
		return id, true
	}
	want, known := cfg.Clients[id]
	return id, known && want == ""
}
