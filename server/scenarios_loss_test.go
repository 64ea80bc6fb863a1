package server

// Scenarios where every replica fails at once: power loss, an unclean
// election, random failures.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestScenario08PowerLossOfAllReplicas: every replica loses power with
// nothing flushed (Kafka's default flush policy), so records that were
// committed and consumed are gone and their offsets are reused.
//
// What franz-go (v1.22.3) does: its consumer remembers the leader epoch
// of the last batch it consumed. When metadata shows a new leader or epoch
// (or a fetch answers FENCED_LEADER_EPOCH) it holds the partition and
// sends OffsetForLeaderEpoch for that epoch (KIP-320, pkg/kgo
// topics_and_partitions.go migrateCursorTo, consumer.go
// loadEpochsForBrokerLoad). An end offset below its position makes it
// inject a fetch error of type *kgo.ErrDataLoss (ConsumedTo = its
// position, ResetTo = the end offset) into PollFetches, possibly in the
// same poll as the first records after it, and resume at ResetTo. There is
// no consumer-side OnDataLoss callback: kgo.ProducerOnDataLossDetected is
// for producers.
func TestScenario08PowerLossOfAllReplicas(t *testing.T) {
	c := NewTestCluster(t, Config{})
	const topic = "s8"
	scMust(t, c.CreateTopic(topic, 1, 3, nil))
	ctx := testContext(t)
	prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	var old []string
	for i := range 5 {
		v := "old" + strconv.Itoa(i)
		old = append(old, v)
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
	}
	scWaitSettled(t, c, topic, 0, 5)
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(100*time.Millisecond))
	scRecordsAre(t, "before the power loss", scPollValues(t, cons, 5), old...)

	// The leader goes first and leadership moves on; the last ISR member
	// (3) goes last and stays in the ISR, so it is the one that can lead.
	since := evLastSeq(c)
	for _, id := range []int32{1, 2, 3} {
		scMust(t, c.StopBroker(id, StopPowerLoss))
	}
	ps := scPartition(t, c, topic, 0)
	for _, r := range ps.Replicas {
		if r.LogEndOffset != 0 {
			t.Fatalf("broker %d kept LEO %d through the power loss; nothing was flushed", r.Broker, r.LogEndOffset)
		}
	}
	if ps.Leader != -1 || !slices.Equal(ps.ISR, []int32{3}) {
		t.Fatalf("after the power loss: leader %d ISR %v; want none and [3]", ps.Leader, ps.ISR)
	}
	for _, id := range []int32{1, 2} {
		scMust(t, c.StartBroker(id))
	}
	if ps := scPartition(t, c, topic, 0); ps.Leader != -1 {
		t.Fatalf("broker %d leads though not in the ISR", ps.Leader)
	}
	scMust(t, c.StartBroker(3))
	ps = scPartition(t, c, topic, 0)
	if ps.Leader != 3 {
		t.Fatalf("leader %d, want 3", ps.Leader)
	}
	evCheckStoryPrefix(t, c, since, topic,
		"broker_stopped 1 powerloss",
		"log_truncated s8/0 broker 1 5->0 (power loss)",
		"broker_fenced 1",
		"isr_shrunk s8/0 broker 1 isr [2 3] (broker fenced)",
		"leader_elected s8/0 leader 2 (was 1) epoch 1 isr [2 3] (broker fenced)",
		"broker_stopped 2 powerloss",
		"log_truncated s8/0 broker 2 5->0 (power loss)",
		"broker_fenced 2",
		"isr_shrunk s8/0 broker 2 isr [3] (broker fenced)",
		"leader_elected s8/0 leader 3 (was 2) epoch 2 isr [3] (broker fenced)",
		"broker_stopped 3 powerloss",
		"log_truncated s8/0 broker 3 5->0 (power loss)",
		"broker_fenced 3",
		"partition_leaderless s8/0 leader -1 (was 3) epoch 3 isr [3] (broker fenced)",
		"broker_started 1",
		"broker_started 2",
		"broker_started 3",
		"leader_elected s8/0 leader 3 (was -1) epoch 4 isr [3] (broker started)",
		"records_lost s8/0 broker 3 0->5 (new leader lacks acknowledged records)",
	)
	for _, v := range []string{"new0", "new1"} {
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
	}
	scWaitSettled(t, c, topic, 0, 2)

	dl, before, got := scWaitDataLoss(t, cons, topic)
	if dl.ConsumedTo != 5 || dl.ConsumedToEpoch != 0 || dl.ResetTo != 0 {
		t.Errorf("data loss %+v; want consumed to 5 at epoch 0, reset to 0", *dl)
	}
	if len(before) != 0 {
		t.Errorf("polled %v before the data loss was reported", scDescribe(before))
	}
	// It resumes at ResetTo and reads the records that reuse the offsets.
	got = append(got, scPollValues(t, cons, 2-len(got))...)
	scRecordsAre(t, "after the data loss", got, "new0", "new1")
	if got[0].LeaderEpoch != ps.LeaderEpoch {
		t.Errorf("new records carry epoch %d, want %d", got[0].LeaderEpoch, ps.LeaderEpoch)
	}
}

// TestScenario09UncleanElection: a lagging replica outside the ISR becomes
// leader, records the consumer saw are gone, their offsets are reused, the
// consumer detects it as in scenario 8, and the old replicas truncate to
// the new leader's log when they return.
func TestScenario09UncleanElection(t *testing.T) {
	for _, how := range []string{"unclean.leader.election.enable", "ElectLeader unclean"} {
		t.Run(how, func(t *testing.T) {
			c := NewTestCluster(t, Config{})
			const topic = "s9"
			cfg := map[string]string{}
			if how == "unclean.leader.election.enable" {
				cfg["unclean.leader.election.enable"] = "true"
			}
			scMust(t, c.CreateTopic(topic, 1, 3, cfg)) // replicas 1, 2, 3
			ctx := testContext(t)
			prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
			for _, v := range []string{"a", "b"} {
				scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
			}
			scWaitSettled(t, c, topic, 0, 2)
			// Replica 3 stops fetching and leaves the ISR; 1 and 2 go on.
			scMust(t, c.PauseReplica(topic, 0, 3))
			scMust(t, c.SetISR(topic, 0, []int32{1, 2}))
			for _, v := range []string{"c", "d", "e"} {
				scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
			}
			cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(100*time.Millisecond))
			scRecordsAre(t, "before the election", scPollValues(t, cons, 5), "a", "b", "c", "d", "e")

			if how == "unclean.leader.election.enable" {
				// The ISR dies; the controller elects the lagging 3.
				scMust(t, c.StopBroker(1, StopCrash))
				scMust(t, c.StopBroker(2, StopCrash))
			} else {
				if _, err := c.ElectLeader(topic, 0, 3, false); !errors.Is(err, kerr.EligibleLeadersNotAvailable) {
					t.Fatalf("clean election of a replica outside the ISR: %v", err)
				}
				if _, err := c.ElectLeader(topic, 0, 3, true); err != nil {
					t.Fatal(err)
				}
			}
			// The election's event holds the ISR it set: a live follower
			// (1 in the ElectLeader case) may rejoin right after.
			if e, err := c.WaitFor(ctx, LeaderElectedOn(topic, 0, 3)); err != nil || !e.Unclean || !slices.Equal(e.ISR, []int32{3}) {
				t.Fatalf("leader_elected of 3: %+v, %v; want unclean with ISR [3]", e, err)
			}
			// c, d and e were committed by 1 and 2; 3 never had them.
			if e, err := c.WaitFor(ctx, RecordsLost(topic, 0)); err != nil || e.From != 2 || e.To != 5 || e.Broker != 3 || e.Reason != "unclean election" {
				t.Errorf("records_lost %+v, %v; want 2->5 on broker 3 (unclean election)", e, err)
			}
			if ps := scPartition(t, c, topic, 0); ps.Leader != 3 {
				t.Fatalf("after the unclean election: leader %d, want 3", ps.Leader)
			}
			scMust(t, c.ResumeReplica(topic, 0, 3))
			r, err := prod.ProduceSync(ctx, kgo.StringRecord("x")).First()
			if err != nil || r.Offset != 2 {
				t.Fatalf("produce on the unclean leader: offset %d, error %v; want the reused offset 2", r.Offset, err)
			}

			dl, before, got := scWaitDataLoss(t, cons, topic)
			if dl.ConsumedTo != 5 || dl.ConsumedToEpoch != 0 || dl.ResetTo != 2 {
				t.Errorf("data loss %+v; want consumed to 5 at epoch 0, reset to 2", *dl)
			}
			if len(before) != 0 {
				t.Errorf("polled %v before the data loss was reported", scDescribe(before))
			}
			got = append(got, scPollValues(t, cons, 1-len(got))...)
			if len(got) != 1 || got[0].Offset != 2 || string(got[0].Value) != "x" {
				t.Errorf("after the data loss: %v, want x at 2", got)
			}

			if how == "unclean.leader.election.enable" {
				scMust(t, c.StartBroker(1))
				scMust(t, c.StartBroker(2))
			}
			scWaitSettled(t, c, topic, 0, 3)
			scLogsAre(t, c, topic, "a", "b", "x")
		})
	}
}

// TestScenario10RandomFailuresKeepAcknowledgedRecords runs a seeded random
// sequence of crashes, clean stops, restarts, follower pauses and resumes
// and clean elections under an idempotent acks=all producer (rf=3,
// min.insync.replicas=2) and a consumer. Afterwards every record the
// consumer saw is still at the offset it saw it at, and every acknowledged
// record is there exactly once.
func TestScenario10RandomFailuresKeepAcknowledgedRecords(t *testing.T) {
	const topic, partitions, steps = "s10", 2, 60
	c := NewTestCluster(t, Config{ReplicaLagTimeMax: 200 * time.Millisecond})
	scMust(t, c.CreateTopic(topic, partitions, 3, map[string]string{"min.insync.replicas": "2"}))
	rng := rand.New(rand.NewPCG(2024, 10))
	prod := scStartProducer(t, c, topic, partitions)

	// The consumer runs throughout and remembers what it saw where.
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(50*time.Millisecond))
	var seenMu sync.Mutex
	seen := map[scAck]string{}
	var consErrs []error
	consCtx, stopConsumer := context.WithCancel(context.Background())
	consDone := make(chan struct{})
	go func() {
		defer close(consDone)
		for consCtx.Err() == nil {
			fs := cons.PollFetches(consCtx)
			seenMu.Lock()
			for _, e := range fs.Errors() {
				if !errors.Is(e.Err, context.Canceled) {
					consErrs = append(consErrs, fmt.Errorf("%s/%d: %w", e.Topic, e.Partition, e.Err))
				}
			}
			fs.EachRecord(func(r *kgo.Record) {
				k := scAck{r.Partition, r.Offset}
				if v, ok := seen[k]; ok && v != string(r.Value) {
					consErrs = append(consErrs, fmt.Errorf("partition %d offset %d seen as %q and %q", r.Partition, r.Offset, v, r.Value))
				}
				seen[k] = string(r.Value)
			})
			seenMu.Unlock()
		}
	}()

	down := map[int32]bool{}
	paused := map[scAck]bool{} // {partition, broker}
	deadline := time.Now().Add(4 * time.Second)
	var log []string
	for step := 0; step < steps && time.Now().Before(deadline); step++ {
		p := int32(rng.IntN(partitions))
		id := int32(rng.IntN(3) + 1)
		var did string
		switch rng.IntN(6) {
		case 0, 1: // stop a broker, at most two at a time
			// Not powerloss: losing the unflushed tail of the last ISR
			// member loses acknowledged records in Kafka too (scenario 8).
			if len(down) < 2 && !down[id] {
				mode := StopCrash
				if rng.IntN(3) == 0 {
					mode = StopClean
				}
				scMust(t, c.StopBroker(id, mode))
				down[id] = true
				did = fmt.Sprintf("stop %d %s", id, mode)
			}
		case 2: // restart
			for d := range down {
				scMust(t, c.StartBroker(d))
				delete(down, d)
				did = fmt.Sprintf("start %d", d)
				break
			}
		case 3: // pause or resume a follower
			k := scAck{p, int64(id)}
			if paused[k] {
				scMust(t, c.ResumeReplica(topic, p, id))
				delete(paused, k)
				did = fmt.Sprintf("resume %d/%d", p, id)
			} else if scPartition(t, c, topic, p).Leader != id {
				scMust(t, c.PauseReplica(topic, p, id))
				paused[k] = true
				did = fmt.Sprintf("pause %d/%d", p, id)
			}
		case 4: // Kafka's own clean choice of another leader
			if l, err := c.ElectLeader(topic, p, -1, false); err == nil {
				did = fmt.Sprintf("elect %d: %d", p, l)
			}
		case 5: // a chosen replica, refused unless it is live and in sync
			if _, err := c.ElectLeader(topic, p, id, false); err == nil {
				did = fmt.Sprintf("elect %d: %d", p, id)
			} else if err := c.ElectPreferredLeader(topic, p); err == nil {
				did = fmt.Sprintf("elect %d: preferred", p)
			}
		}
		if did != "" {
			log = append(log, did)
		}
		from := prod.n.Load()
		scAwait(100*time.Millisecond, func() bool { return prod.n.Load() >= from+10 })
	}
	t.Logf("steps: %v", log)

	// Heal everything and let the producer finish.
	for d := range down {
		scMust(t, c.StartBroker(d))
	}
	for k := range paused {
		scMust(t, c.ResumeReplica(topic, k.partition, int32(k.offset)))
	}
	acked := prod.finish(t)
	for p := range int32(partitions) {
		scWaitSettled(t, c, topic, p, -1)
	}
	final := scConsumeEverything(t, c, topic, partitions)
	// Let the running consumer catch up to the end before comparing.
	waitFor(t, 5*time.Second, "the running consumer to reach the end", func() bool {
		seenMu.Lock()
		defer seenMu.Unlock()
		return len(seen) >= len(final)
	})
	stopConsumer()
	<-consDone

	seenMu.Lock()
	defer seenMu.Unlock()
	for _, err := range consErrs {
		t.Errorf("consumer: %v", err)
	}
	for k, v := range seen {
		if got, ok := final[k]; !ok || got != v {
			t.Errorf("the consumer saw %q at partition %d offset %d, which now holds %q (present %v)", v, k.partition, k.offset, got, ok)
		}
	}
	if len(final) != len(acked) {
		t.Errorf("the log holds %d records, %d were acknowledged", len(final), len(acked))
	}
	scCheckAcked(t, acked, final)
	t.Logf("%d records acknowledged, %d seen by the running consumer", len(acked), len(seen))
}
