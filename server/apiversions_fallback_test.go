package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestApiVersionsFallbackKeepsFeatures: franz-go asks ApiVersions at a
// version above the broker's (v5 against our v4). Answered as Kafka does
// since KIP-511, with ApiVersions' own range only, it retries at v4 on the
// same connection and learns the finalized transaction.version, so a
// client that has connected runs KIP-890 from its first transaction. With
// the full key list in the v0 answer it took that answer as final and ran
// its first transaction under version 1.
func TestApiVersionsFallbackKeepsFeatures(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c, kgo.TransactionalID("first"), kgo.DefaultProduceTopic("t"))
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	runTxn(t, cl, true, "a")
	for _, ts := range c.Transactions() {
		if ts.TransactionalID != "first" {
			continue
		}
		// Version 2 bumps the epoch at every end: 0 at InitProducerId, 1 after.
		if ts.TransactionVersion != 2 || ts.ProducerEpoch != 1 {
			t.Fatalf("first transaction ran transaction version %d (epoch %d), want 2 (epoch 1)", ts.TransactionVersion, ts.ProducerEpoch)
		}
		return
	}
	t.Fatalf("transactional id first missing from %+v", c.Transactions())
}
