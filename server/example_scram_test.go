package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// docs/security.md's SCRAM example, verbatim between the markers
// (TestSCRAMExampleInDocs checks it).

// example:scram:start
func TestSCRAMOverSASLSSL(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{
		Listeners: []server.Listener{
			{Name: "PLAINTEXT", Listen: "127.0.0.1:0"},
			{Name: "SASL_SSL", Listen: "127.0.0.1:0"},
		},
		SASLUsers:           map[string]string{"alice": "alice-secret"},
		SASLSessionLifetime: 10 * time.Minute, // optional: connections.max.reauth.ms
	})
	var saslSSL []string
	for _, l := range c.Listeners() {
		if l.Name == "SASL_SSL" {
			for _, b := range l.Brokers {
				saslSSL = append(saslSSL, b.Advertised)
			}
		}
	}
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(saslSSL...),
		kgo.DialTLSConfig(c.ClientTLSConfig()), // trusts the cluster's CA
		kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()),
		kgo.DefaultProduceTopic("orders"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("hello")).FirstErr(); err != nil {
		t.Fatalf("alice over SASL_SSL: %v", err)
	}

	// A wrong password gets Kafka's answer: SASL_AUTHENTICATION_FAILED.
	bad, err := kgo.NewClient(kgo.SeedBrokers(saslSSL...), kgo.DialTLSConfig(c.ClientTLSConfig()),
		kgo.SASL(scram.Auth{User: "alice", Pass: "wrong"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// example:scram:end

// TestSCRAMExampleInDocs: docs/security.md shows the example above as it is.
func TestSCRAMExampleInDocs(t *testing.T) {
	requireExampleInDocs(t, "example_scram_test.go", "scram", "../docs/security.md")
}
