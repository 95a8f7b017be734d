package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// clientAssertionType is the client_assertion_type of private_key_jwt
// (RFC 7523 §2.2).
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// signer signs JWTs with one key (RS256 or ES256). It is immutable.
type signer struct {
	alg string
	key crypto.Signer
}

// parseSigner reads a PEM private key (PKCS#8, PKCS#1 RSA or SEC 1 EC) for
// alg ("" = from the key: RS256 for RSA, ES256 for EC P-256).
func parseSigner(pemBytes []byte, alg string) (*signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, err
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if alg == "" {
			alg = "RS256"
		}
		if alg != "RS256" {
			return nil, fmt.Errorf("an RSA key signs RS256, not %s", alg)
		}
		return &signer{alg: alg, key: k}, nil
	case *ecdsa.PrivateKey:
		if alg == "" {
			alg = "ES256"
		}
		if alg != "ES256" || k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("ES256 needs a P-256 key (have %s for %s)", k.Curve.Params().Name, alg)
		}
		return &signer{alg: alg, key: k}, nil
	default:
		return nil, fmt.Errorf("unsupported key type %T (want RSA or EC P-256)", key)
	}
}

// sign returns the compact JWS of claims.
func (s *signer) sign(claims map[string]any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": s.alg, "typ": "JWT"})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := s.key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
	case *ecdsa.PrivateKey:
		var r, ss *big.Int
		r, ss, err = ecdsa.Sign(rand.Reader, k, digest[:])
		if err == nil {
			// JWS wants r and s as fixed-size big-endian, concatenated.
			sig = make([]byte, 64)
			r.FillBytes(sig[:32])
			ss.FillBytes(sig[32:])
		}
	}
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// clientAssertion is a private_key_jwt assertion (RFC 7523 §3) for
// clientID, with audience the authorization server's issuer.
func (s *signer) clientAssertion(clientID, audience string, now time.Time) (string, error) {
	return s.sign(map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
		"jti": rand.Text(),
	})
}
