package server_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A follower that stops fetching leaves the ISR once replica.lag.time.max.ms
// (Kafka's 30 s) has passed, at the leader's next ISR check. On a manual
// clock the test moves time itself: nothing waits, nothing flakes.
func ExampleCluster_AdvanceClock() {
	c, err := server.NewCluster(server.Config{Clock: clock.NewManual(time.Time{})})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.CreateTopic("orders", 1, 3, nil) // replicas 1, 2, 3; leader 1
	c.PauseReplica("orders", 0, 3)

	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("orders"),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), kgo.StringRecord("o-1")).FirstErr(); err != nil {
		panic(err)
	}

	c.AdvanceClock(30 * time.Second)
	ps, _ := c.Partition("orders", 0)
	fmt.Println("after 30 s:", ps.ISR)

	c.AdvanceClock(15 * time.Second) // the next ISR check
	ps, _ = c.Partition("orders", 0)
	fmt.Println("after 45 s:", ps.ISR, "HW", ps.HighWatermark)
	// Output:
	// after 30 s: [1 2 3]
	// after 45 s: [1 2] HW 1
}
