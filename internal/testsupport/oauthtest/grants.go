package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// verifyAssertion checks a private_key_jwt client assertion: signature by
// cfg.PublicKey, iss and sub the client, aud the issuer, not expired.
func (s *Server) verifyAssertion(jwt, clientID string, cfg Config) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 || cfg.PublicKey == nil {
		return false
	}
	var header struct{ Alg string }
	var claims struct {
		Iss, Sub, Aud, Jti string
		Exp                int64
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil {
		return false
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := cfg.PublicKey.(type) {
	case *ecdsa.PublicKey:
		if header.Alg != "ES256" || len(sig) != 64 {
			return false
		}
		r, ss := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(k, digest[:], r, ss) {
			return false
		}
	case *rsa.PublicKey:
		if header.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) != nil {
			return false
		}
	default:
		return false
	}
	return claims.Iss == clientID && claims.Sub == clientID && claims.Aud == s.Issuer() &&
		claims.Jti != "" && time.Now().Unix() < claims.Exp
}

// serveDevice is the device authorization endpoint (RFC 8628 §3.1). The
// polling interval is 0: the token endpoint holds a pending poll until the
// device is approved instead.
func (s *Server) serveDevice(w http.ResponseWriter, r *http.Request) {
	req := s.record("device", r)
	code, user := newToken("dc-"), strings.ToUpper(newToken("")[:8])
	s.mu.Lock()
	s.devices[code] = &device{userCode: user, g: grant{clientID: req.Form.Get("client_id"),
		resource: req.Form.Get("resource"), scopes: strings.Fields(req.Form.Get("scope"))}}
	s.mu.Unlock()
	verify := s.Issuer() + "/device/verify"
	writeJSON(w, http.StatusOK, map[string]any{
		"device_code": code, "user_code": user, "verification_uri": verify,
		"verification_uri_complete": verify + "?user_code=" + url.QueryEscape(user),
		"expires_in":                600, "interval": 0,
	})
}

// serveDeviceVerify approves the device whose user code is given (the
// user's visit to the verification URI).
func (s *Server) serveDeviceVerify(w http.ResponseWriter, r *http.Request) {
	req := s.record("device-verify", r)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.userCode == req.Form.Get("user_code") {
			d.approved = true
			close(s.approve)
			s.approve = make(chan struct{})
			_, _ = w.Write([]byte("approved\n"))
			return
		}
	}
	http.Error(w, "unknown user code", http.StatusNotFound)
}

// redeemDevice answers a device code poll: the token once approved, else
// authorization_pending after holding the poll until an approval (or the
// request ends).
func (s *Server) redeemDevice(w http.ResponseWriter, r *http.Request, f url.Values) *grant {
	for {
		s.mu.Lock()
		d := s.devices[f.Get("device_code")]
		approved := d != nil && d.approved
		if approved {
			delete(s.devices, f.Get("device_code"))
		}
		wake := s.approve
		s.mu.Unlock()
		switch {
		case d == nil:
			oauthError(w, http.StatusBadRequest, "expired_token", "unknown device code")
			return nil
		case approved:
			return &d.g
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			oauthError(w, http.StatusBadRequest, "authorization_pending", "")
			return nil
		}
	}
}

// serveIdPToken is the identity provider's token exchange (RFC 8693) of
// cross-app access: the configured identity assertion becomes an
// authorization grant (ID-JAG) for the audience and resource asked for.
func (s *Server) serveIdPToken(w http.ResponseWriter, r *http.Request) {
	req := s.record("idp-token", r)
	cfg := s.config()
	f := req.Form
	switch {
	case f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange",
		f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag",
		f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token":
		oauthError(w, http.StatusBadRequest, "invalid_request", "not a token exchange for an ID-JAG")
	case cfg.IdentityAssertion == "" || f.Get("subject_token") != cfg.IdentityAssertion:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown identity assertion")
	case f.Get("audience") != s.Issuer() || f.Get("resource") == "":
		oauthError(w, http.StatusBadRequest, "invalid_target", "audience or resource")
	default:
		jag := newToken("jag-")
		s.mu.Lock()
		s.jags[jag] = &grant{resource: f.Get("resource"), scopes: strings.Fields(f.Get("scope"))}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"access_token": jag,
			"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
	}
}

// redeemJAG answers a JWT bearer grant of an ID-JAG the IdP issued.
func (s *Server) redeemJAG(w http.ResponseWriter, f url.Values, clientID string) *grant {
	s.mu.Lock()
	g := s.jags[f.Get("assertion")]
	delete(s.jags, f.Get("assertion"))
	s.mu.Unlock()
	if wt := s.config().WorkloadToken; g == nil && wt != "" && f.Get("assertion") == wt {
		g = &grant{resource: f.Get("resource"), scopes: strings.Fields(f.Get("scope"))}
	}
	if g == nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown assertion")
		return nil
	}
	ng := *g
	ng.clientID = clientID
	return &ng
}
