package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// TestOIDCExample is docs/security.md's "OIDC" Go example: the built-in
// issuer, a client logging in with the client credentials grant, a token
// the brokers refuse, and expiry on the cluster's clock.
func TestOIDCExample(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{
		Brokers:   1,
		Listeners: []server.Listener{{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}},
		Clock:     clock.NewManual(time.Unix(1_800_000_000, 0)),
		OAuth: server.OAuthConfig{Issuer: &server.OAuthIssuer{
			Clients: map[string]string{"svc-orders": "orders-secret"}, // client id: secret
		}},
	})
	// What a client's OIDC login does over HTTP (POST /v1/oauth/token):
	mech := oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		tok, _, err := c.ClientCredentialsToken("svc-orders", "orders-secret", "")
		return oauth.Auth{Token: tok}, err
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.SASL(mech), // User:svc-orders
		kgo.DefaultProduceTopic("orders"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("paid")).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// A token of your own: other claims, another lifetime, or one the brokers refuse.
	wrongAud, _ := c.IssueToken(server.TokenRequest{Subject: "svc-orders", Claims: map[string]any{"aud": "billing"}})
	bad, _ := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.SASL(oauth.Auth{Token: wrongAud}.AsMechanism()))
	defer bad.Close()
	if err := bad.Ping(ctx); err == nil || !strings.Contains(err.Error(), `{"status":"invalid_token"}`) {
		t.Fatalf("wrong audience: %v, want invalid_token", err)
	}
	short, _ := c.IssueToken(server.TokenRequest{Subject: "svc-orders", Lifetime: time.Minute})
	c.AdvanceClock(2 * time.Minute) // past exp and the 30 s clock skew: refused from now on
	expired, _ := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.SASL(oauth.Auth{Token: short}.AsMechanism()))
	defer expired.Close()
	if err := expired.Ping(ctx); err == nil || !strings.Contains(err.Error(), `{"status":"invalid_token"}`) {
		t.Fatalf("expired token: %v, want invalid_token", err)
	}
	// cl's session lasts as long as its token (an hour): it goes on.
	if err := cl.ProduceSync(ctx, kgo.StringRecord("shipped")).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
