package server_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The delegation-token example of docs/security.md: alice creates a
// token, a client logs in with it as alice, and it expires on the
// cluster's clock.
func TestDelegationTokenExample(t *testing.T) {
	clk := clock.NewManual(time.Now())
	c := server.NewTestCluster(t, server.Config{
		Clock:                              clk,
		Listeners:                          []server.Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"}},
		SASLUsers:                          map[string]string{"alice": "alice-secret"},
		DelegationTokenSecretKey:           "s3cret",    // delegation.token.secret.key: tokens on
		DelegationTokenExpiryTime:          time.Hour,   // a token lives an hour unless renewed
		DelegationTokenExpiryCheckInterval: time.Minute, // expired tokens are removed every minute
	})
	var seeds []string
	for _, b := range c.Listeners()[1].Brokers { // SASL_PLAINTEXT
		seeds = append(seeds, b.Advertised)
	}
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	admin := kadm.NewClient(cl)
	tok, err := admin.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}

	// Log in with the token: SCRAM with the token id as user, the HMAC in
	// base64 as password and tokenauth=true. The principal is User:alice;
	// it may produce and consume, not create, renew or expire tokens.
	withToken := scram.Auth{User: tok.TokenID, Pass: base64.StdEncoding.EncodeToString(tok.HMAC), IsToken: true}
	tcl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.SASL(withToken.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer tcl.Close()
	if err := tcl.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	// Renewed for 30 minutes, then past its expiry: gone, and no login.
	if _, err := admin.RenewDelegationToken(ctx, tok.HMAC, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	clk.Advance(31 * time.Minute)
	if ds, err := admin.DescribeDelegationTokens(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("after expiry: %v %v", ds, err)
	}
	late, _ := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.SASL(withToken.AsSha512Mechanism()))
	defer late.Close()
	if err := late.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("login with the expired token: %v", err)
	}
}
