package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

func TestOAuthFlagsFromEnvironment(t *testing.T) {
	o, err := parseFlags([]string{"--oauth-client", "svc-c:c-secret", "--sasl-oauthbearer-clock-skew-seconds", "0"}, env(map[string]string{
		"FAKEKAFKA_OAUTH_CLIENT":                              "svc-a:a-secret,svc-b:b:with:colons",
		"FAKEKAFKA_OAUTH_TOKEN_LIFETIME":                      "600000",
		"FAKEKAFKA_OAUTH_SIGNING_ALGORITHM":                   "ES256",
		"FAKEKAFKA_SASL_OAUTHBEARER_EXPECTED_AUDIENCE":        "kafka, kafka-dev",
		"FAKEKAFKA_SASL_OAUTHBEARER_EXPECTED_ISSUER":          "https://idp.test",
		"FAKEKAFKA_SASL_OAUTHBEARER_SUB_CLAIM_NAME":           "client_id",
		"FAKEKAFKA_SASL_OAUTHBEARER_JWKS_ENDPOINT_URL":        "file:///etc/jwks.json",
		"FAKEKAFKA_SASL_OAUTHBEARER_JWKS_ENDPOINT_REFRESH_MS": "60000",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := o.cfg.OAuth
	if a.Issuer == nil || len(a.Issuer.Clients) != 3 || a.Issuer.Clients["svc-b"] != "b:with:colons" || a.Issuer.Clients["svc-c"] != "c-secret" ||
		a.Issuer.TokenLifetime != 10*time.Minute || a.Issuer.Algorithm != "ES256" {
		t.Fatalf("issuer %+v", a.Issuer)
	}
	if !slices.Equal(a.ExpectedAudience, []string{"kafka", "kafka-dev"}) || a.ExpectedIssuer != "https://idp.test" || a.SubClaimName != "client_id" ||
		a.ScopeClaimName != "scope" || a.ClockSkew >= 0 || a.JWKSEndpointURL != "file:///etc/jwks.json" || a.JWKSEndpointRefresh != time.Minute {
		t.Fatalf("validation %+v", a)
	}
	o, err = parseFlags(nil, env(nil), io.Discard)
	if err != nil || o.cfg.OAuth.Issuer != nil || o.cfg.OAuth.ClockSkew != 30*time.Second {
		t.Fatalf("defaults: %+v %v", o.cfg.OAuth, err)
	}
	for _, bad := range [][]string{{"--oauth-client", "nosecret"}, {"--oauth-client", ":x"}, {"--sasl-oauthbearer-clock-skew-seconds", "-1"}} {
		if _, err := parseFlags(bad, env(nil), io.Discard); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}

// TestBinaryServesOAuth (docs/security.md's command line): the binary with
// --oauth-client issues a token at its control port's token endpoint, and
// franz-go logs in with it over SASL_SSL.
func TestBinaryServesOAuth(t *testing.T) {
	dir := t.TempDir()
	control := startBinary(t, "--brokers", "1", "--listeners", "SASL_SSL://127.0.0.1:0", "--tls-dir", dir, "--control", "127.0.0.1:0",
		"--oauth-client", "svc-orders:orders-secret", "--oauth-signing-algorithm", "ES256")
	resp, err := http.PostForm(control+"/v1/oauth/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {"svc-orders"}, "client_secret": {"orders-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || strings.Count(tok.AccessToken, ".") != 2 {
		t.Fatalf("token endpoint: %s %+v %v", resp.Status, tok, err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	ls := getListeners(t, control)
	cl, err := kgo.NewClient(kgo.SeedBrokers(ls["SASL_SSL"].Brokers[0].Advertised), kgo.DefaultProduceTopic("oauth"),
		kgo.AllowAutoTopicCreation(), kgo.DialTLSConfig(&tls.Config{RootCAs: pool}),
		kgo.SASL(oauth.Auth{Token: tok.AccessToken}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("hi")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
