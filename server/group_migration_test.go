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

// TestGroupMigrationSurvivesCoordinatorCrash: a mixed group (a classic
// franz-go member inside a consumer group) comes back from
// __consumer_offsets at the new coordinator as a consumer group with the
// same members at the same epochs, which keep consuming; its downgrade
// there is written too, so a second crash restores a classic group.
func TestGroupMigrationSurvivesCoordinatorCrash(t *testing.T) {
	c := NewTestCluster(t, Config{ConsumerGroupHeartbeatInterval: 50 * time.Millisecond, GroupMinSessionTimeout: 100 * time.Millisecond})
	if err := c.CreateTopic("mig", 6, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("mig"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	next := 0
	var mu sync.Mutex
	seen := map[string]bool{}
	produce := func(n int) {
		for range n {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(next))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	all := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == next
	}
	member := func(ctx context.Context, opts ...kgo.Opt) chan struct{} {
		opts = append(opts, kgo.ConsumerGroup("mig"), kgo.ConsumeTopics("mig"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(100*time.Millisecond), kgo.AutoCommitInterval(100*time.Millisecond),
			kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
		cl := newClient(t, c, opts...)
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer cl.Close()
			for {
				fs := cl.PollFetches(ctx)
				if ctx.Err() != nil || fs.IsClientClosed() {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)] = true
					mu.Unlock()
				})
			}
		}()
		return done
	}
	group := func() GroupState {
		gs, _ := c.Group("mig")
		return gs
	}
	produce(30)
	member(ctx, kgo.Balancers(kgo.CooperativeStickyBalancer()))
	waitFor(t, 20*time.Second, "the classic member to consume", all)
	kctx, stopKIP848 := context.WithCancel(ctx)
	kDone := member(kctx, kgo.ServerSideBalancer())
	var before GroupState
	waitFor(t, 20*time.Second, "a settled mixed group of two", func() bool {
		before = group()
		owning := 0
		for _, m := range before.Members {
			if len(m.Assignment["mig"]) > 0 {
				owning++
			}
		}
		return before.Type == "consumer" && before.State == "Stable" && owning == 2
	})
	// Both consume before the crash (franz-go keeps dialling a crashed
	// coordinator for the offsets of an assignment it just got).
	produce(30)
	waitFor(t, 20*time.Second, "both members to consume", all)

	coord, _ := c.coordinatorOf("mig")
	if err := c.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the group at the new coordinator", func() bool {
		gs := group()
		return gs.Coordinator != coord && gs.Type == "consumer" && len(gs.Members) == 2
	})
	after := group()
	for i, m := range before.Members {
		if after.Members[i].MemberID != m.MemberID || *after.Members[i].MemberEpoch != *m.MemberEpoch {
			t.Errorf("member %d: %s at epoch %d before the crash, %s at %d after", i, m.MemberID, *m.MemberEpoch, after.Members[i].MemberID, *after.Members[i].MemberEpoch)
		}
	}
	produce(30)
	waitFor(t, 20*time.Second, "both members to consume at the new coordinator", all)

	stopKIP848()
	<-kDone
	waitFor(t, 20*time.Second, "the downgrade at the new coordinator", func() bool { return group().Type == "classic" })
	produce(30)
	waitFor(t, 20*time.Second, "the classic member to consume everything after the downgrade", all)
	waitFor(t, 20*time.Second, "a Stable classic group", func() bool { return group().State == "Stable" })
	if err := c.StartBroker(coord); err != nil {
		t.Fatal(err)
	}
	coord2, _ := c.coordinatorOf("mig")
	if err := c.StopBroker(coord2, StopCrash); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "a classic group at the third coordinator", func() bool {
		gs := group()
		return gs.Coordinator != coord2 && gs.Type == "classic" && len(gs.Members) == 1
	})
	produce(30)
	waitFor(t, 20*time.Second, "the classic member to consume after both crashes", all)
}
