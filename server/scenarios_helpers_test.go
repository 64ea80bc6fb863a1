package server

// Helpers of the failure scenarios (scenarios*_test.go), prefixed sc so
// they cannot collide with helpers of other test files.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scFast makes franz-go notice failovers quickly: metadata may be refreshed
// every 10ms and retries back off 10ms. AlwaysRetryEOF: by default franz-go
// does not retry an EOF on the first request of a connection (it suspects
// missing SASL or TLS) and reports it as a fetch error, and a broker that
// stops just after accepting a connection produces exactly that.
func scFast() []kgo.Opt {
	return []kgo.Opt{
		kgo.AlwaysRetryEOF(),
		kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }),
	}
}

// scClient is newClient with scFast.
func scClient(t *testing.T, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, c, append(scFast(), opts...)...)
}

// scRec is one record as stored: offset, the leader epoch of its batch and
// its value.
type scRec struct {
	Offset int64
	Epoch  int32
	Value  string
}

func (r scRec) String() string { return fmt.Sprintf("%d:%q(e%d)", r.Offset, r.Value, r.Epoch) }

// scDecode decodes concatenated v2 batches.
func scDecode(t *testing.T, b []byte) []scRec {
	t.Helper()
	var out []scRec
	for len(b) > 0 {
		batch, rest, err := protocol.NextBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		h, err := protocol.ParseBatchHeader(batch)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := protocol.Records(batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, scRec{h.BaseOffset + int64(r.OffsetDelta), h.PartitionLeaderEpoch, string(r.Value)})
		}
		b = rest
	}
	return out
}

// scReplicaLog is everything broker's replica of topic/partition holds,
// past its HW included: the stored batch bytes, decoded.
func scReplicaLog(t *testing.T, c *Cluster, topic string, partition, broker int32) []scRec {
	t.Helper()
	p := c.partition(topic, partition)
	p.mu.Lock()
	var raw []byte
	for _, b := range p.st.Replica(broker).Log().Batches() {
		raw = append(raw, b.Raw...)
	}
	p.mu.Unlock()
	return scDecode(t, raw)
}

// scFetchFrom is what a consumer reads from broker's replica of topic/0
// with Fetch v12 (any replica serves v11+, up to its own HW).
func scFetchFrom(t *testing.T, c *Cluster, broker int32, topic string) []scRec {
	t.Helper()
	p := rawFetch(t, c, broker, 12, topic, 0, -1, 0, 0)
	if p.ErrorCode != 0 {
		t.Fatalf("fetch %s from broker %d: %v", topic, broker, kerr.ErrorForCode(p.ErrorCode))
	}
	return scDecode(t, p.RecordBatches)
}

func scValues(rs []scRec) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
}

// scBatch builds one batch of values; pid -1 makes it non-idempotent.
func scBatch(t *testing.T, pid int64, epoch int16, seq int32, values ...string) []byte {
	t.Helper()
	var rs []protocol.Record
	for _, v := range values {
		rs = append(rs, protocol.Record{Value: []byte(v)})
	}
	b, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, BaseTimestamp: time.Now().UnixMilli()}, protocol.CodecNone, rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scAcksClient is a client for raw Produce requests with acks: franz-go
// rewrites a raw ProduceRequest's Acks to the client's RequiredAcks
// (pkg/kgo/broker.go), so the acks must be configured on the client.
func scAcksClient(t *testing.T, c *Cluster, acks int16) *kgo.Client {
	t.Helper()
	switch acks {
	case 1:
		return scClient(t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case -1:
		return scClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	t.Fatalf("acks %d", acks)
	return nil
}

// scProduce sends one raw Produce of batch to topic/0 on broker through
// cl, which must have been made on the test goroutine; it may run on any
// goroutine.
func scProduce(ctx context.Context, cl *kgo.Client, broker int32, topic string, acks int16, timeoutMillis int32, batch []byte) (kmsg.ProduceResponseTopicPartition, error) {
	req := produceBatchRequest(topic, acks, timeoutMillis, batch)
	id, err := topicIDVia(ctx, cl, topic)
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, err
	}
	req.Topics[0].TopicID = id // kgo sends Produce v13, by id
	resp, err := cl.Broker(int(broker)).Request(ctx, req)
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, err
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0], nil
}

func scPartition(t *testing.T, c *Cluster, topic string, partition int32) PartitionState {
	t.Helper()
	ps, ok := c.Partition(topic, partition)
	if !ok {
		t.Fatalf("no partition %s/%d", topic, partition)
	}
	return ps
}

// scSettled reports whether every replica of topic/partition is online and
// in the ISR with LEO = HW = the leader's LEO (and = leo unless leo < 0).
func scSettled(c *Cluster, topic string, partition int32, leo int64) bool {
	ps, ok := c.Partition(topic, partition)
	if !ok || ps.Leader < 0 || len(ps.ISR) != len(ps.Replicas) {
		return false
	}
	if leo < 0 {
		leo = ps.HighWatermark
	}
	for _, r := range ps.Replicas {
		if r.State == "offline" || r.LogEndOffset != leo || r.HighWatermark != leo {
			return false
		}
	}
	return ps.HighWatermark == leo
}

func scWaitSettled(t *testing.T, c *Cluster, topic string, partition int32, leo int64) {
	t.Helper()
	waitFor(t, 5*time.Second, fmt.Sprintf("%s/%d to settle at LEO %d on every replica", topic, partition, leo), func() bool {
		return scSettled(c, topic, partition, leo)
	})
}

// scConsume reads topic/0 from the start with a fresh franz-go consumer
// until it has n records.
func scConsume(t *testing.T, c *Cluster, topic string, n int) []*kgo.Record {
	t.Helper()
	cons := scClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records of %s", len(out), n, topic)
		}
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s: %v", topic, err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// scRecordsAre checks that rs hold exactly values at offsets 0, 1, ...
func scRecordsAre(t *testing.T, what string, rs []*kgo.Record, values ...string) {
	t.Helper()
	got := make([]string, len(rs))
	for i, r := range rs {
		got[i] = string(r.Value)
		if r.Offset != int64(i) {
			t.Errorf("%s: record %d at offset %d", what, i, r.Offset)
		}
	}
	if !slices.Equal(got, values) {
		t.Errorf("%s: consumed %q, want %q", what, got, values)
	}
}

// scLogsAre checks that every replica of topic/0 stores exactly values.
func scLogsAre(t *testing.T, c *Cluster, topic string, values ...string) {
	t.Helper()
	for _, r := range scPartition(t, c, topic, 0).Replicas {
		if got := scValues(scReplicaLog(t, c, topic, 0, r.Broker)); !slices.Equal(got, values) {
			t.Errorf("broker %d's log of %s holds %q, want %q", r.Broker, topic, got, values)
		}
	}
}
