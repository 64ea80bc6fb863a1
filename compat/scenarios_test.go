package compat

// Failure scenarios 1-3 of the server package's scenarios_test.go, with
// sarama as the client: what sarama reports and what the logs hold.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/fakekafka/fakekafka/server"
)

// scWait polls cond until it holds or timeout passes, then fails.
func scWait(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronisation
	}
}

func scMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// scSaramaConfig is saramaConfig with fast retries, so failovers are
// noticed within milliseconds.
func scSaramaConfig(acks sarama.RequiredAcks) *sarama.Config {
	cfg := saramaConfig(acks)
	cfg.Producer.Retry.Max = 50
	cfg.Producer.Retry.Backoff = 10 * time.Millisecond
	cfg.Metadata.Retry.Max = 50
	cfg.Consumer.Retry.Backoff = 10 * time.Millisecond
	return cfg
}

func scPartition(t *testing.T, c *server.Cluster, topic string, p int32) server.PartitionState {
	t.Helper()
	ps, ok := c.Partition(topic, p)
	if !ok {
		t.Fatalf("no partition %s/%d", topic, p)
	}
	return ps
}

// scSettled waits until every replica of topic/p is in the ISR with
// LEO = HW = leo, or, with leo -1, = the leader's HW.
func scSettled(t *testing.T, c *server.Cluster, topic string, p int32, leo int64) {
	t.Helper()
	scWait(t, 5*time.Second, fmt.Sprintf("%s/%d to settle", topic, p), func() bool {
		ps := scPartition(t, c, topic, p)
		want := leo
		if want < 0 {
			want = ps.HighWatermark
		}
		if ps.Leader < 0 || len(ps.ISR) != len(ps.Replicas) || ps.HighWatermark != want {
			return false
		}
		for _, r := range ps.Replicas {
			if r.LogEndOffset != want || r.HighWatermark != want {
				return false
			}
		}
		return true
	})
}

// scConsume reads n messages of topic/p from offset 0 with sarama.
func scConsume(t *testing.T, c *server.Cluster, topic string, p int32, n int) []*sarama.ConsumerMessage {
	t.Helper()
	cons, err := sarama.NewConsumer(c.Bootstrap(), scSaramaConfig(sarama.WaitForAll))
	scMust(t, err)
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
	scMust(t, err)
	defer pc.Close()
	var out []*sarama.ConsumerMessage
	timeout := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case m := <-pc.Messages():
			out = append(out, m)
		case err := <-pc.Errors():
			t.Fatalf("consume %s/%d: %v", topic, p, err)
		case <-timeout:
			t.Fatalf("consumed %d of %d messages of %s/%d", len(out), n, topic, p)
		}
	}
	return out
}

func scValuesAre(t *testing.T, ms []*sarama.ConsumerMessage, values ...string) {
	t.Helper()
	got := make([]string, len(ms))
	for i, m := range ms {
		got[i] = string(m.Value)
		if m.Offset != int64(i) {
			t.Errorf("message %d at offset %d", i, m.Offset)
		}
	}
	if !slices.Equal(got, values) {
		t.Errorf("consumed %q, want %q", got, values)
	}
}

func scSend(t *testing.T, prod sarama.SyncProducer, topic, value string) int64 {
	t.Helper()
	_, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(value)})
	if err != nil {
		t.Fatalf("send %q: %v", value, err)
	}
	return off
}

// TestSaramaScenario01AcksOneLostOnLeaderCrash: sarama's acks=1 write is
// acknowledged by a leader that crashes before its followers fetch; the
// new leader gives the same offset to the next write, and the old leader
// drops its copy when it returns.
func TestSaramaScenario01AcksOneLostOnLeaderCrash(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	const topic = "sarama-s1"
	scMust(t, c.CreateTopic(topic, 1, 3, nil)) // replicas 1, 2, 3
	cfg := scSaramaConfig(sarama.WaitForLocal)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer(c.Bootstrap(), cfg)
	scMust(t, err)
	defer prod.Close()
	scSend(t, prod, topic, "a")
	scSend(t, prod, topic, "b")
	scSettled(t, c, topic, 0, 2)

	for _, id := range []int32{2, 3} {
		scMust(t, c.PauseReplica(topic, 0, id))
	}
	if off := scSend(t, prod, topic, "lost"); off != 2 {
		t.Fatalf("acks=1 write acknowledged at %d, want 2", off)
	}
	scMust(t, c.StopBroker(1, server.StopCrash))
	if ps := scPartition(t, c, topic, 0); ps.Leader != 2 {
		t.Fatalf("leader %d after the crash, want 2", ps.Leader)
	}
	for _, id := range []int32{2, 3} {
		scMust(t, c.ResumeReplica(topic, 0, id))
	}
	if off := scSend(t, prod, topic, "new"); off != 2 {
		t.Fatalf("write after failover at %d, want the lost record's offset 2", off)
	}
	scMust(t, c.StartBroker(1))
	scSettled(t, c, topic, 0, 3)
	scValuesAre(t, scConsume(t, c, topic, 0, 3), "a", "b", "new")
}

// TestSaramaScenario02AcksAllSurvivesRollingCrashes: sarama's idempotent
// acks=all producer writes continuously while every broker in turn
// crashes and restarts; every acknowledged message is there afterwards,
// at its offset, exactly once.
func TestSaramaScenario02AcksAllSurvivesRollingCrashes(t *testing.T) {
	for _, tc := range []struct {
		rf     int16
		minISR int
	}{{3, 2}, {2, 1}} {
		t.Run(fmt.Sprintf("rf=%d min.insync.replicas=%d", tc.rf, tc.minISR), func(t *testing.T) {
			const topic, partitions = "sarama-s2", 2
			c := server.NewTestCluster(t, server.Config{Brokers: int(tc.rf)})
			scMust(t, c.CreateTopic(topic, partitions, tc.rf, map[string]string{"min.insync.replicas": strconv.Itoa(tc.minISR)}))
			cfg := scSaramaConfig(sarama.WaitForAll)
			cfg.Producer.Idempotent = true
			cfg.Producer.Retry.Max = 1000
			cfg.Net.MaxOpenRequests = 1
			cfg.Producer.Partitioner = sarama.NewManualPartitioner
			cfg.Producer.Return.Errors = true
			prod, err := sarama.NewAsyncProducer(c.Bootstrap(), cfg)
			scMust(t, err)

			type ack struct {
				partition int32
				offset    int64
			}
			var mu sync.Mutex
			acked := map[string]ack{}
			var errs []error
			var n atomic.Int64
			inflight := make(chan struct{}, 200)
			collected := make(chan struct{})
			go func() {
				defer close(collected)
				succ, fail := prod.Successes(), prod.Errors()
				for succ != nil || fail != nil {
					select {
					case m, ok := <-succ:
						if !ok {
							succ = nil
							continue
						}
						<-inflight
						v, _ := m.Value.Encode()
						mu.Lock()
						acked[string(v)] = ack{m.Partition, m.Offset}
						mu.Unlock()
						n.Add(1)
					case e, ok := <-fail:
						if !ok {
							fail = nil
							continue
						}
						<-inflight
						mu.Lock()
						errs = append(errs, e)
						mu.Unlock()
					}
				}
			}()
			stop := make(chan struct{})
			sentc := make(chan int, 1)
			go func() {
				seq := 0
				defer func() { sentc <- seq }()
				for ; ; seq++ {
					select { // at most 200 in flight
					case <-stop:
						return
					case inflight <- struct{}{}:
					}
					m := &sarama.ProducerMessage{Topic: topic, Partition: int32(seq % partitions), Value: sarama.StringEncoder(strconv.Itoa(seq))}
					select {
					case <-stop:
						<-inflight
						return
					case prod.Input() <- m:
					}
				}
			}()
			progress := func(what string) {
				t.Helper()
				from := n.Load()
				scWait(t, 5*time.Second, what, func() bool { return n.Load() >= from+200 })
			}
			progress("messages to be acknowledged")
			for id := int32(1); id <= int32(tc.rf); id++ {
				scMust(t, c.StopBroker(id, server.StopCrash))
				progress(fmt.Sprintf("progress while broker %d is down", id))
				scMust(t, c.StartBroker(id))
				scWait(t, 5*time.Second, "the ISRs to be full again", func() bool {
					for p := range int32(partitions) {
						if len(scPartition(t, c, topic, p).ISR) != int(tc.rf) {
							return false
						}
					}
					return true
				})
				progress(fmt.Sprintf("progress after broker %d restarted", id))
			}
			close(stop)
			sent := <-sentc
			// Not Close: it drains Successes itself, racing the collector.
			prod.AsyncClose()
			<-collected
			if len(errs) > 0 {
				t.Fatalf("%d of %d messages failed, first: %v", len(errs), sent, errs[0])
			}
			if len(acked) != sent {
				t.Fatalf("%d of %d messages acknowledged", len(acked), sent)
			}

			where := map[string]ack{}
			total := 0
			for p := range int32(partitions) {
				scSettled(t, c, topic, p, -1)
				hw := scPartition(t, c, topic, p).HighWatermark
				total += int(hw)
				for _, m := range scConsume(t, c, topic, p, int(hw)) {
					v := string(m.Value)
					if prev, ok := where[v]; ok {
						t.Errorf("message %s at %+v and at partition %d offset %d", v, prev, p, m.Offset)
					}
					where[v] = ack{p, m.Offset}
				}
			}
			for v, a := range acked {
				if got, ok := where[v]; !ok || got != a {
					t.Errorf("message %s acknowledged at %+v, found at %+v (present %v)", v, a, got, ok)
				}
			}
			if total != len(acked) {
				t.Errorf("the logs hold %d messages, %d were acknowledged", total, len(acked))
			}
		})
	}
}

// TestSaramaScenario03NotEnoughReplicas: with the ISR below
// min.insync.replicas sarama without retries gets ErrNotEnoughReplicas and
// nothing is appended; with retries a send that starts during the outage
// succeeds once a follower is back, and the log holds it exactly once.
func TestSaramaScenario03NotEnoughReplicas(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	const topic = "sarama-s3"
	scMust(t, c.CreateTopic(topic, 1, 3, map[string]string{"min.insync.replicas": "2"}))
	for _, id := range []int32{2, 3} {
		scMust(t, c.PauseReplica(topic, 0, id))
	}
	scMust(t, c.SetISR(topic, 0, []int32{1}))

	cfg := scSaramaConfig(sarama.WaitForAll)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Retry.Max = 0
	once, err := sarama.NewSyncProducer(c.Bootstrap(), cfg)
	scMust(t, err)
	defer once.Close()
	_, _, err = once.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("refused")})
	if !errors.Is(err, sarama.ErrNotEnoughReplicas) {
		t.Fatalf("send without retries: %v, want ErrNotEnoughReplicas", err)
	}
	if ps := scPartition(t, c, topic, 0); ps.Replicas[0].LogEndOffset != 0 {
		t.Fatalf("leader LEO %d after NOT_ENOUGH_REPLICAS, want 0", ps.Replicas[0].LogEndOffset)
	}

	cfg = scSaramaConfig(sarama.WaitForAll)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Retry.Max = 1000
	var retries atomic.Int64
	cfg.Producer.Retry.BackoffFunc = func(int, int) time.Duration {
		retries.Add(1)
		return 10 * time.Millisecond
	}
	patient, err := sarama.NewSyncProducer(c.Bootstrap(), cfg)
	scMust(t, err)
	defer patient.Close()
	type result struct {
		off int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, off, err := patient.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder("patient")})
		done <- result{off, err}
	}()
	scWait(t, 5*time.Second, "sarama to retry twice", func() bool { return retries.Load() >= 2 })
	if ps := scPartition(t, c, topic, 0); ps.Replicas[0].LogEndOffset != 0 {
		t.Fatalf("leader LEO %d while refusing, want 0", ps.Replicas[0].LogEndOffset)
	}
	scMust(t, c.ResumeReplica(topic, 0, 2))
	res := <-done
	if res.err != nil || res.off != 0 {
		t.Fatalf("send with retries: offset %d, error %v; want success at 0", res.off, res.err)
	}
	scMust(t, c.ResumeReplica(topic, 0, 3))
	scSettled(t, c, topic, 0, 1)
	scValuesAre(t, scConsume(t, c, topic, 0, 1), "patient")
}

// TestSaramaScenario11InjectedNotEnoughReplicas: the next three Produce
// requests to one partition answer NOT_ENOUGH_REPLICAS; sarama retries,
// succeeds, and the record is in the log once.
func TestSaramaScenario11InjectedNotEnoughReplicas(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	const topic = "sarama-s11"
	scMust(t, c.CreateTopic(topic, 2, 3, map[string]string{"min.insync.replicas": "2"}))
	p0 := int32(0)
	rule, err := c.InjectFault(server.Fault{API: "Produce", Topic: topic, Partition: &p0, Error: "NOT_ENOUGH_REPLICAS", Count: 3})
	scMust(t, err)
	cfg := scSaramaConfig(sarama.WaitForAll)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Retry.Max = 5
	cfg.Producer.Retry.Backoff = 10 * time.Millisecond
	prod, err := sarama.NewSyncProducer(c.Bootstrap(), cfg)
	scMust(t, err)
	defer prod.Close()
	if off := scSend(t, prod, topic, "through"); off != 0 {
		t.Fatalf("acknowledged at %d, want 0", off)
	}
	if rule.Hits() != 3 {
		t.Fatalf("rule fired %d times, want 3", rule.Hits())
	}
	scSettled(t, c, topic, 0, 1)
	scValuesAre(t, scConsume(t, c, topic, 0, 1), "through")
}
