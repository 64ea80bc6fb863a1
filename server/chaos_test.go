package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
)

// noSchedule is a chaos spec that only records: the faults come from the
// test itself.
var noSchedule = chaos.Spec{Seed: 1, Actions: []chaos.Action{}}

func partitionReport(t *testing.T, rep *ChaosReport, topic string, index int32) chaos.PartitionReport {
	t.Helper()
	for _, p := range rep.Partitions {
		if p.Topic == topic && p.Partition == index {
			return p
		}
	}
	t.Fatalf("no report for %s/%d in %+v", topic, index, rep.Partitions)
	return chaos.PartitionReport{}
}

func produceSync(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	for i := range n {
		if err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
}

// acks=1 writes the followers never fetched are lost when the leader
// crashes and a follower still in the ISR takes over: Kafka allows it, and
// the report says so, naming the election.
func TestChaosAcks1LossOnLeaderCrashIsAllowed(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("a1", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(noSchedule); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("a1", 0)
	leader := ps.Leader
	var followers []int32
	for _, r := range ps.Replicas {
		if r.Broker != leader {
			followers = append(followers, r.Broker)
			if err := c.PauseReplica("a1", 0, r.Broker); err != nil {
				t.Fatal(err)
			}
		}
	}
	prod := newClient(t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	produceSync(t, prod, "a1", 5)
	if err := c.StopBroker(leader, StopCrash); err != nil {
		t.Fatal(err)
	}
	for _, f := range followers {
		if err := c.ResumeReplica("a1", 0, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.StartBroker(leader); err != nil {
		t.Fatal(err)
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	p := partitionReport(t, rep, "a1", 0)
	if p.AckedBatches != 5 || len(p.Lost) != 1 {
		t.Fatalf("report %+v", p)
	}
	l := p.Lost[0]
	if l.From != 0 || l.To != 5 || l.Batches != 5 || l.Acks != 1 || !l.Allowed || !strings.HasPrefix(l.Cause, "clean election of broker ") {
		t.Fatalf("loss %+v", l)
	}
	if v := rep.Violations(); len(v) != 0 {
		t.Fatalf("violations %v", v)
	}
}

// acks=all writes taken while a follower was out of the ISR are lost when
// that follower is elected uncleanly: allowed, with the cause.
func TestChaosUncleanElectionLossIsReportedWithCause(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("u", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(noSchedule); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("u", 0)
	lagger := ps.Replicas[0].Broker
	if lagger == ps.Leader {
		lagger = ps.Replicas[1].Broker
	}
	if err := c.PauseReplica("u", 0, lagger); err != nil {
		t.Fatal(err)
	}
	var isr []int32
	for _, id := range ps.ISR {
		if id != lagger {
			isr = append(isr, id)
		}
	}
	if err := c.SetISR("u", 0, isr); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	produceSync(t, prod, "u", 4)
	cons := newClient(t, c, kgo.ConsumeTopics("u"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 4 {
		fs := cons.PollFetches(testContext(t))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	// Elect the lagger while it is still paused: resumed first, it could
	// catch up before the election and nothing would be lost.
	if _, err := c.ElectLeader("u", 0, lagger, true); err != nil {
		t.Fatal(err)
	}
	if err := c.ResumeReplica("u", 0, lagger); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(testContext(t), OfType(EventChaosAnomaly)); err != nil {
		t.Fatal(err)
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	p := partitionReport(t, rep, "u", 0)
	want := fmt.Sprintf("unclean election of broker %d", lagger)
	if len(p.Lost) != 1 || p.Lost[0].Acks != -1 || p.Lost[0].To != 4 || !p.Lost[0].Allowed || p.Lost[0].Cause != want {
		t.Fatalf("lost %+v, want cause %q", p.Lost, want)
	}
	if len(p.ReadThenLost) == 0 || !p.ReadThenLost[0].Allowed {
		t.Fatalf("the consumer read what the unclean election lost: %+v", p.ReadThenLost)
	}
	if !strings.Contains(rep.FirstAnomaly, "seed=1") {
		t.Fatalf("first anomaly %q does not give the seed", rep.FirstAnomaly)
	}
	if v := rep.Violations(); len(v) != 0 {
		t.Fatalf("violations %v", v)
	}
}

// The same seed and a deterministic client give the same actions, to the
// partition and replica each hit, stepping a manual clock.
func TestChaosSameSeedSameRun(t *testing.T) {
	run := func() []string {
		clk := clock.NewManual(time.Unix(1_700_000_000, 0))
		c := NewTestCluster(t, Config{Clock: clk, MinInsyncReplicas: 2})
		for _, name := range []string{"x", "y"} {
			if err := c.CreateTopic(name, 2, 3, nil); err != nil {
				t.Fatal(err)
			}
		}
		spec, err := chaos.ParseSpec("rough,seed=99,duration=6s,interval=300ms,hold=500ms")
		if err != nil {
			t.Fatal(err)
		}
		sched, err := c.StartChaos(spec)
		if err != nil {
			t.Fatal(err)
		}
		for step := time.Duration(0); step <= spec.Duration; step += 100 * time.Millisecond {
			due := 0
			for _, a := range sched {
				if a.At <= step {
					due++
				}
			}
			waitFor(t, 10*time.Second, fmt.Sprintf("action #%d at %s", due, step), func() bool {
				rep, _ := c.ChaosReport()
				return len(rep.Actions) >= due
			})
			if err := c.AdvanceClock(100 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := c.StopChaos()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range rep.Actions {
			out = append(out, fmt.Sprintf("%s on %s", a.Action.String(), a.Target))
			if a.Error != "" {
				t.Logf("%s failed: %s", a.Action.String(), a.Error) // may depend on the fetchers' timing
			}
		}
		if len(out) != len(sched) {
			t.Fatalf("%d of %d actions ran", len(out), len(sched))
		}
		return out
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different runs:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	t.Logf("%d actions, e.g. %s", len(a), a[0])
}

// presetRun produces and consumes through franz-go while preset runs and
// asserts the report shows no violation; it returns the report.
func presetRun(t *testing.T, preset string, prodOpts ...kgo.Opt) *ChaosReport {
	return presetRunSeed(t, preset, "7", prodOpts...)
}

func presetRunSeed(t *testing.T, preset, seed string, prodOpts ...kgo.Opt) *ChaosReport {
	c := NewTestCluster(t, Config{MinInsyncReplicas: 2, ReplicaLagTimeMax: 2 * time.Second, BrokerConfigs: shareChaosBrokerConfigs})
	shareChaosConfig(t, c, "sg-"+preset)
	if err := c.CreateTopic("work", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	spec, err := chaos.ParseSpec(preset + ",seed=" + seed + ",duration=4s,interval=250ms,hold=400ms,topics=work")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(spec); err != nil {
		t.Fatal(err)
	}
	fast := kgo.MetadataMinAge(100 * time.Millisecond)
	prod := newClient(t, c, append([]kgo.Opt{kgo.DefaultProduceTopic("work"), kgo.RecordRetries(20), fast}, prodOpts...)...)
	cons := newClient(t, c, kgo.ConsumeTopics("work"), kgo.ConsumerGroup("g-"+preset), kgo.FetchMaxWait(200*time.Millisecond), fast)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shareDone := shareWorkload(t, c, ctx, "sg-"+preset, "work")
	consumed := make(chan int)
	go func() {
		n := 0
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			n += fs.NumRecords()
			cons.CommitUncommittedOffsets(ctx)
		}
		consumed <- n
	}()
	acked := 0
	deadline := time.Now().Add(spec.Duration)
	for i := 0; time.Now().Before(deadline); i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", preset, i)}).FirstErr(); err == nil {
			acked++
		}
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	n := <-consumed
	shared := shareDone()
	if len(rep.Actions) < 4 {
		t.Fatalf("only %d actions ran", len(rep.Actions))
	}
	if acked == 0 {
		t.Fatal("no write was acknowledged")
	}
	batches, lost, dups, readLost, ranges := 0, 0, 0, 0, 0
	for _, p := range rep.Partitions {
		batches += p.AckedBatches
		ranges += p.ServedRanges
		for _, l := range p.Lost {
			lost += int(l.To - l.From)
		}
		dups += len(p.Duplicates)
		readLost += len(p.ReadThenLost)
	}
	if batches == 0 {
		t.Fatal("the report recorded no acknowledged write")
	}
	if rep.ShareDeliveries == 0 {
		t.Fatal("the report recorded no share delivery")
	}
	if rep.ShareAcks == 0 {
		// Seen once in 64 runs (rough, a crash 163 ms in): the worker got
		// nothing in the whole 4 s run, only the holding member did.
		t.Logf("the share worker acknowledged nothing (%d deliveries)", rep.ShareDeliveries)
	}
	t.Logf("share group: %d records polled, %d deliveries and %d acknowledgements recorded (%d again after an unacknowledged delivery), findings %+v",
		shared, rep.ShareDeliveries, rep.ShareAcks, shareCameBack(c), rep.Share)
	t.Logf("%s: seed %d, %d actions, %d writes acknowledged to the client, %d acked batches recorded, %d records consumed in %d recorded ranges; allowed: %d records lost, %d duplicates, %d reads lost",
		preset, rep.Seed, len(rep.Actions), acked, batches, n, ranges, lost, dups, readLost)
	if v := rep.Violations(); len(v) != 0 {
		// Show what is at a duplicate's offsets, so a report can be told
		// from a real double append.
		for _, pr := range rep.Partitions {
			for _, d := range pr.Duplicates {
				p := c.partition(pr.Topic, pr.Partition)
				p.mu.Lock()
				for _, off := range d.Offsets {
					b := p.st.Replica(p.st.Leader()).Log().BatchAt(off)
					if b == nil {
						continue
					}
					recs, _ := protocol.Records(b.Raw)
					var vals []string
					for _, r := range recs {
						vals = append(vals, string(r.Value))
					}
					t.Logf("%s/%d: batch %d-%d epoch %d pid %d/%d seq %d ts %d crc %x values %v", pr.Topic, pr.Partition, b.BaseOffset, b.LastOffset, b.Epoch, b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.MaxTimestamp, binary.BigEndian.Uint32(b.Raw[17:21]), vals)
				}
				p.mu.Unlock()
			}
		}
		t.Fatalf("seed %d: violations %v", rep.Seed, v)
	}
	return rep
}

// Under gentle, acks=all writes are never lost and consumers never see
// anything vanish.
func TestChaosGentleFranz(t *testing.T) {
	rep := presetRun(t, "gentle", kgo.RequiredAcks(kgo.AllISRAcks()))
	for _, p := range rep.Partitions {
		if len(p.Lost) > 0 || len(p.ReadThenLost) > 0 {
			t.Fatalf("gentle lost records: %+v", p)
		}
	}
}

// rough may lose acknowledged records, but only as Kafka allows.
func TestChaosRoughFranz(t *testing.T) {
	presetRun(t, "rough", kgo.RequiredAcks(kgo.AllISRAcks()))
}

// network drops connections after the work, so a non-idempotent producer
// may duplicate; that is allowed.
func TestChaosNetworkFranz(t *testing.T) {
	presetRun(t, "network", kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
}

// A connection dropped after the work loses a non-idempotent producer's
// acknowledgement; its retry appends the batch again. The report shows the
// duplicate as allowed, and an idempotent producer's retry as no
// duplicate at all.
func TestChaosDuplicateFromLostAck(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		c := NewTestCluster(t, Config{})
		if err := c.CreateTopic("d", 1, 3, nil); err != nil {
			t.Fatal(err)
		}
		spec, err := chaos.ParseSpec(`{"seed":3,"duration_ms":60000,"actions":[{"at_ms":0,"kind":"drop_after","api":"Produce","count":1,"hold_ms":60000}]}`)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.StartChaos(spec); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitFor(testContext(t), OfType(EventChaosAction)); err != nil {
			t.Fatal(err)
		}
		opts := []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50 * time.Millisecond)}
		if !idempotent {
			opts = []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.MetadataMinAge(50 * time.Millisecond)}
		}
		start := time.Now()
		produceSync(t, newClient(t, c, opts...), "d", 1)
		t.Logf("idempotent=%v: produce took %s", idempotent, time.Since(start))
		rep, err := c.StopChaos()
		if err != nil {
			t.Fatal(err)
		}
		p := partitionReport(t, rep, "d", 0)
		switch {
		case !idempotent && (len(p.Duplicates) != 1 || !p.Duplicates[0].Allowed || len(p.Duplicates[0].Offsets) != 2 || p.AckedBatches != 1):
			t.Fatalf("non-idempotent: %+v", p)
		case idempotent && (len(p.Duplicates) != 0 || p.AckedBatches != 1):
			t.Fatalf("idempotent: %+v", p)
		}
		if v := rep.Violations(); len(v) != 0 {
			t.Fatal(v)
		}
	}
}

// BenchmarkProduceConsumeChaosRecording is BenchmarkProduceConsume while a
// chaos run records every write and read (and injects nothing): the cost
// of the checker's recording.
func BenchmarkProduceConsumeChaosRecording(b *testing.B) {
	produceConsume(b, func(c *Cluster) {
		if _, err := c.StartChaos(noSchedule); err != nil {
			b.Fatal(err)
		}
	})
}

// A fixed schedule on a manual clock, end to end: two pauses, then the
// leader crashes with acks=1 writes only it had. The report names the
// election and the schedule's action behind it.
func TestChaosFixedScheduleLossNamesTheAction(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := NewTestCluster(t, Config{Clock: clk})
	if err := c.CreateTopic("f", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("f", 0)
	spec, err := chaos.ParseSpec(fmt.Sprintf(`{"seed":5,"duration_ms":10000,"actions":[
		{"at_ms":0,"kind":"pause","pick":0,"hold_ms":5000},
		{"at_ms":0,"kind":"pause","pick":256,"hold_ms":5000},
		{"at_ms":1000,"kind":"crash","broker":%d,"hold_ms":1000}]}`, ps.Leader))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(spec); err != nil {
		t.Fatal(err)
	}
	actions := func() int { rep, _ := c.ChaosReport(); return len(rep.Actions) }
	waitFor(t, 10*time.Second, "the pauses", func() bool { return actions() == 2 })
	produceSync(t, newClient(t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()), "f", 3)
	for _, step := range []struct {
		to   time.Duration
		done int
	}{{time.Second, 3}, {2 * time.Second, 4}, {5 * time.Second, 6}} {
		if err := c.AdvanceClock(step.to - clk.Since(time.Unix(1_700_000_000, 0))); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, fmt.Sprintf("%d actions", step.done), func() bool { return actions() == step.done })
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	p := partitionReport(t, rep, "f", 0)
	wantCause := fmt.Sprintf("after chaos #3 at 1s: crash broker %d for 1s", ps.Leader)
	if len(p.Lost) != 1 || p.Lost[0].From != 0 || p.Lost[0].To != 3 || !p.Lost[0].Allowed ||
		!strings.HasPrefix(p.Lost[0].Cause, "clean election of broker ") || !strings.HasSuffix(p.Lost[0].Cause, wantCause) {
		t.Fatalf("lost %+v, want a cause ending %q", p.Lost, wantCause)
	}
	if v := rep.Violations(); len(v) != 0 {
		t.Fatal(v)
	}
}
