package server

// OAUTHBEARER settings: how brokers validate tokens (Kafka's
// sasl.oauthbearer.* broker configs) and the built-in test issuer.

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/sasl"
)

// OAuthConfig is Config.OAuth. Without a JWKS (neither JWKSEndpointURL nor
// Issuer) brokers accept unsecured tokens (alg "none"), as Kafka's default
// validator does; with one they accept only tokens signed by its keys.
type OAuthConfig struct {
	// JWKSEndpointURL is sasl.oauthbearer.jwks.endpoint.url: an http(s)://
	// URL the brokers fetch the JWKS from (in the background, at start,
	// every JWKSEndpointRefresh and when a token names an unknown kid), or
	// a file:// URL read again whenever the file changes.
	JWKSEndpointURL string
	// JWKSEndpointRefresh is sasl.oauthbearer.jwks.endpoint.refresh.ms, on
	// the cluster's clock. Default 1 hour.
	JWKSEndpointRefresh time.Duration
	// ExpectedAudience is sasl.oauthbearer.expected.audience: a token's aud
	// must name one of them. Kafka 4.4 requires it with a JWKS URL unless
	// AllowUnverifiedAudience. Default: the issuer's audience when Issuer
	// validates.
	ExpectedAudience []string
	// ExpectedIssuer is sasl.oauthbearer.expected.issuer: a token's iss must
	// be it. Required with a JWKS URL unless AllowUnverifiedIssuer.
	// Default: the issuer's when Issuer validates.
	ExpectedIssuer string
	// AllowUnverifiedAudience and AllowUnverifiedIssuer are
	// sasl.oauthbearer.allow.unverified.audience and .issuer: aud is not
	// checked, and iss need not be expected.
	AllowUnverifiedAudience, AllowUnverifiedIssuer bool
	// ScopeClaimName and SubClaimName are sasl.oauthbearer.scope.claim.name
	// and sasl.oauthbearer.sub.claim.name; defaults "scope" and "sub".
	ScopeClaimName, SubClaimName string
	// ClockSkew is sasl.oauthbearer.clock.skew.seconds: leeway for exp and
	// nbf, in whole seconds. Default 30 s; negative: none.
	ClockSkew time.Duration

	// Issuer, when not nil, is the built-in test issuer: a client
	// credentials token endpoint and a JWKS on the control port
	// (POST /v1/oauth/token, GET /v1/oauth/jwks) and Cluster.IssueToken.
	// Without JWKSEndpointURL the brokers validate with its keys.
	Issuer *OAuthIssuer
}

// OAuthIssuer configures the built-in test issuer.
type OAuthIssuer struct {
	// Clients are the clients allowed at the token endpoint: client id to
	// client secret.
	Clients map[string]string
	// Subjects gives a client's tokens another sub than its id.
	Subjects map[string]string
	// Issuer is the iss claim of its tokens. Default "fakekafka".
	Issuer string
	// Audience is the aud claim of its tokens. Default "kafka".
	Audience string
	// TokenLifetime is how long its tokens last (expires_in). Default 1 hour.
	TokenLifetime time.Duration
	// Algorithm is RS256 (the default), ES256 or another algorithm the
	// brokers verify; the signing key is generated at start for it.
	Algorithm string
	// SigningKeyFile is a PEM private key (PKCS #8, PKCS #1 or SEC 1) to
	// sign with instead of a generated one; Algorithm must fit it.
	SigningKeyFile string
	// KeyID is the kid of the signing key. Default "fakekafka-1".
	KeyID string
}

// withDefaults checks the settings and fills in Kafka's defaults.
func (o OAuthConfig) withDefaults() (OAuthConfig, error) {
	if o.JWKSEndpointRefresh == 0 {
		o.JWKSEndpointRefresh = time.Hour
	}
	if o.JWKSEndpointRefresh < 0 {
		return o, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.refresh.ms must be positive, got %v", o.JWKSEndpointRefresh)
	}
	switch {
	case o.ClockSkew == 0:
		o.ClockSkew = 30 * time.Second
	case o.ClockSkew < 0:
		o.ClockSkew = 0
	}
	if u := o.JWKSEndpointURL; u != "" {
		p, err := url.Parse(u)
		if err != nil {
			return o, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url %q: %v", u, err)
		}
		switch strings.ToLower(p.Scheme) {
		case "http", "https":
		case "file":
			if p.Path == "" {
				return o, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url %q: a file URL needs a path", u)
			}
		default:
			return o, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url %q: want an http, https or file URL", u)
		}
	}
	if o.JWKSEndpointURL != "" && len(o.ExpectedAudience) == 0 && !o.AllowUnverifiedAudience {
		return o, errors.New(`The OAuth validator for the broker requires "sasl.oauthbearer.expected.audience" to be configured so that the token's audience ("aud") claim can be verified, but it was not set. Set "sasl.oauthbearer.expected.audience" to the audience(s) that identify this cluster, or set "sasl.oauthbearer.allow.unverified.audience" to true to accept tokens regardless of their audience.`)
	}
	if o.JWKSEndpointURL != "" && o.ExpectedIssuer == "" && !o.AllowUnverifiedIssuer {
		return o, errors.New(`The OAuth validator for the broker requires "sasl.oauthbearer.expected.issuer" to be configured so that the token's issuer ("iss") claim can be verified, but it was not set. Set "sasl.oauthbearer.expected.issuer" to the issuer URL of the OAuth/OIDC provider that signs the tokens, or set "sasl.oauthbearer.allow.unverified.issuer" to true to accept tokens regardless of their issuer.`)
	}
	for _, a := range o.ExpectedAudience {
		if strings.TrimSpace(a) == "" {
			return o, errors.New("sasl.oauthbearer.expected.audience has an empty value")
		}
	}
	if is := o.Issuer; is != nil {
		cp := *is
		if cp.Issuer == "" {
			cp.Issuer = "fakekafka"
		}
		if cp.Audience == "" {
			cp.Audience = "kafka"
		}
		if cp.TokenLifetime == 0 {
			cp.TokenLifetime = time.Hour
		}
		if cp.TokenLifetime < 0 {
			return o, fmt.Errorf("OAuth issuer token lifetime must be positive, got %v", cp.TokenLifetime)
		}
		if cp.Algorithm == "" {
			cp.Algorithm = "RS256"
		}
		if !sasl.SupportedJWSAlgorithm(cp.Algorithm) {
			return o, fmt.Errorf("OAuth issuer algorithm %q: want one of %s", cp.Algorithm, strings.Join(sasl.JWSAlgorithms(), ", "))
		}
		if cp.KeyID == "" {
			cp.KeyID = "fakekafka-1"
		}
		for id, secret := range cp.Clients {
			if id == "" || strings.Contains(id, ":") || secret == "" {
				return o, fmt.Errorf("OAuth client %q: want a non-empty id without ':' and a non-empty secret", id)
			}
		}
		if o.JWKSEndpointURL == "" {
			if len(o.ExpectedAudience) == 0 && !o.AllowUnverifiedAudience {
				o.ExpectedAudience = []string{cp.Audience}
			}
			if o.ExpectedIssuer == "" {
				o.ExpectedIssuer = cp.Issuer
			}
		}
		o.Issuer = &cp
	}
	return o, nil
}

// validator is the broker's JWT validator for these settings.
func (o OAuthConfig) validator() *sasl.JWTValidator {
	return &sasl.JWTValidator{ExpectedAudience: o.ExpectedAudience, AllowUnverifiedAudience: o.AllowUnverifiedAudience, ExpectedIssuer: o.ExpectedIssuer,
		ScopeClaimName: o.ScopeClaimName, SubClaimName: o.SubClaimName, ClockSkew: o.ClockSkew}
}
