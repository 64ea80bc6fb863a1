package server_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A produce with acks=all is refused while the ISR is below
// min.insync.replicas, and accepted again once a follower catches up and
// rejoins it. In a test, server.NewTestCluster(t, ...) does the start and
// the close.
func Example() {
	c, err := server.NewCluster(server.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.CreateTopic("orders", 1, 3, map[string]string{"min.insync.replicas": "2"})
	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordRetries(1), kgo.MetadataMinAge(100*time.Millisecond), kgo.ProducerLinger(0))
	defer cl.Close()
	ctx := context.Background()

	c.PauseReplica("orders", 0, 2)
	c.PauseReplica("orders", 0, 3)
	c.SetISR("orders", 0, []int32{1})
	err = cl.ProduceSync(ctx, kgo.StringRecord("a")).FirstErr()
	fmt.Println("ISR [1]:", errors.Is(err, kerr.NotEnoughReplicas))

	seq := c.LastEventSeq()
	c.ResumeReplica("orders", 0, 2)
	c.WaitForAfter(ctx, seq, server.ISRExpanded("orders", 0))
	err = cl.ProduceSync(ctx, kgo.StringRecord("b")).FirstErr()
	ps, _ := c.Partition("orders", 0)
	fmt.Println("ISR", ps.ISR, "error:", err)
	// Output:
	// ISR [1]: true
	// ISR [1 2] error: <nil>
}
