package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestStuckFollowerLeavesISR(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Clock: clock.NewManual(time.Time{})}) // time stands still

	c.CreateTopic("orders", 1, 3, nil) // replicas 1, 2, 3; leader 1
	c.PauseReplica("orders", 0, 3)

	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("orders"),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), kgo.StringRecord("o-1")).FirstErr(); err != nil {
		t.Fatal(err)
	}

	c.AdvanceClock(30 * time.Second) // replica.lag.time.max.ms: not out yet
	if ps, _ := c.Partition("orders", 0); len(ps.ISR) != 3 {
		t.Fatalf("ISR %v", ps.ISR)
	}
	c.AdvanceClock(15 * time.Second) // the leader's next ISR check (every lag/2, as in Kafka)
	if ps, _ := c.Partition("orders", 0); !slices.Equal(ps.ISR, []int32{1, 2}) || ps.HighWatermark != 1 {
		t.Fatalf("ISR %v HW %d", ps.ISR, ps.HighWatermark) // follower 2 kept fetching: it stays in
	}
}
