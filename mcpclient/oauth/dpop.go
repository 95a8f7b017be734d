package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DPoP (RFC 9449; MCP's extension, SEP-1932): a token bound to a key the
// client holds, proved on every use.
//
// A Client uses DPoP when Config.DPoP says so, or, by default, once the
// server challenges with the DPoP scheme. A sign-in then makes an ES256
// key pair, kept in the credentials record with the token bound to it
// (the Store's file, mode 0600), so that a stored token is usable after a
// restart. Every token request (each grant and refresh) carries a proof
// (htm POST, htu the token endpoint); when the authorization server
// issues a DPoP token (token_type DPoP) every request to the MCP server
// carries "Authorization: DPoP <token>" and a fresh proof with ath, the
// hash of the token. A use_dpop_nonce answer (RFC 9449 §8, §9) from
// either server is retried once with a new proof carrying the nonce; the
// latest nonce of each server is used from then on.
//
// go-jose signs the proofs and embeds the public key (jwk); what a proof
// holds and when one is sent is this file's.

// headerDPoP and headerDPoPNonce are the DPoP request and nonce headers.
const (
	headerDPoP      = "DPoP"
	headerDPoPNonce = "DPoP-Nonce"
	errUseDPoPNonce = "use_dpop_nonce"
	tokenTypeDPoP   = "DPoP"
)

// ErrDPoP: a DPoP key could not be made or read, or a proof not signed.
var ErrDPoP = errors.New("DPoP")

// dpopKey is one DPoP key pair (ES256 on P-256). Immutable.
type dpopKey struct {
	priv   *ecdsa.PrivateKey
	signer jose.Signer
}

// newDPoPKey makes a fresh key pair.
func newDPoPKey() (*dpopKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("%w: making a key: %w", ErrDPoP, err)
	}
	return signingKey(priv)
}

// parseDPoPKey reads a key pair from its PKCS#8 DER (as a record keeps it).
func parseDPoPKey(der []byte) (*dpopKey, error) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: the stored key: %w", ErrDPoP, err)
	}
	priv, ok := k.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: the stored key is not an EC P-256 key", ErrDPoP)
	}
	return signingKey(priv)
}

// signingKey makes the dpopKey of priv.
func signingKey(priv *ecdsa.PrivateKey) (*dpopKey, error) {
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv}, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDPoP, err)
	}
	return &dpopKey{priv: priv, signer: s}, nil
}

// der is the key pair's PKCS#8 DER.
func (k *dpopKey) der() ([]byte, error) {
	b, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDPoP, err)
	}
	return b, nil
}

// proof returns a fresh proof (RFC 9449 §4.2) for a request of method to
// u (its query and fragment left out of htu), with nonce and, for a
// request to the resource server, ath of token ("" for none).
func (k *dpopKey) proof(method string, u *url.URL, nonce, token string, now time.Time) (string, error) {
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment = "", "", ""
	claims := map[string]any{"jti": rand.Text(), "htm": method, "htu": htu.String(), "iat": now.Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	p, err := jwt.Signed(k.signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("%w: signing a proof: %w", ErrDPoP, err)
	}
	return p, nil
}

// asksForNonce reports whether a resource server's answer asks for a
// DPoP nonce (RFC 9449 §9: a 401 with a DPoP challenge use_dpop_nonce and
// a DPoP-Nonce header, which send has kept).
func asksForNonce(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized && resp.Header.Get(headerDPoPNonce) != "" &&
		parseChallenge(resp.Header).Error == errUseDPoPNonce
}

// dpopToken reports whether r's token is DPoP-bound.
func (r *record) dpopToken() bool {
	return len(r.DPoPKey) > 0 && strings.EqualFold(r.TokenType, tokenTypeDPoP)
}

// usesDPoP reports whether a new sign-in makes a DPoP key: Config.DPoP,
// else whether the server has challenged with the DPoP scheme.
func (c *Client) usesDPoP() bool {
	if c.cfg.DPoP != nil {
		return *c.cfg.DPoP
	}
	return c.dpopSeen.Load()
}

// dpopKeyOf returns the key pair of r (nil when r has none), parsed once
// per record key.
func (c *Client) dpopKeyOf(r *record) (*dpopKey, error) {
	if r == nil || len(r.DPoPKey) == 0 {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dkey != nil && string(c.dkeyDER) == string(r.DPoPKey) {
		return c.dkey, nil
	}
	k, err := parseDPoPKey(r.DPoPKey)
	if err != nil {
		return nil, err
	}
	c.dkey, c.dkeyDER = k, r.DPoPKey
	return k, nil
}

// authorize sets req's Authorization for tok: "DPoP" with a fresh proof
// (ath, the resource server's latest nonce) when tok is the current
// record's DPoP-bound token, else "Bearer".
func (c *Client) authorize(req *http.Request, tok string) error {
	c.mu.Lock()
	r, nonce := c.rec, c.rsNonce
	c.mu.Unlock()
	if r == nil || r.AccessToken != tok || !r.dpopToken() {
		req.Header.Set("Authorization", "Bearer "+tok)
		return nil
	}
	k, err := c.dpopKeyOf(r)
	if err != nil {
		return err
	}
	p, err := k.proof(req.Method, req.URL, nonce, tok, c.opts.Now())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", tokenTypeDPoP+" "+tok)
	req.Header.Set(headerDPoP, p)
	return nil
}

// noteNonce keeps the DPoP-Nonce of an answer from the resource server
// (rs) or the authorization server, if it carries one.
func (c *Client) noteNonce(h http.Header, rs bool) {
	n := h.Get(headerDPoPNonce)
	if n == "" {
		return
	}
	c.mu.Lock()
	if rs {
		c.rsNonce = n
	} else {
		c.asNonce = n
	}
	c.mu.Unlock()
}
