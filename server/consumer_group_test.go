package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKIP848ConsumerGroup runs franz-go members with the server-side
// assignor: they share 12 partitions evenly, a member joining and one
// leaving move partitions only after revocation, and every record is
// consumed and committed.
func TestKIP848ConsumerGroup(t *testing.T) {
	for _, balancer := range []struct {
		name string
		b    kgo.GroupBalancer
	}{{"uniform", kgo.CooperativeStickyBalancer()}, {"range", kgo.RangeBalancer()}} {
		t.Run(balancer.name, func(t *testing.T) {
			testKIP848(t, balancer.b)
		})
	}
}

func testKIP848(t *testing.T, balancer kgo.GroupBalancer) {
	c := NewTestCluster(t, Config{ConsumerGroupHeartbeatInterval: 50 * time.Millisecond})
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	const records = 1200
	prod := newClient(t, c, kgo.DefaultProduceTopic("work"))
	next := 0
	produce := func(n int) { // a third of the records at each stage
		var rs []*kgo.Record
		for range n {
			rs = append(rs, &kgo.Record{Key: []byte(fmt.Sprint(next)), Value: []byte(fmt.Sprint(next))})
			next++
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(records / 3)

	var mu sync.Mutex
	seen := map[string]int{}
	member := func(ctx context.Context) (*kgo.Client, chan struct{}) {
		cl := newClient(t, c, kgo.ConsumerGroup("g848"), kgo.ConsumeTopics("work"), kgo.Balancers(balancer),
			kgo.ServerSideBalancer(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(100*time.Millisecond))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				fs := cl.PollFetches(ctx)
				if ctx.Err() != nil || fs.IsClientClosed() {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)]++
					mu.Unlock()
				})
			}
		}()
		return cl, done
	}
	actx, cancelA := context.WithCancel(ctx)
	a, aDone := member(actx)
	waitFor(t, 20*time.Second, "member A to consume something", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0
	})
	b, bDone := member(ctx)
	cc, cDone := member(ctx)
	defer func() { b.Close(); cc.Close(); <-bDone; <-cDone }()

	describe := func() kmsg.ConsumerGroupDescribeResponseGroup {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"g848"}
		resp, err := req.RequestWith(ctx, newClient(t, c))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Groups[0]
	}
	waitFor(t, 20*time.Second, "three members with 4 partitions each, stable", func() bool {
		g := describe()
		if g.State != "Stable" || len(g.Members) != 3 {
			return false
		}
		for _, m := range g.Members {
			n := 0
			for _, tp := range m.Assignment.TopicPartitions {
				n += len(tp.Partitions)
			}
			if n != 4 {
				return false
			}
		}
		return true
	})

	produce(records / 3)
	waitFor(t, 20*time.Second, "the second third consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 2*records/3
	})

	// A leaves; B and C take its partitions.
	cancelA()
	a.Close()
	<-aDone
	waitFor(t, 20*time.Second, "two members with 6 partitions each", func() bool {
		g := describe()
		if g.State != "Stable" || len(g.Members) != 2 {
			return false
		}
		for _, m := range g.Members {
			n := 0
			for _, tp := range m.Assignment.TopicPartitions {
				n += len(tp.Partitions)
			}
			if n != 6 {
				return false
			}
		}
		return true
	})
	produce(records / 3)
	waitFor(t, 20*time.Second, "every record consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == records
	})
	adm := kadm.NewClient(newClient(t, c))
	waitFor(t, 20*time.Second, "commits to cover every partition", func() bool {
		os, err := adm.FetchOffsets(ctx, "g848")
		if err != nil {
			return false
		}
		total := int64(0)
		os.Each(func(o kadm.OffsetResponse) { total += o.At })
		return total == records
	})
	mu.Lock()
	var dups []string
	for v, n := range seen {
		if n > 1 {
			dups = append(dups, v)
		}
	}
	mu.Unlock()
	slices.Sort(dups)
	// Partitions move only after their owner revoked them (and franz-go
	// commits on revoke), so nothing is read twice.
	if len(dups) > 0 {
		t.Errorf("%d records consumed more than once, e.g. %v", len(dups), dups[:min(5, len(dups))])
	}
}

// TestKIP848GroupSurvivesCoordinatorCrash crashes the coordinator of a
// stable KIP-848 group: the new coordinator rebuilds the group from its
// replica of __consumer_offsets, so the members keep their ids, epochs and
// partitions instead of rejoining.
func TestKIP848GroupSurvivesCoordinatorCrash(t *testing.T) {
	c := NewTestCluster(t, Config{ConsumerGroupHeartbeatInterval: 50 * time.Millisecond})
	if err := c.CreateTopic("work", 6, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	var members []*kgo.Client
	for range 2 {
		cl := newClient(t, c, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("work"), kgo.ServerSideBalancer(),
			kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
		members = append(members, cl)
		go func() {
			for !cl.PollFetches(ctx).IsClientClosed() && ctx.Err() == nil {
			}
		}()
	}
	describe := func() (map[string]int32, error) {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"g"}
		resp, err := req.RequestWith(ctx, newClient(t, c, kgo.SeedBrokers(liveBrokers(c)...)))
		if err != nil {
			return nil, err
		}
		g := resp.Groups[0]
		if g.ErrorCode != 0 || g.State != "Stable" {
			return nil, fmt.Errorf("state %q error %d", g.State, g.ErrorCode)
		}
		out := map[string]int32{}
		for _, m := range g.Members {
			out[m.MemberID] = m.MemberEpoch
		}
		return out, nil
	}
	var before map[string]int32
	waitFor(t, 20*time.Second, "a stable group of two", func() bool {
		m, err := describe()
		before = m
		return err == nil && len(m) == 2
	})
	coord, _ := c.coordinatorOf("g")
	if err := c.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	var after map[string]int32
	waitFor(t, 20*time.Second, "the group at the new coordinator", func() bool {
		m, err := describe()
		after = m
		return err == nil && len(m) == 2
	})
	for id, epoch := range before {
		if after[id] != epoch {
			t.Errorf("member %s: epoch %d before the crash, %d after (members %v → %v)", id, epoch, after[id], before, after)
		}
	}
	for _, cl := range members {
		cl.Close()
	}
}

func liveBrokers(c *Cluster) []string {
	var out []string
	for _, b := range c.State().Brokers {
		if b.Up {
			out = append(out, b.Address)
		}
	}
	return out
}
