package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch details as Kafka 4.4 answers them (fetch_limits.go), through
// franz-go over TCP.

// fdFetch sends a v12 fetch (topic names) of parts to broker and returns
// the answer's partitions in order.
func fdFetch(t *testing.T, c *Cluster, broker int32, maxBytes int32, parts ...fetchAt) []kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := fetchRequest(12, parts[0].topic, parts[0].offset, -1, 1, 0)
	req.MaxBytes = maxBytes
	req.Topics = nil
	for _, f := range parts {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = f.topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.PartitionMaxBytes = f.partition, f.offset, -1, f.lastEpoch, f.maxBytes
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := pinnedFetchClient(t, c, 12).Broker(int(broker)).Request(testContext(t), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []kmsg.FetchResponseTopicPartition
	for _, rt := range resp.(*kmsg.FetchResponse).Topics {
		out = append(out, rt.Partitions...)
	}
	return out
}

// fetchAt is one partition of fdFetch.
type fetchAt struct {
	topic     string
	partition int32
	offset    int64
	lastEpoch int32
	maxBytes  int32
}

// wholeBatches counts the complete batches of b and the bytes after them.
func wholeBatches(b []byte) (n, partial int) {
	for len(b) > 0 {
		h, err := protocol.ParseBatchHeader(b)
		if err != nil || h.Size() > len(b) {
			return n, len(b)
		}
		b = b[h.Size():]
		n++
	}
	return n, 0
}

// Byte limits cut the log where they fall: the last batch may be partial;
// only the first partition with data answers a batch larger than the
// limit; a later one whose first batch does not fit answers nothing.
// franz-go consumes through such answers without losing a record.
func TestFetchPartialBatchAtByteLimits(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopicAssigned("cut", [][]int32{{1}, {1}}, nil))
	cl := newClient(t, c)
	var size int
	for p := range int32(2) {
		for i := range 3 {
			b := scBatch(t, -1, -1, -1, fmt.Sprintf("v%d-%d", p, 2*i), fmt.Sprintf("v%d-%d", p, 2*i+1))
			size = len(b)
			req := produceBatchRequest("cut", -1, 5000, b)
			req.Topics[0].Partitions[0].Partition = p
			resp, err := cl.Broker(1).Request(testContext(t), byTopicID(c, req))
			if err != nil || resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode != 0 {
				t.Fatalf("produce: %v %v", resp, err)
			}
		}
	}
	for _, tc := range []struct {
		name            string
		maxBytes        int32
		parts           []fetchAt
		whole, partials []int
	}{
		{"limit below the first batch", 10, []fetchAt{{"cut", 0, 0, -1, 1 << 20}}, []int{1}, []int{0}},
		{"partition limit below the first batch", 1 << 20, []fetchAt{{"cut", 0, 0, -1, 10}}, []int{1}, []int{0}},
		{"limit mid-batch", int32(size + 40), []fetchAt{{"cut", 0, 0, -1, 1 << 20}, {"cut", 1, 0, -1, 1 << 20}}, []int{1, 0}, []int{40, 0}},
		{"partition limit mid-batch", 1 << 20, []fetchAt{{"cut", 0, 0, -1, int32(size + 40)}, {"cut", 1, 2, -1, int32(size + 40)}}, []int{1, 1}, []int{40, 40}},
		{"second partition's first batch too big", int32(3*size + 40), []fetchAt{{"cut", 0, 0, -1, 1 << 20}, {"cut", 1, 0, -1, 1 << 20}}, []int{3, 0}, []int{0, 0}},
		{"second partition cut after a batch", int32(4*size + 40), []fetchAt{{"cut", 0, 0, -1, 1 << 20}, {"cut", 1, 0, -1, 1 << 20}}, []int{3, 1}, []int{0, 40}},
	} {
		got := fdFetch(t, c, 1, tc.maxBytes, tc.parts...)
		for i, p := range got {
			n, partial := wholeBatches(p.RecordBatches)
			if p.ErrorCode != 0 || n != tc.whole[i] || partial != tc.partials[i] {
				t.Errorf("%s: partition %d: %d whole batches and %d bytes more (%s); want %d and %d", tc.name, p.Partition, n, partial, kerr.ErrorForCode(p.ErrorCode), tc.whole[i], tc.partials[i])
			}
		}
	}

	cons := scClient(t, c, kgo.ConsumeTopics("cut"), kgo.FetchMaxBytes(int32(size+40)), kgo.FetchMaxPartitionBytes(int32(size+7)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	next := map[int32]int64{}
	for total := 0; total < 12; {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 12 records", total)
		}
		scMust(t, fs.Err0())
		for _, r := range fs.Records() {
			if r.Offset != next[r.Partition] || string(r.Value) != fmt.Sprintf("v%d-%d", r.Partition, r.Offset) {
				t.Fatalf("partition %d: %q at %d, want offset %d", r.Partition, r.Value, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			total++
		}
	}
}

// A partition named twice in one Fetch is read once, with the last
// entry's offset, at the first entry's place.
func TestFetchSamePartitionTwice(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopicAssigned("twice", [][]int32{{1}, {1}}, nil))
	prod := scClient(t, c, kgo.DefaultProduceTopic("twice"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(2) {
		for i := range 4 {
			scMust(t, prod.ProduceSync(testContext(t), &kgo.Record{Partition: p, Value: []byte(fmt.Sprint(i))}).FirstErr())
		}
	}
	got := fdFetch(t, c, 1, 1<<20, fetchAt{"twice", 0, 3, -1, 1 << 20}, fetchAt{"twice", 1, 0, -1, 1 << 20}, fetchAt{"twice", 0, 1, -1, 1 << 20})
	if len(got) != 2 || got[0].Partition != 0 || got[1].Partition != 1 {
		t.Fatalf("answered %d partitions; want 0 then 1", len(got))
	}
	if h, err := protocol.ParseBatchHeader(got[0].RecordBatches); err != nil || h.BaseOffset != 1 {
		t.Errorf("partition 0 from %d (%v); want the last entry's offset 1", h.BaseOffset, err)
	}
}

// A consumer's LastFetchedEpoch (v12+) that the leader's epoch cache does
// not share gets DivergingEpoch: after an unclean election the new leader
// ended epoch 0 at offset 2, where the consumer had read to 5.
func TestFetchDivergingEpochAfterUncleanElection(t *testing.T) {
	c := NewTestCluster(t, Config{})
	const topic = "diverge"
	scMust(t, c.CreateTopic(topic, 1, 3, nil))
	ctx := testContext(t)
	prod := scClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	for _, v := range []string{"a", "b"} {
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
	}
	scWaitSettled(t, c, topic, 0, 2)
	scMust(t, c.PauseReplica(topic, 0, 3))
	scMust(t, c.SetISR(topic, 0, []int32{1, 2}))
	for _, v := range []string{"c", "d", "e"} {
		scMust(t, prod.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr())
	}
	old := scPartition(t, c, topic, 0).Leader
	before := fdFetch(t, c, old, 1<<20, fetchAt{topic, 0, 5, 0, 1 << 20})
	if before[0].ErrorCode != 0 || before[0].DivergingEpoch.Epoch != -1 || before[0].HighWatermark != 5 {
		t.Fatalf("before the election: %+v; want no divergence at HW 5", before[0])
	}
	if _, err := c.ElectLeader(topic, 0, 3, true); err != nil {
		t.Fatal(err)
	}
	scMust(t, c.ResumeReplica(topic, 0, 3))
	if r, err := prod.ProduceSync(ctx, kgo.StringRecord("x")).First(); err != nil || r.Offset != 2 {
		t.Fatalf("produce on the new leader: %v at %d; want offset 2", err, r.Offset)
	}
	ps := scPartition(t, c, topic, 0)
	got := fdFetch(t, c, 3, 1<<20, fetchAt{topic, 0, 5, 0, 1 << 20})[0]
	if got.ErrorCode != 0 || got.DivergingEpoch.Epoch != 0 || got.DivergingEpoch.EndOffset != 2 || len(got.RecordBatches) != 0 || got.HighWatermark < 2 || got.LogStartOffset != 0 {
		t.Errorf("LastFetchedEpoch 0 at offset 5: %+v; want DivergingEpoch {0, 2} and no records", got)
	}
	// At the end of epoch 0 there is nothing to truncate: the records of
	// the new epoch follow.
	got = fdFetch(t, c, 3, 1<<20, fetchAt{topic, 0, 2, 0, 1 << 20})[0]
	if h, err := protocol.ParseBatchHeader(got.RecordBatches); got.ErrorCode != 0 || got.DivergingEpoch.Epoch != -1 || err != nil || h.BaseOffset != 2 || h.PartitionLeaderEpoch != ps.LeaderEpoch {
		t.Errorf("LastFetchedEpoch 0 at offset 2: %+v; want the new epoch's batch at 2", got)
	}
	// An epoch the leader never had is out of range.
	got = fdFetch(t, c, 3, 1<<20, fetchAt{topic, 0, 2, ps.LeaderEpoch + 5, 1 << 20})[0]
	if got.ErrorCode != kerr.OffsetOutOfRange.Code || got.HighWatermark != -1 {
		t.Errorf("LastFetchedEpoch %d: %+v; want OFFSET_OUT_OF_RANGE", ps.LeaderEpoch+5, got)
	}
}

// The broker's fetch.max.bytes (at least 1024) caps a request's MaxBytes: the first batch
// still goes whole, the next is cut at the cap, the next partition gets
// nothing.
func TestFetchMaxBytesBrokerCap(t *testing.T) {
	c := NewTestCluster(t, Config{BrokerConfigs: map[string]string{"fetch.max.bytes": "1024"}})
	scMust(t, c.CreateTopicAssigned("capped", [][]int32{{1}, {1}}, nil))
	cl := newClient(t, c)
	var size int
	for p := range int32(2) {
		for i := range 2 {
			b := scBatch(t, -1, -1, -1, fmt.Sprintf("value-%d-%0600d", i, 0))
			size = len(b)
			req := produceBatchRequest("capped", -1, 5000, b)
			req.Topics[0].Partitions[0].Partition = p
			resp, err := cl.Broker(1).Request(testContext(t), byTopicID(c, req))
			if err != nil || resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode != 0 {
				t.Fatalf("produce: %v %v", resp, err)
			}
		}
	}
	got := fdFetch(t, c, 1, 1<<20, fetchAt{"capped", 0, 0, -1, 1 << 20}, fetchAt{"capped", 1, 0, -1, 1 << 20})
	n0, partial0 := wholeBatches(got[0].RecordBatches)
	n1, partial1 := wholeBatches(got[1].RecordBatches)
	if n0 != 1 || partial0 != 1024-size || n1 != 0 || partial1 != 0 {
		t.Errorf("under fetch.max.bytes 1024 (batches of %d bytes): %d+%d bytes and %d+%d; want 1 batch and %d bytes, then nothing", size, n0, partial0, n1, partial1, 1024-size)
	}
}
