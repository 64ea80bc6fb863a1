package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// oauthFlags are the OAUTHBEARER flags: Kafka's sasl.oauthbearer.* broker
// configs and the built-in issuer's --oauth-* settings.
type oauthFlags struct {
	audience    string
	skewSeconds int
	issuer      server.OAuthIssuer
}

func (f *oauthFlags) register(fs *flag.FlagSet, o *server.OAuthConfig) {
	fs.StringVar(&o.JWKSEndpointURL, "sasl-oauthbearer-jwks-endpoint-url", "", "sasl.oauthbearer.jwks.endpoint.url: http(s):// or file:// JWKS that OAUTHBEARER tokens must be signed by (unsecured tokens are then refused)")
	fs.Var(durationMs{&o.JWKSEndpointRefresh}, "sasl-oauthbearer-jwks-endpoint-refresh-ms", "sasl.oauthbearer.jwks.endpoint.refresh.ms: how often the JWKS is fetched again")
	fs.StringVar(&f.audience, "sasl-oauthbearer-expected-audience", "", "sasl.oauthbearer.expected.audience: comma-separated; a token's aud must name one")
	fs.StringVar(&o.ExpectedIssuer, "sasl-oauthbearer-expected-issuer", "", "sasl.oauthbearer.expected.issuer: a token's iss must be it")
	fs.BoolVar(&o.AllowUnverifiedAudience, "sasl-oauthbearer-allow-unverified-audience", false, "sasl.oauthbearer.allow.unverified.audience: do not check aud (Kafka 4.4 otherwise needs an expected audience with a JWKS URL)")
	fs.BoolVar(&o.AllowUnverifiedIssuer, "sasl-oauthbearer-allow-unverified-issuer", false, "sasl.oauthbearer.allow.unverified.issuer: accept any iss (Kafka 4.4 otherwise needs an expected issuer with a JWKS URL)")
	fs.StringVar(&o.ScopeClaimName, "sasl-oauthbearer-scope-claim-name", "scope", "sasl.oauthbearer.scope.claim.name")
	fs.StringVar(&o.SubClaimName, "sasl-oauthbearer-sub-claim-name", "sub", "sasl.oauthbearer.sub.claim.name: the claim that names the principal")
	fs.IntVar(&f.skewSeconds, "sasl-oauthbearer-clock-skew-seconds", 30, "sasl.oauthbearer.clock.skew.seconds: leeway for exp and nbf")
	fs.Var(oauthClients{&f.issuer.Clients}, "oauth-client", "ID:SECRET of a client of the built-in OAuth issuer (POST /v1/oauth/token on the control port; repeatable or comma-separated); turns the issuer on")
	fs.StringVar(&f.issuer.Issuer, "oauth-issuer", "", "iss claim of the built-in issuer's tokens; turns the issuer on")
	fs.StringVar(&f.issuer.Audience, "oauth-audience", "", "aud claim of the built-in issuer's tokens")
	fs.Var(durationMs{&f.issuer.TokenLifetime}, "oauth-token-lifetime", "lifetime of the built-in issuer's tokens (expires_in)")
	fs.StringVar(&f.issuer.Algorithm, "oauth-signing-algorithm", "", "the built-in issuer's JWS algorithm: RS256, ES256, PS256, EdDSA, ...")
	fs.StringVar(&f.issuer.SigningKeyFile, "oauth-signing-key", "", "PEM private key the built-in issuer signs with")
}

// apply completes o from the flags once they are parsed.
func (f *oauthFlags) apply(set map[string]bool, o *server.OAuthConfig) error {
	for _, a := range strings.Split(f.audience, ",") {
		if a = strings.TrimSpace(a); a != "" {
			o.ExpectedAudience = append(o.ExpectedAudience, a)
		}
	}
	if f.skewSeconds < 0 {
		return fmt.Errorf("--sasl-oauthbearer-clock-skew-seconds must not be negative, got %d", f.skewSeconds)
	}
	o.ClockSkew = time.Duration(f.skewSeconds) * time.Second
	if f.skewSeconds == 0 {
		o.ClockSkew = -1 // none (Config's zero means Kafka's default)
	}
	for _, name := range []string{"oauth-client", "oauth-issuer", "oauth-audience", "oauth-token-lifetime", "oauth-signing-algorithm", "oauth-signing-key"} {
		if set[name] {
			is := f.issuer
			o.Issuer = &is
			break
		}
	}
	return nil
}

// oauthClients parses --oauth-client ID:SECRET.
type oauthClients struct{ m *map[string]string }

func (v oauthClients) String() string {
	if v.m == nil {
		return ""
	}
	ids := make([]string, 0, len(*v.m))
	for id := range *v.m {
		ids = append(ids, id+":***")
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

func (v oauthClients) Set(s string) error {
	if *v.m == nil {
		*v.m = map[string]string{}
	}
	for _, item := range strings.Split(s, ",") {
		id, secret, ok := strings.Cut(item, ":")
		if !ok || id == "" || secret == "" {
			return fmt.Errorf("want ID:SECRET, got %q", item)
		}
		(*v.m)[id] = secret
	}
	return nil
}
