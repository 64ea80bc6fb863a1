package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/sasl"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// oauthCluster is a one-broker cluster with a SASL_PLAINTEXT listener
// whose tokens the built-in issuer signs.
func oauthCluster(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	cfg.Brokers = 1
	cfg.Listeners = []Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}}
	if cfg.OAuth.Issuer == nil && cfg.OAuth.JWKSEndpointURL == "" {
		cfg.OAuth.Issuer = &OAuthIssuer{Clients: map[string]string{"svc-orders": "orders-secret"}, Algorithm: "ES256"}
	}
	return NewTestCluster(t, cfg)
}

// TestOAuthIssuerFranzGo: franz-go's oauth mechanism with a token from the
// client credentials grant produces and consumes; the principal is the
// client id. An unsecured token, fine without a JWKS, is now refused (its
// empty signature fails Kafka's first check).
func TestOAuthIssuerFranzGo(t *testing.T) {
	c := oauthCluster(t, Config{})
	fetch := oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		tok, _, err := c.ClientCredentialsToken("svc-orders", "orders-secret", "")
		return oauth.Auth{Token: tok}, err
	})
	if err := roundTrip(t, c, "oauth-orders", kgo.SeedBrokers(saslAddr(t, c)), kgo.SASL(fetch)); err != nil {
		t.Fatal(err)
	}
	waitAuthenticated(t, c, "OAUTHBEARER", "User:svc-orders")

	err := firstRequestErr(t, kgo.SeedBrokers(saslAddr(t, c)),
		kgo.SASL(oauth.Auth{Token: unsecuredJWS("carol", time.Now().Add(time.Hour))}.AsMechanism()))
	if err == nil || !strings.Contains(err.Error(), `{"status":"invalid_token"}`) {
		t.Fatalf("unsecured token: %v", err)
	}
	if !containsEventPrefix(c.Events(0), EventAuthenticationFailed, `{"status":"invalid_token"}: Malformed JWT provided; expected at least a signature section`) {
		t.Fatalf("no authentication_failed event naming alg none: %v", c.Events(0))
	}

	if _, _, err := c.ClientCredentialsToken("svc-orders", "wrong", ""); !errors.Is(err, ErrOAuthInvalidClient) {
		t.Fatalf("wrong secret: %v", err)
	}
	if _, _, err := c.ClientCredentialsToken("nobody", "orders-secret", ""); !errors.Is(err, ErrOAuthInvalidClient) {
		t.Fatalf("unknown client: %v", err)
	}
}

// refused logs in with token by hand and expects Kafka's answer: the
// invalid_token challenge, then, after the client's %x01,
// SASL_AUTHENTICATION_FAILED with the challenge as message, then the
// close; the authentication_failed event says why.
func refused(t *testing.T, c *Cluster, token, why string) {
	t.Helper()
	since := c.LastEventSeq()
	r := dialRaw(t, saslAddr(t, c))
	r.handshake(1, "OAUTHBEARER")
	resp := r.authenticate(1, "n,,\x01auth=Bearer "+token+"\x01\x01")
	if resp.ErrorCode != 0 || string(resp.SASLAuthBytes) != `{"status":"invalid_token"}` {
		t.Fatalf("first answer: error %d bytes %q, want the invalid_token challenge", resp.ErrorCode, resp.SASLAuthBytes)
	}
	resp = r.authenticate(1, "\x01")
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != `{"status":"invalid_token"}` {
		t.Fatalf("second answer: error %d message %v", resp.ErrorCode, resp.ErrorMessage)
	}
	expectClosed(t, r.nc)
	for _, e := range c.Events(since) {
		if e.Type == EventAuthenticationFailed && e.Reason == "OAUTHBEARER" && strings.Contains(e.Detail, why) {
			return
		}
	}
	t.Fatalf("no authentication_failed event with %q in %v", why, c.Events(since))
}

// accepted logs in with token by hand and returns the session lifetime.
func accepted(t *testing.T, c *Cluster, token string) (*rawClient, time.Duration) {
	t.Helper()
	r := dialRaw(t, saslAddr(t, c))
	r.handshake(1, "OAUTHBEARER")
	resp := r.authenticate(1, "n,,\x01auth=Bearer "+token+"\x01\x01")
	if resp.ErrorCode != 0 || len(resp.SASLAuthBytes) != 0 {
		t.Fatalf("login: error %d message %v bytes %q", resp.ErrorCode, resp.ErrorMessage, resp.SASLAuthBytes)
	}
	return r, time.Duration(resp.SessionLifetimeMillis) * time.Millisecond
}

// TestOAuthRefusedTokens: each kind of bad token is refused with Kafka's
// answer, on the cluster's clock.
func TestOAuthRefusedTokens(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_800_000_000, 0))
	c := oauthCluster(t, Config{Clock: clk})
	issue := func(req TokenRequest) string {
		t.Helper()
		tok, err := c.IssueToken(req)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	accepted(t, c, issue(TokenRequest{Subject: "alice"}))

	refused(t, c, issue(TokenRequest{Subject: "alice", Claims: map[string]any{"aud": "billing"}}),
		"Audience (aud) claim [billing] doesn't contain an acceptable identifier. Expected kafka as an aud value.")
	refused(t, c, issue(TokenRequest{Subject: "alice", Claims: map[string]any{"iss": "https://elsewhere"}}),
		"Issuer (iss) claim value (https://elsewhere) doesn't match expected value of fakekafka")
	refused(t, c, issue(TokenRequest{Subject: "alice", Claims: map[string]any{"nbf": c.Now().Add(time.Minute).Unix()}}),
		"The JWT is not yet valid")

	// Expiry: a token of one minute is good for the clock skew (30 s) past its exp.
	short := issue(TokenRequest{Subject: "alice", Lifetime: time.Minute})
	c.AdvanceClock(89 * time.Second)
	accepted(t, c, short)
	c.AdvanceClock(time.Second)
	refused(t, c, short, "The JWT is no longer valid")

	// A key the JWKS does not have, and a signature by the wrong key.
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"sub": "alice", "iss": "fakekafka", "aud": "kafka", "iat": c.Now().Unix(), "exp": c.Now().Add(time.Hour).Unix()}
	unknownKid, err := sasl.SignJWT(claims, "ES256", "rotated-2", other)
	if err != nil {
		t.Fatal(err)
	}
	refused(t, c, unknownKid, `Unable to find a suitable verification key for JWS w/ header {"alg":"ES256","kid":"rotated-2","typ":"JWT"}`)
	forged, err := sasl.SignJWT(claims, "ES256", "fakekafka-1", other)
	if err != nil {
		t.Fatal(err)
	}
	refused(t, c, forged, "JWS signature is invalid")
	refused(t, c, unsecuredJWSAt("alice", c.Now().Add(time.Hour)), "Malformed JWT provided; expected at least a signature section")
}

// TestOAuthSessionFollowsTokenExpiry (KIP-368): the session lasts until
// the token's exp; a client re-authenticates with a new token on the same
// connection, or the broker closes it at its next request after expiry.
// franz-go, whose connection is closed, logs in again with a fresh token.
func TestOAuthSessionFollowsTokenExpiry(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_800_000_000, 0))
	c := oauthCluster(t, Config{Clock: clk, OAuth: OAuthConfig{Issuer: &OAuthIssuer{
		Clients: map[string]string{"svc-orders": "orders-secret"}, TokenLifetime: 10 * time.Minute}}})
	tok, _ := c.IssueToken(TokenRequest{Subject: "alice"})
	r, life := accepted(t, c, tok)
	if life != 10*time.Minute {
		t.Fatalf("session lifetime %v, want the token's 10m", life)
	}
	c.AdvanceClock(9 * time.Minute)
	r.metadata()
	renewed, _ := c.IssueToken(TokenRequest{Subject: "alice"})
	r.handshake(1, "OAUTHBEARER")
	if resp := r.authenticate(1, "n,,\x01auth=Bearer "+renewed+"\x01\x01"); resp.ErrorCode != 0 || resp.SessionLifetimeMillis != (10*time.Minute).Milliseconds() {
		t.Fatalf("re-authentication: error %d lifetime %d", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	ctx := testContext(t)
	if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventClientReauthenticated && e.Detail == "User:alice" }); err != nil {
		t.Fatal(err)
	}
	c.AdvanceClock(10 * time.Minute)
	r.send(kmsg.NewPtrMetadataRequest())
	expectClosed(t, r.nc)

	// franz-go: its first token expires on the cluster's clock; the broker
	// closes the connection and the client logs in again with a new one.
	var fetched int
	mech := oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		tok, _, err := c.ClientCredentialsToken("svc-orders", "orders-secret", "")
		fetched++
		return oauth.Auth{Token: tok}, err
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(saslAddr(t, c)), kgo.SASL(mech), kgo.DefaultProduceTopic("expiry"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("one")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	since := c.LastEventSeq()
	c.AdvanceClock(11 * time.Minute)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("two")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(e Event) bool {
		return e.Seq > since && e.Type == EventClientAuthenticated && e.Detail == "User:svc-orders"
	}); err != nil {
		t.Fatalf("no new login after the token expired: %v", err)
	}
}

// TestOAuthIssuerSigningKeyFile: the issuer signs with a PEM key it is
// given, publishes its public half, and refuses a key that cannot sign its
// algorithm at start.
func TestOAuthIssuerSigningKeyFile(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "issuer.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	c := oauthCluster(t, Config{OAuth: OAuthConfig{Issuer: &OAuthIssuer{SigningKeyFile: path, Algorithm: "ES384", KeyID: "mine"}}})
	doc, err := c.OAuthJWKS()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := sasl.ParseJWKS(doc)
	if err != nil || len(keys) != 1 || keys[0].KeyID != "mine" || !key.PublicKey.Equal(keys[0].Key) {
		t.Fatalf("JWKS %s: %v", doc, err)
	}
	tok, err := c.IssueToken(TokenRequest{Subject: "alice", Scope: "a b"})
	if err != nil {
		t.Fatal(err)
	}
	accepted(t, c, tok)
	if _, err := NewCluster(Config{OAuth: OAuthConfig{Issuer: &OAuthIssuer{SigningKeyFile: path, Algorithm: "RS256"}}}); err == nil ||
		!strings.Contains(err.Error(), "cannot sign RS256") {
		t.Fatalf("an EC key for RS256: %v", err)
	}
	if _, err := NewCluster(Config{OAuth: OAuthConfig{Issuer: &OAuthIssuer{Algorithm: "HS256"}}}); err == nil {
		t.Fatal("HS256 accepted")
	}
	if _, err := (&Cluster{}).IssueToken(TokenRequest{Subject: "a"}); !errors.Is(err, ErrOAuthIssuerOff) {
		t.Fatalf("issuer off: %v", err)
	}
}

// TestOAuthMalformedFirstMessage: what Kafka fails at once, without the
// invalid_token challenge: a malformed client message, an authorization id
// other than the token's subject; a scheme other than Bearer closes the
// connection without an answer.
func TestOAuthMalformedFirstMessage(t *testing.T) {
	c := oauthCluster(t, Config{})
	tok, err := c.IssueToken(TokenRequest{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]string{
		"n,a=bob,\x01auth=Bearer " + tok + "\x01\x01": "Authentication failed: Client requested an authorization id (bob) that is different from the token's principal name (alice)",
		"n,,\x01auth=Bearer " + tok + "\x01":          "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER",
	} {
		r := dialRaw(t, saslAddr(t, c))
		r.handshake(1, "OAUTHBEARER")
		resp := r.authenticate(1, msg)
		if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != want {
			t.Fatalf("error %d message %v, want %q", resp.ErrorCode, resp.ErrorMessage, want)
		}
		expectClosed(t, r.nc)
	}
	r := dialRaw(t, saslAddr(t, c))
	r.handshake(1, "OAUTHBEARER")
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = 1, []byte("n,,\x01auth=Basic "+tok+"\x01\x01")
	r.send(req)
	if b, err := r.readFrame(); err == nil {
		t.Fatalf("answered %q, want the connection closed", b)
	}
}
