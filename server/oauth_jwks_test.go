package server

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/sasl"
)

// idp is an identity provider outside fakekafka: its own keys, a JWKS
// served on loopback, tokens it signs.
type idp struct {
	t    *testing.T
	jwks atomic.Pointer[[]byte]
	srv  *httptest.Server
	hits atomic.Int32
}

func newIDP(t *testing.T) *idp {
	p := &idp{t: t}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(*p.jwks.Load())
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) publish(keys ...sasl.JWK) {
	doc, err := sasl.MarshalJWKS(keys)
	if err != nil {
		p.t.Fatal(err)
	}
	p.jwks.Store(&doc)
}

func idpToken(t *testing.T, now time.Time, alg, kid string, key crypto.Signer) string {
	t.Helper()
	claims := map[string]any{"sub": "svc-idp", "iss": "https://idp.test", "aud": []string{"kafka", "other"},
		"iat": now.Unix(), "exp": now.Add(3 * time.Hour).Unix(), "scope": []string{"kafka.write"}}
	tok, err := sasl.SignJWT(claims, alg, kid, key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestOAuthJWKSEndpoint: brokers fetch another issuer's JWKS from its URL;
// a token with a kid they do not know is refused and makes them fetch the
// JWKS again, so the rotated key works for the next login; the periodic
// refresh (sasl.oauthbearer.jwks.endpoint.refresh.ms, on the cluster's
// clock) drops a key the issuer withdrew.
func TestOAuthJWKSEndpoint(t *testing.T) {
	p := newIDP(t)
	k1, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.publish(sasl.JWK{KeyID: "k1", Use: "sig", Algorithm: "RS256", Key: k1.Public()})

	clk := clock.NewManual(time.Unix(1_800_000_000, 0))
	c := oauthCluster(t, Config{Clock: clk, OAuth: OAuthConfig{JWKSEndpointURL: p.srv.URL + "/jwks",
		ExpectedIssuer: "https://idp.test", ExpectedAudience: []string{"kafka"}, JWKSEndpointRefresh: 10 * time.Minute}})
	ctx := testContext(t)
	if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventJWKSRefreshed && e.Detail == "k1" }); err != nil {
		t.Fatal(err)
	}
	accepted(t, c, idpToken(t, c.Now(), "RS256", "k1", k1))

	// Rotation: k2 appears; the first token signed with it is refused and
	// makes the brokers fetch again.
	p.publish(sasl.JWK{KeyID: "k1", Use: "sig", Algorithm: "RS256", Key: k1.Public()}, sasl.JWK{KeyID: "k2", Key: k2.Public()})
	since := c.LastEventSeq()
	tok2 := idpToken(t, c.Now(), "ES256", "k2", k2)
	refused(t, c, tok2, "Unable to find a suitable verification key")
	if _, err := c.WaitForAfter(ctx, since, func(e Event) bool { return e.Type == EventJWKSRefreshed && e.Detail == "k1,k2" }); err != nil {
		t.Fatal(err)
	}
	accepted(t, c, tok2)

	// k1 withdrawn: after the refresh interval it no longer verifies.
	p.publish(sasl.JWK{KeyID: "k2", Key: k2.Public()})
	since = c.LastEventSeq()
	c.AdvanceClock(10 * time.Minute)
	if _, err := c.WaitForAfter(ctx, since, func(e Event) bool { return e.Type == EventJWKSRefreshed && e.Detail == "k2" }); err != nil {
		t.Fatal(err)
	}
	since = c.LastEventSeq()
	refused(t, c, idpToken(t, c.Now(), "RS256", "k1", k1), "Unable to find a suitable verification key")
	// That fetched the JWKS again (k1 is a new missing kid); the same kid
	// within a minute does not ask again.
	if _, err := c.WaitForAfter(ctx, since, func(e Event) bool { return e.Type == EventJWKSRefreshed }); err != nil {
		t.Fatal(err)
	}
	if c.oauth.src.missing("k1") {
		t.Fatal("a refresh asked again for the same missing kid within a minute")
	}
	// A minute later (cluster clock) the same kid fetches again.
	hits := p.hits.Load()
	since = c.LastEventSeq()
	c.AdvanceClock(time.Minute)
	refused(t, c, idpToken(t, c.Now(), "RS256", "k1", k1), "Unable to find a suitable verification key")
	if _, err := c.WaitForAfter(ctx, since, func(e Event) bool { return e.Type == EventJWKSRefreshed }); err != nil {
		t.Fatal(err)
	}
	if p.hits.Load() <= hits {
		t.Fatal("no fetch for the missing kid a minute later")
	}
}

// TestOAuthJWKSFile: a file:// JWKS, read again when it changes.
func TestOAuthJWKSFile(t *testing.T) {
	k1, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	path := filepath.Join(t.TempDir(), "jwks.json")
	write := func(mtime time.Time, keys ...sasl.JWK) {
		doc, err := sasl.MarshalJWKS(keys)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, mtime, mtime)
	}
	write(time.Unix(1000, 0), sasl.JWK{KeyID: "f1", Key: k1.Public()})
	c := oauthCluster(t, Config{OAuth: OAuthConfig{JWKSEndpointURL: "file://" + path,
		ExpectedIssuer: "https://idp.test", ExpectedAudience: []string{"other"}}})
	accepted(t, c, idpToken(t, c.Now(), "ES256", "f1", k1))
	refused(t, c, idpToken(t, c.Now(), "ES256", "f2", k2), "Unable to find a suitable verification key")
	write(time.Unix(2000, 0), sasl.JWK{KeyID: "f2", Key: k2.Public()})
	accepted(t, c, idpToken(t, c.Now(), "ES256", "f2", k2))
	refused(t, c, idpToken(t, c.Now(), "ES256", "f1", k1), "Unable to find a suitable verification key")

	unverified := OAuthConfig{AllowUnverifiedAudience: true, AllowUnverifiedIssuer: true}
	for _, u := range []string{"file:///does/not/exist", "ftp://x"} {
		o := unverified
		o.JWKSEndpointURL = u
		if _, err := NewCluster(Config{OAuth: o}); err == nil {
			t.Fatalf("JWKS URL %s started the cluster", u)
		}
	}
	// Kafka 4.4 wants the audience and issuer checked, or said unchecked.
	_, err := NewCluster(Config{OAuth: OAuthConfig{JWKSEndpointURL: "file://" + path, ExpectedIssuer: "x"}})
	if err == nil || !strings.HasPrefix(err.Error(), `The OAuth validator for the broker requires "sasl.oauthbearer.expected.audience" to be configured`) {
		t.Fatalf("no expected audience: %v", err)
	}
	_, err = NewCluster(Config{OAuth: OAuthConfig{JWKSEndpointURL: "file://" + path, ExpectedAudience: []string{"kafka"}}})
	if err == nil || !strings.HasPrefix(err.Error(), `The OAuth validator for the broker requires "sasl.oauthbearer.expected.issuer" to be configured`) {
		t.Fatalf("no expected issuer: %v", err)
	}
	o := unverified
	o.JWKSEndpointURL = "file://" + path
	open := oauthCluster(t, Config{OAuth: o})
	tok := idpToken(t, open.Now(), "ES256", "f2", k2)
	accepted(t, open, tok)
}
