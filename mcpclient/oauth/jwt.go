package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// clientAssertionType is the client_assertion_type of private_key_jwt
// (RFC 7523 §2.2).
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// signer signs JWTs with one key (RS256 or ES256), through go-jose. It is
// immutable.
type signer struct {
	alg jose.SignatureAlgorithm
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
		return &signer{alg: jose.SignatureAlgorithm(alg), key: k}, nil
	case *ecdsa.PrivateKey:
		if alg == "" {
			alg = "ES256"
		}
		if alg != "ES256" || k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("ES256 needs a P-256 key (have %s for %s)", k.Curve.Params().Name, alg)
		}
		return &signer{alg: jose.SignatureAlgorithm(alg), key: k}, nil
	default:
		return nil, fmt.Errorf("unsupported key type %T (want RSA or EC P-256)", key)
	}
}

// sign returns the compact JWS of claims, typ JWT.
func (s *signer) sign(claims map[string]any) (string, error) {
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: s.alg, Key: s.key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	return jwt.Signed(js).Claims(claims).Serialize()
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
