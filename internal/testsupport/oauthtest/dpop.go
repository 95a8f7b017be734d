package oauthtest

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// The nonces the servers ask for with Config.DPoPNonce.
const (
	ASNonce = "as-nonce"
	RSNonce = "rs-nonce"
)

// dpopClaims are the claims of a DPoP proof (RFC 9449 §4.2).
type dpopClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath"`
	Nonce string `json:"nonce"`
}

// checkProof verifies the DPoP proof of r (RFC 9449 §4.3) for url, with
// ath of token when token is set, and returns its key's thumbprint and
// nonce. A proof that fails a check is an error naming the check; a jti
// seen before is one too.
func (s *Server) checkProof(r *http.Request, url, token string) (jkt, nonce string, err error) {
	vals := r.Header.Values("DPoP")
	if len(vals) != 1 {
		return "", "", fmt.Errorf("%d DPoP headers", len(vals))
	}
	jws, err := jose.ParseSignedCompact(vals[0], []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return "", "", err
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return "", "", fmt.Errorf("typ %q", typ)
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return "", "", errors.New("no public jwk")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return "", "", err
	}
	var c dpopClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", "", err
	}
	switch {
	case c.JTI == "":
		return "", "", errors.New("no jti")
	case c.HTM != r.Method:
		return "", "", fmt.Errorf("htm %q", c.HTM)
	case c.HTU != url:
		return "", "", fmt.Errorf("htu %q, want %q", c.HTU, url)
	case time.Since(time.Unix(c.IAT, 0)).Abs() > 5*time.Minute:
		return "", "", fmt.Errorf("iat %d", c.IAT)
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		if c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", "", errors.New("ath is not the token's hash")
		}
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	seen := s.jtis[c.JTI]
	s.jtis[c.JTI] = true
	s.mu.Unlock()
	if seen {
		return "", "", errors.New("jti used before")
	}
	return base64.RawURLEncoding.EncodeToString(tp), c.Nonce, nil
}

// noteProofFailure records why a proof was refused (see ProofFailures).
func (s *Server) noteProofFailure(where string, err error) {
	s.mu.Lock()
	s.proofFailures = append(s.proofFailures, where+": "+err.Error())
	s.mu.Unlock()
}

// ProofFailures returns why each refused DPoP proof was refused.
func (s *Server) ProofFailures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.proofFailures...)
}

// tokenProof checks a token request's DPoP proof with Config.DPoP and
// returns the key thumbprint to bind the token to ("" for a Bearer
// token); false when it has answered (a bad proof, a nonce to use).
func (s *Server) tokenProof(w http.ResponseWriter, r *http.Request, cfg Config) (string, bool) {
	if !cfg.DPoP || r.Header.Get("DPoP") == "" {
		return "", true
	}
	jkt, nonce, err := s.checkProof(r, s.Issuer()+"/token", "")
	if err != nil {
		s.noteProofFailure("token endpoint", err)
		oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", err.Error())
		return "", false
	}
	if cfg.DPoPNonce && nonce != ASNonce {
		w.Header().Set("DPoP-Nonce", ASNonce)
		oauthError(w, http.StatusBadRequest, "use_dpop_nonce", "a nonce is required")
		return "", false
	}
	return jkt, true
}

// resourceProof checks the DPoP use of token g on an MCP request with
// Config.DPoP; false when it has answered.
func (s *Server) resourceProof(w http.ResponseWriter, r *http.Request, cfg Config, tok string, g *grant) bool {
	jkt, nonce, err := s.checkProof(r, s.MCPURL(), tok)
	if err == nil && jkt != g.jkt {
		err = errors.New("the proof's key is not the token's")
	}
	if err != nil {
		s.noteProofFailure("MCP server", err)
		s.challenge(w, cfg, http.StatusUnauthorized, "invalid_dpop_proof", "")
		return false
	}
	if cfg.DPoPNonce && nonce != RSNonce {
		w.Header().Set("DPoP-Nonce", RSNonce)
		s.challenge(w, cfg, http.StatusUnauthorized, "use_dpop_nonce", "")
		return false
	}
	return true
}
