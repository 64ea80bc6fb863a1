package server

// The built-in OAuth issuer for tests (Config.OAuth.Issuer): it signs
// JWTs with a key made at start (or read from a file), publishes its
// public half as a JWKS, and answers the client credentials grant for
// registered clients, so a client's real OIDC settings run against the
// cluster without an identity server. Its clock is the cluster's: iat and
// exp follow AdvanceClock. The HTTP endpoints are control's.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/sasl"
)

// ErrOAuthIssuerOff is returned by the issuer's methods when
// Config.OAuth.Issuer is not set.
var ErrOAuthIssuerOff = errors.New("the OAuth issuer is off (Config.OAuth.Issuer, --oauth-client)")

// ErrOAuthInvalidClient is an unknown client id or a wrong secret at the
// token endpoint (OAuth's invalid_client).
var ErrOAuthInvalidClient = errors.New("client authentication failed")

type oauthIssuer struct {
	cfg  OAuthIssuer
	key  crypto.Signer
	jwks []sasl.JWK
}

func newOAuthIssuer(cfg OAuthIssuer) (*oauthIssuer, error) {
	var key crypto.Signer
	var err error
	if cfg.SigningKeyFile != "" {
		key, err = readSigningKey(cfg.SigningKeyFile)
	} else {
		key, err = generateSigningKey(cfg.Algorithm)
	}
	if err != nil {
		return nil, err
	}
	is := &oauthIssuer{cfg: cfg, key: key,
		jwks: []sasl.JWK{{KeyID: cfg.KeyID, Use: "sig", Algorithm: cfg.Algorithm, Key: key.Public()}}}
	// A key that cannot sign its algorithm is found now, not at the first token.
	if _, err := sasl.SignJWT(map[string]any{}, cfg.Algorithm, cfg.KeyID, key); err != nil {
		return nil, fmt.Errorf("OAuth issuer key: %w", err)
	}
	return is, nil
}

func generateSigningKey(alg string) (crypto.Signer, error) {
	switch {
	case strings.HasPrefix(alg, "RS"), strings.HasPrefix(alg, "PS"):
		return rsa.GenerateKey(rand.Reader, 2048)
	case alg == "ES256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case alg == "ES384":
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case alg == "ES512":
		return ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case alg == "EdDSA":
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}
	return nil, fmt.Errorf("no key for algorithm %q", alg)
}

func readSigningKey(path string) (crypto.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("OAuth signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("OAuth signing key %s: no PEM block", path)
	}
	var k any
	switch blk.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("OAuth signing key %s: %w", path, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("OAuth signing key %s: %T cannot sign", path, k)
	}
	return s, nil
}

// TokenRequest is what Cluster.IssueToken signs.
type TokenRequest struct {
	// Subject is the sub claim. Required.
	Subject string
	// Scope is the scope claim, left out when empty.
	Scope string
	// Lifetime sets exp from now on the cluster's clock. Default the
	// issuer's TokenLifetime; negative: a token that has already expired.
	Lifetime time.Duration
	// Claims are added to the token and replace the issuer's own (iss,
	// aud, iat, exp, nbf, ...); a nil value removes a claim.
	Claims map[string]any
}

// IssueToken signs a token with the built-in issuer's key at the cluster's
// time: iss and aud are the issuer's, iat now, exp now + Lifetime.
func (c *Cluster) IssueToken(req TokenRequest) (string, error) {
	is := c.issuer
	if is == nil {
		return "", ErrOAuthIssuerOff
	}
	if req.Subject == "" {
		return "", errors.New("a token needs a subject")
	}
	life := req.Lifetime
	if life == 0 {
		life = is.cfg.TokenLifetime
	}
	now := c.now()
	claims := map[string]any{"sub": req.Subject, "iss": is.cfg.Issuer, "aud": is.cfg.Audience,
		"iat": now.Unix(), "exp": now.Add(life).Unix(), "jti": rand.Text()}
	if req.Scope != "" {
		claims["scope"] = req.Scope
	}
	for k, v := range req.Claims {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	return sasl.SignJWT(claims, is.cfg.Algorithm, is.cfg.KeyID, is.key)
}

// ClientCredentialsToken is the issuer's token endpoint (OAuth 2.0's
// client credentials grant): a token for a registered client, whose sub is
// the client id (or its configured subject), and how long it lasts.
func (c *Cluster) ClientCredentialsToken(clientID, secret, scope string) (string, time.Duration, error) {
	is := c.issuer
	if is == nil {
		return "", 0, ErrOAuthIssuerOff
	}
	want, ok := is.cfg.Clients[clientID]
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(secret)) != 1 {
		c.emit(EventAuthenticationFailed, func(e *Event) {
			e.Reason, e.Detail = "oauth-token-endpoint", "client authentication failed for client id "+clientID
		})
		return "", 0, ErrOAuthInvalidClient
	}
	sub := clientID
	if s := is.cfg.Subjects[clientID]; s != "" {
		sub = s
	}
	tok, err := c.IssueToken(TokenRequest{Subject: sub, Scope: scope, Claims: map[string]any{"client_id": clientID}})
	return tok, is.cfg.TokenLifetime, err
}

// OAuthJWKS is the issuer's JWKS document (its public signing key).
func (c *Cluster) OAuthJWKS() ([]byte, error) {
	if c.issuer == nil {
		return nil, ErrOAuthIssuerOff
	}
	return sasl.MarshalJWKS(c.issuer.jwks)
}
