package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shareChaosLock is the share groups' lock duration in chaos runs: short,
// so that held records come back within a 4 s run (1 s is the least
// group.share.min.record.lock.duration.ms allows).
const shareChaosLock = time.Second

// shareChaosBrokerConfigs lower the broker's bounds so a group may set the
// chaos runs' lock duration and a fast heartbeat interval.
var shareChaosBrokerConfigs = map[string]string{
	"group.share.min.record.lock.duration.ms": "1000",
	"group.share.min.heartbeat.interval.ms":   "100",
}

// shareChaosConfig gives share group group the chaos runs' settings, as a
// user would with IncrementalAlterConfigs: it starts at the earliest
// offset, locks records for shareChaosLock and heartbeats every 200 ms (so
// a worker gets partitions soon after it joins). The cluster must have
// shareChaosBrokerConfigs. Call it before the group's first request.
func shareChaosConfig(t *testing.T, c *Cluster, group string) {
	t.Helper()
	if err := c.AlterGroupConfig(group, map[string]string{
		"share.auto.offset.reset":       "earliest",
		"share.record.lock.duration.ms": strconv.FormatInt(shareChaosLock.Milliseconds(), 10),
		"share.heartbeat.interval.ms":   "200",
	}, nil); err != nil {
		t.Fatal(err)
	}
}

// shareWorkload consumes topic in share group group with franz-go until
// ctx ends: a worker that accepts most records, releases every seventh
// on its first delivery and rejects every thirteenth, and a member that
// takes records once, never acknowledges them and leaves once their locks
// ran out, so the worker gets its partitions and those records again. The
// returned func waits for both and says how many records the worker saw.
func shareWorkload(t *testing.T, c *Cluster, ctx context.Context, group, topic string) func() int {
	fast := kgo.MetadataMinAge(100 * time.Millisecond)
	worker := newClient(t, c, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond), fast)
	var wg sync.WaitGroup
	seen := 0
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for _, r := range worker.PollFetches(ctx).Records() {
				seen++
				switch {
				case r.Offset%7 == 3 && r.DeliveryCount() == 1:
					r.Ack(kgo.AckRelease)
				case r.Offset%13 == 5:
					r.Ack(kgo.AckReject)
				default:
					r.Ack(kgo.AckAccept)
				}
			}
			worker.FlushAcks(ctx)
		}
	}()
	go func() {
		defer wg.Done()
		// Join once a backlog built (pacing, not synchronisation): franz-go
		// fetches as soon as it is assigned. Poll until it holds
		// something, then hold it past its lock.
		select {
		case <-ctx.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
		staller, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
			kgo.FetchMaxWait(200*time.Millisecond), kgo.ShareMaxRecords(5), kgo.ShareMaxRecordsStrict(), fast)
		if err != nil {
			t.Error(err)
			return
		}
		defer staller.Close()
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			n := len(staller.PollFetches(pctx).Records())
			cancel()
			if n > 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(3 * shareChaosLock):
		}
	}()
	return func() int {
		wg.Wait()
		return seen
	}
}

// plantShareState replaces group's share partition of topic/0 on its
// leader with st, as a leader that lost or invented state would hold it.
func plantShareState(t *testing.T, c *Cluster, group, topic string, st share.PartitionState) {
	t.Helper()
	c.shares.mu.Lock()
	sp := c.shares.parts[share.Key{Group: group, TopicID: c.topic(topic).id, Partition: 0}]
	c.shares.mu.Unlock()
	if sp == nil {
		t.Fatalf("no share partition of %s/%s", group, topic)
	}
	sp.mu.Lock()
	sp.sm = share.Restore(st)
	sp.mu.Unlock()
}

// The checker flags share-group faults end to end: a leader that
// forgets an ACCEPT delivers the record again (accepted_redelivered), and
// one that takes a held record for acknowledged never gives it back
// after its lock ran out (lock_not_released). franz-go consumes; the
// faults are planted in the leader's state.
func TestChaosShareFlagsPlantedViolations(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := NewTestCluster(t, Config{Clock: clk, BrokerConfigs: shareChaosBrokerConfigs})
	shareChaosConfig(t, c, "sg")
	if err := c.CreateTopic("q", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	// A fixed schedule whose one action is never due: the manual clock
	// stays far from it.
	spec, err := chaos.ParseSpec(`{"seed":3,"duration_ms":600000,"actions":[{"at_ms":500000,"kind":"crash","broker":1,"hold_ms":1000}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(spec); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c, kgo.ShareGroup("sg"), kgo.ConsumeTopics("q"), kgo.FetchMaxWait(100*time.Millisecond))
	poll := func() []*kgo.Record {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		return cl.PollFetches(pctx).Records()
	}
	pollN := func(what string, n int) []*kgo.Record {
		var got []*kgo.Record
		waitFor(t, 30*time.Second, what, func() bool { got = append(got, poll()...); return len(got) >= n })
		return got
	}
	shareProduce(t, c, "q", 4)
	got := pollN("offsets 0-3", 4)
	types := []kgo.AckStatus{kgo.AckAccept, kgo.AckAccept, kgo.AckRelease, kgo.AckAccept}
	for i, r := range got {
		r.Ack(types[i])
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	// The released offset 2 comes back (franz-go fetches again at once,
	// so it is taken before any plant could race it) and is accepted.
	if again := pollN("offset 2 again", 1); len(again) != 1 || again[0].Offset != 2 || again[0].DeliveryCount() != 2 {
		t.Fatalf("released offset came back as %v", again)
	} else {
		again[0].Ack(kgo.AckAccept)
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	// The leader forgets offset 0's ACCEPT.
	plantShareState(t, c, "sg", "q", share.PartitionState{StartOffset: 0, Batches: []share.StateBatch{
		{FirstOffset: 0, LastOffset: 0, DeliveryState: share.Available, DeliveryCount: 1},
		{FirstOffset: 1, LastOffset: 3, DeliveryState: share.Acknowledged, DeliveryCount: 1}}})
	again := pollN("offset 0 again", 1)
	if len(again) != 1 || again[0].Offset != 0 || again[0].DeliveryCount() != 2 {
		t.Fatalf("redelivered %d records, want offset 0 with delivery count 2", len(again))
	}
	for _, r := range again {
		r.Ack(kgo.AckAccept)
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	// Offset 4 is held, and the leader takes it for acknowledged: after
	// its lock ran out, offset 5 comes instead of it.
	shareProduce(t, c, "q", 1)
	held := pollN("offset 4", 1)
	if held[0].Offset != 4 {
		t.Fatalf("got offset %d, want 4", held[0].Offset)
	}
	plantShareState(t, c, "sg", "q", share.PartitionState{StartOffset: 4, Batches: []share.StateBatch{
		{FirstOffset: 4, LastOffset: 4, DeliveryState: share.Acknowledged, DeliveryCount: 1}}})
	if err := c.AdvanceClock(shareChaosLock); err != nil {
		t.Fatal(err)
	}
	shareProduce(t, c, "q", 1)
	if next := pollN("offset 5", 1); next[0].Offset != 5 {
		t.Fatalf("got offset %d, want 5", next[0].Offset)
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, v := range rep.Share {
		found = append(found, fmt.Sprintf("%s@%d allowed=%v", v.Rule, v.Offset, v.Allowed))
	}
	if want := []string{"accepted_redelivered@0 allowed=false", "lock_not_released@4 allowed=false"}; !slices.Equal(found, want) {
		t.Fatalf("share findings %v, want %v", found, want)
	}
	var kinds []string
	for _, v := range rep.Violations() {
		kinds = append(kinds, fmt.Sprintf("%s %s %s/%d", v.Kind, v.Group, v.Topic, v.Partition))
	}
	if want := []string{"accepted_redelivered sg q/0", "lock_not_released sg q/0"}; !slices.Equal(kinds, want) {
		t.Fatalf("violations %v, want %v", kinds, want)
	}
	// The report's JSON (GET /v1/chaos/report) carries them too.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"rule":"accepted_redelivered"`, `"kind":"lock_not_released"`, `"share_deliveries":8`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report JSON lacks %s", s)
		}
	}
}

// shareCameBack counts the records of c's last chaos run that were
// delivered again after a delivery nobody acknowledged (a lock ran out,
// a member left, the leader moved).
func shareCameBack(c *Cluster) int {
	c.chaosMu.Lock()
	run := c.chaosLast
	c.chaosMu.Unlock()
	run.mu.Lock()
	defer run.mu.Unlock()
	type key struct {
		tp  chaos.TP
		off int64
	}
	pending := map[key]bool{} // delivered, not acknowledged since
	type ev struct {
		seq uint64
		k   key
		ack bool
	}
	var evs []ev
	for _, d := range run.share.deliveries {
		evs = append(evs, ev{d.Seq, key{d.TP, d.Offset}, false})
	}
	for _, a := range run.share.acks {
		evs = append(evs, ev{a.Seq, key{a.TP, a.Offset}, true})
	}
	slices.SortFunc(evs, func(a, b ev) int { return int(a.seq) - int(b.seq) })
	n := 0
	for _, e := range evs {
		switch {
		case e.ack:
			pending[e.k] = false
		case pending[e.k]:
			n++
		default:
			pending[e.k] = true
		}
	}
	return n
}

// A share group consumes through a crash of its partition's leader: the
// new leader reads the persisted state, records acquired but not
// acknowledged come again, and the checker finds nothing.
func TestChaosShareThroughLeaderCrash(t *testing.T) {
	c := NewTestCluster(t, Config{MinInsyncReplicas: 2, ReplicaLagTimeMax: 2 * time.Second, BrokerConfigs: shareChaosBrokerConfigs})
	shareChaosConfig(t, c, "sg-crash")
	if err := c.CreateTopic("q", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("q", 0)
	spec, err := chaos.ParseSpec(fmt.Sprintf(`{"seed":9,"duration_ms":3000,"actions":[{"at_ms":1000,"kind":"crash","broker":%d,"hold_ms":1000}]}`, ps.Leader))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(spec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := shareWorkload(t, c, ctx, "sg-crash", "q")
	prod := newClient(t, c, kgo.DefaultProduceTopic("q"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(100*time.Millisecond))
	for end := time.Now().Add(spec.Duration); time.Now().Before(end); {
		prod.ProduceSync(ctx, &kgo.Record{Value: []byte("x")})
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	polled := done()
	if len(rep.Actions) < 1 || rep.Actions[0].Error != "" {
		t.Fatalf("the crash did not run: %+v", rep.Actions)
	}
	if rep.ShareDeliveries == 0 || rep.ShareAcks == 0 || len(rep.Share) != 0 || len(rep.Violations()) != 0 {
		t.Fatalf("%d deliveries, %d acks, share findings %+v, violations %v", rep.ShareDeliveries, rep.ShareAcks, rep.Share, rep.Violations())
	}
	after, _ := c.Partition("q", 0)
	t.Logf("leader %d -> %d (epoch %d); %d records polled, %d deliveries, %d acknowledgements, %d again after an unacknowledged delivery",
		ps.Leader, after.Leader, after.LeaderEpoch, polled, rep.ShareDeliveries, rep.ShareAcks, shareCameBack(c))
}
