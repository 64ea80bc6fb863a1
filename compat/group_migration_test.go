package compat

import (
	"context"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSaramaGroupMigration: two sarama members (classic, range) share
// "work"; a franz-go member with the KIP-848 protocol joins, so the group
// upgrades and sarama's members carry on inside it through the classic
// protocol; the franz-go member leaves and the group downgrades. Every
// record is consumed exactly once and the commits reach the end.
func TestSaramaGroupMigration(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{GroupMinSessionTimeout: 100 * time.Millisecond,
		ConsumerGroupHeartbeatInterval: 100 * time.Millisecond})
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	p := newValueProducer(t, c)
	var d deliveries
	a := startSaramaMember(t, c, "a", &d)
	b := startSaramaMember(t, c, "b", &d)
	waitGroup(t, c, "g", 2)
	p.produce(300)
	d.wait(t, 300)

	ctx, cancel := context.WithCancel(context.Background())
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("work"),
		kgo.ServerSideBalancer(), kgo.AutoCommitMarks(), kgo.AutoCommitInterval(100*time.Millisecond),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) { cl.CommitMarkedOffsets(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				d.add(string(r.Value))
				cl.MarkCommitRecords(r)
			})
		}
	}()
	waitUntil(t, "the upgrade with three members sharing the partitions", func() bool {
		gs, _ := c.Group("g")
		total := 0
		for _, m := range gs.Members {
			total += len(m.Assignment["work"])
		}
		return gs.Type == "consumer" && gs.State == "Stable" && len(gs.Members) == 3 && total == 12
	})
	p.produce(300)
	d.wait(t, 600)

	cancel()
	<-done
	if err := cl.CommitMarkedOffsets(context.Background()); err != nil {
		t.Fatal(err)
	}
	cl.Close() // leaves: the last KIP-848 member, so the group downgrades
	waitUntil(t, "the downgrade", func() bool {
		gs, _ := c.Group("g")
		return gs.Type == "classic"
	})
	waitGroup(t, c, "g", 2)
	p.produce(300)
	d.wait(t, 900)
	waitCommitted(t, c, "g")
	d.exactlyOnce(t, 900)
	a.stop()
	b.stop()
}

// TestSaramaJoinsConsumerGroup: a franz-go member with the KIP-848
// protocol makes "g" a consumer group; a sarama member (classic) joins it
// and is served its share through JoinGroup/SyncGroup; then it leaves
// (LeaveGroup) and the franz-go member takes everything back. The group
// stays a consumer group; every record is consumed exactly once.
func TestSaramaJoinsConsumerGroup(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{GroupMinSessionTimeout: 100 * time.Millisecond,
		ConsumerGroupHeartbeatInterval: 100 * time.Millisecond})
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	p := newValueProducer(t, c)
	var d deliveries
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("work"),
		kgo.ServerSideBalancer(), kgo.AutoCommitMarks(), kgo.AutoCommitInterval(100*time.Millisecond),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) { cl.CommitMarkedOffsets(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				d.add(string(r.Value))
				cl.MarkCommitRecords(r)
			})
		}
	}()
	p.produce(300)
	d.wait(t, 300)

	s := startSaramaMember(t, c, "classic", &d)
	waitUntil(t, "the classic member to get its share of the consumer group", func() bool {
		gs, _ := c.Group("g")
		owning, total := 0, 0
		for _, m := range gs.Members {
			if k := len(m.Assignment["work"]); k > 0 {
				owning++
				total += k
			}
		}
		return gs.Type == "consumer" && gs.State == "Stable" && owning == 2 && total == 12
	})
	p.produce(300)
	d.wait(t, 600)

	s.stop() // LeaveGroup
	waitUntil(t, "the franz-go member to hold every partition again", func() bool {
		gs, _ := c.Group("g")
		return gs.Type == "consumer" && len(gs.Members) == 1 && len(gs.Members[0].Assignment["work"]) == 12
	})
	p.produce(300)
	d.wait(t, 900)
	waitCommitted(t, c, "g")
	d.exactlyOnce(t, 900)
	cancel()
	<-done
}
