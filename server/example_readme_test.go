package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// acks=all fails with NOT_ENOUGH_REPLICAS while the ISR is below
// min.insync.replicas, and succeeds again once a follower catches up.
func TestAcksAllBelowMinISR(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{}) // 3 brokers on free ports, closed by t.Cleanup
	if err := c.CreateTopic("orders", 1, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.Bootstrap()...),
		kgo.DefaultProduceTopic("orders"),        // acks=all is franz-go's default
		kgo.RecordRetries(1),                     // the default retries forever
		kgo.MetadataMinAge(100*time.Millisecond), // a retry first waits this (default 5 s)
		kgo.ProducerLinger(0),                    // send at once
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()

	// Broker 1 leads orders/0. Stop both followers and leave it alone in the ISR.
	c.PauseReplica("orders", 0, 2)
	c.PauseReplica("orders", 0, 3)
	c.SetISR("orders", 0, []int32{1})
	err = cl.ProduceSync(ctx, kgo.StringRecord("lost?")).FirstErr()
	if !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("produce with ISR [1]: %v, want NOT_ENOUGH_REPLICAS", err)
	}

	// Heal: follower 2 fetches again and rejoins the ISR.
	seq := c.LastEventSeq()
	c.ResumeReplica("orders", 0, 2)
	if _, err := c.WaitForAfter(ctx, seq, server.ISRExpanded("orders", 0)); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, kgo.StringRecord("kept")).FirstErr(); err != nil {
		t.Fatalf("produce with ISR [1 2]: %v", err)
	}
}
