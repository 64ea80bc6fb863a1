package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupMigrationRoundTrip runs franz-go members of one group across
// both migrations: a classic member consumes; a KIP-848 member joins, so
// the group upgrades (the classic member stays, served through the
// classic protocol) and the partitions are shared; the KIP-848 member
// leaves, so the group downgrades and the classic member takes everything
// back. Every record is consumed, and the committed offsets carry over.
func TestGroupMigrationRoundTrip(t *testing.T) {
	c := NewTestCluster(t, Config{ConsumerGroupHeartbeatInterval: 50 * time.Millisecond, GroupMinSessionTimeout: 100 * time.Millisecond})
	if err := c.CreateTopic("mig", 6, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("mig"))
	next := 0
	produce := func(n int) {
		var rs []*kgo.Record
		for range n {
			rs = append(rs, &kgo.Record{Value: []byte(fmt.Sprint(next))})
			next++
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	consumed := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	member := func(ctx context.Context, opts ...kgo.Opt) chan struct{} {
		opts = append(opts, kgo.ConsumerGroup("mig"), kgo.ConsumeTopics("mig"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.AutoCommitInterval(100*time.Millisecond), kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(100*time.Millisecond))
		cl := newClient(t, c, opts...)
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer cl.Close()
			for {
				fs := cl.PollFetches(ctx)
				if ctx.Err() != nil || fs.IsClientClosed() {
					cl.CommitUncommittedOffsets(context.Background())
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)]++
					mu.Unlock()
				})
			}
		}()
		return done
	}
	groupType := func() string {
		gs, _ := c.Group("mig")
		return gs.Type
	}

	produce(60)
	member(ctx, kgo.Balancers(kgo.CooperativeStickyBalancer()))
	waitFor(t, 20*time.Second, "the classic member to consume the first records", func() bool { return consumed() == 60 })
	if typ := groupType(); typ != "classic" {
		t.Fatalf("group type %q before the upgrade", typ)
	}

	kctx, stopKIP848 := context.WithCancel(ctx)
	kDone := member(kctx, kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ServerSideBalancer())
	waitFor(t, 20*time.Second, "the group to upgrade", func() bool { return groupType() == "consumer" })
	waitFor(t, 20*time.Second, "both members to own partitions", func() bool {
		gs, _ := c.Group("mig")
		owning := 0
		for _, m := range gs.Members {
			if len(m.Assignment["mig"]) > 0 {
				owning++
			}
		}
		return len(gs.Members) == 2 && owning == 2
	})
	produce(60)
	waitFor(t, 20*time.Second, "records produced after the upgrade", func() bool { return consumed() == 120 })

	stopKIP848()
	<-kDone
	waitFor(t, 20*time.Second, "the group to downgrade", func() bool { return groupType() == "classic" })
	produce(60)
	waitFor(t, 20*time.Second, "records produced after the downgrade", func() bool { return consumed() == 180 })

	evs := c.Events(0)
	for _, want := range []EventType{EventGroupUpgraded, EventGroupDowngraded} {
		found := false
		for _, e := range evs {
			found = found || e.Type == want && e.Group == "mig"
		}
		if !found {
			t.Errorf("no %s event", want)
		}
	}
}
