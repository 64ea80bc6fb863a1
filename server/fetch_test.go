package server

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// rawFetch sends one Fetch to broker and returns its only partition.
func rawFetch(t *testing.T, c *Cluster, broker int32, version int16, topic string, offset int64, epoch int32, minBytes, maxWait int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := fetchRequest(version, topic, offset, epoch, minBytes, maxWait)
	resp, err := pinnedFetchClient(t, c, version).Broker(int(broker)).Request(testContext(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
}

func fetchRequest(version int16, topic string, offset int64, epoch int32, minBytes, maxWait int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.ReplicaID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, minBytes, 1<<20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.CurrentLeaderEpoch, rp.PartitionMaxBytes = offset, epoch, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// pinnedFetchClient is a client that sends Fetch at exactly version: kgo
// otherwise picks the highest version both sides know.
func pinnedFetchClient(t *testing.T, c *Cluster, version int16) *kgo.Client {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(1, version)
	return newClient(t, c, kgo.MaxVersions(vs))
}

func countRecords(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	for len(b) > 0 {
		batch, rest, err := protocol.NextBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := protocol.ParseBatchHeader(batch)
		n += int(h.NumRecords)
		b = rest
	}
	return n
}

func TestFetchRules(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("ff", 1, 3, nil); err != nil { // replicas 1, 2, 3
		t.Fatal(err)
	}
	if err := c.CreateTopic("solo", 1, 1, nil); err != nil { // only on broker 1
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("ff"), kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 5 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "every replica to learn HW 5", func() bool {
		ps, _ := c.Partition("ff", 0)
		for _, r := range ps.Replicas {
			if r.HighWatermark != 5 {
				return false
			}
		}
		return true
	})

	t.Run("v11 reads from a follower", func(t *testing.T) {
		p := rawFetch(t, c, 2, 11, "ff", 0, -1, 0, 0)
		if p.ErrorCode != 0 || p.HighWatermark != 5 || countRecords(t, p.RecordBatches) != 5 {
			t.Fatalf("error %d, HW %d, %d records", p.ErrorCode, p.HighWatermark, countRecords(t, p.RecordBatches))
		}
	})
	t.Run("v10 needs the leader", func(t *testing.T) {
		if p := rawFetch(t, c, 2, 10, "ff", 0, -1, 0, 0); p.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("error %d, want NOT_LEADER_OR_FOLLOWER", p.ErrorCode)
		}
	})
	t.Run("not a replica: NOT_LEADER_OR_FOLLOWER with the leader", func(t *testing.T) {
		p := rawFetch(t, c, 2, 12, "solo", 0, -1, 0, 0)
		if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != 1 || p.CurrentLeader.LeaderEpoch != 0 {
			t.Fatalf("error %d, current leader %+v", p.ErrorCode, p.CurrentLeader)
		}
	})
	t.Run("unknown partition: empty aborted transactions, as Kafka", func(t *testing.T) {
		p := rawFetch(t, c, 1, 12, "ff", 0, -1, 0, 0)
		if p.ErrorCode != 0 || p.AbortedTransactions != nil {
			t.Fatalf("partition 0: error %d, aborted transactions %v; want none and null", p.ErrorCode, p.AbortedTransactions)
		}
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(12)
		req.ReplicaID, req.MaxBytes = -1, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "ff"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 7, 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		sp := callHandler[*kmsg.FetchResponse](t, c, 1, req).Topics[0].Partitions[0]
		if sp.ErrorCode != kerr.UnknownTopicOrPartition.Code || sp.AbortedTransactions == nil || len(sp.AbortedTransactions) != 0 {
			t.Fatalf("partition 7: error %d, aborted transactions %v; want UNKNOWN_TOPIC_OR_PARTITION and an empty list", sp.ErrorCode, sp.AbortedTransactions)
		}
	})
	t.Run("future epoch", func(t *testing.T) {
		if p := rawFetch(t, c, 1, 12, "ff", 0, 3, 0, 0); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
			t.Fatalf("error %d, want UNKNOWN_LEADER_EPOCH", p.ErrorCode)
		}
	})
	t.Run("past the LEO", func(t *testing.T) {
		// Kafka leaves the offsets unknown (-1) beside the error.
		p := rawFetch(t, c, 1, 12, "ff", 6, 0, 0, 0)
		if p.ErrorCode != kerr.OffsetOutOfRange.Code || p.HighWatermark != -1 || p.LastStableOffset != -1 || p.LogStartOffset != -1 {
			t.Fatalf("error %d, HW %d, LSO %d, log start %d; want OFFSET_OUT_OF_RANGE and -1s", p.ErrorCode, p.HighWatermark, p.LastStableOffset, p.LogStartOffset)
		}
	})
	t.Run("a follower serves only up to its own HW", func(t *testing.T) {
		if err := c.PauseReplica("ff", 0, 3); err != nil {
			t.Fatal(err)
		}
		defer c.ResumeReplica("ff", 0, 3)
		aprod := newClient(t, c, kgo.DefaultProduceTopic("ff"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
		if err := aprod.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "follower 2 to replicate offset 5", func() bool {
			ps, _ := c.Partition("ff", 0)
			return ps.Replicas[1].LogEndOffset == 6
		})
		p := rawFetch(t, c, 2, 11, "ff", 5, -1, 0, 0)
		if p.ErrorCode != 0 || p.HighWatermark != 5 || len(p.RecordBatches) != 0 {
			t.Fatalf("error %d, HW %d, %d bytes; want nothing past HW 5", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
		}
	})
}

// TestLongPollWakesWhenHWMoves parks a fetch at the HW and shows it returns
// the record produced meanwhile, well before max_wait.
func TestLongPollWakesWhenHWMoves(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("lp", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	// The parked fetch runs on its own goroutine, which must not call
	// t.Fatal: it hands back the response or the error.
	type result struct {
		resp kmsg.Response
		err  error
	}
	got := make(chan result, 1)
	cl := pinnedFetchClient(t, c, 12)
	ctx := testContext(t)
	go func() {
		resp, err := cl.Broker(1).Request(ctx, fetchRequest(12, "lp", 0, -1, 1, 60_000))
		got <- result{resp, err}
	}()

	prod := newClient(t, c, kgo.DefaultProduceTopic("lp"), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := prod.ProduceSync(testContext(t), &kgo.Record{Value: []byte("wake")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		p := r.resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || countRecords(t, p.RecordBatches) != 1 {
			t.Fatalf("error %d, %d records", p.ErrorCode, countRecords(t, p.RecordBatches))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the parked fetch did not wake when the HW moved")
	}
}

// TestEmptyFetchHasEmptyNotNullRecords: a partition with nothing to return
// carries an empty records field, as Kafka sends, not a null one (which
// librdkafka cannot parse).
func TestEmptyFetchHasEmptyNotNullRecords(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("empty", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int16{4, 12} {
		p := rawFetch(t, c, 1, v, "empty", 0, -1, 0, 0)
		if p.ErrorCode != 0 || p.RecordBatches == nil {
			t.Errorf("v%d: error %d, records nil=%v; want an empty, non-null records field", v, p.ErrorCode, p.RecordBatches == nil)
		}
	}
}
