package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produced is what the producer was told for one record.
type produced struct {
	value  string
	offset int64
}

// TestIdempotentAcksAllRoundTrip is the core promise: an idempotent acks=all
// producer on rf=3 / min.insync.replicas=2 writes 100,000 records to six
// partitions and a consumer reads every one back, in order, at the offsets
// the producer was given.
func TestIdempotentAcksAllRoundTrip(t *testing.T) {
	const records, partitions = 100_000, 6
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("orders", partitions, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond))

	var mu sync.Mutex
	want := make([][]produced, partitions)
	var wg sync.WaitGroup
	var firstErr error
	for i := range records {
		p := int32(i % partitions)
		r := &kgo.Record{Topic: "orders", Partition: p, Value: []byte(strconv.Itoa(i))}
		wg.Add(1)
		prod.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmpErr(firstErr, err)
				return
			}
			want[r.Partition] = append(want[r.Partition], produced{string(r.Value), r.Offset})
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
	for p, ws := range want {
		for i, w := range ws {
			if w.offset != int64(i) {
				t.Fatalf("partition %d: record %d acknowledged at offset %d", p, i, w.offset)
			}
		}
	}
	// Everything acknowledged with acks=all is below every ISR member's LEO.
	for _, ps := range c.State().Topics[0].Partitions {
		if n := int64(len(want[ps.Partition])); ps.HighWatermark != n {
			t.Fatalf("partition %d HW %d, want %d", ps.Partition, ps.HighWatermark, n)
		}
	}

	cons := newClient(t, c, kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := make([][]produced, partitions)
	for n := 0; n < records; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], produced{string(r.Value), r.Offset})
			n++
		})
	}
	for p := range partitions {
		if len(got[p]) != len(want[p]) {
			t.Fatalf("partition %d: consumed %d records, produced %d", p, len(got[p]), len(want[p]))
		}
		for i := range got[p] {
			if got[p][i] != want[p][i] {
				t.Fatalf("partition %d index %d: consumed %+v, produced %+v", p, i, got[p][i], want[p][i])
			}
		}
	}
}

func cmpErr(prev, err error) error {
	if prev != nil {
		return prev
	}
	return err
}

// TestConsumerNeverSeesPastHW holds one follower back: the leader takes the
// records (acks=1) but the HW cannot pass them, so a consumer sees nothing
// until the follower catches up.
func TestConsumerNeverSeesPastHW(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("held", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.PauseReplica("held", 0, 3); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	for i := range 10 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "held", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Follower 2 gets everything, follower 3 nothing: leader LEO 10, HW 0.
	waitFor(t, 10*time.Second, "follower 2 to replicate", func() bool {
		ps, _ := c.Partition("held", 0)
		return ps.Replicas[1].LogEndOffset == 10
	})
	ps, _ := c.Partition("held", 0)
	if ps.Replicas[0].LogEndOffset != 10 || ps.HighWatermark != 0 || ps.Replicas[2].LogEndOffset != 0 {
		t.Fatalf("state %+v, want leader LEO 10, HW 0, follower 3 LEO 0", ps)
	}

	cons := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"held": {0: kgo.NewOffset().At(0)}}), kgo.FetchMaxWait(100*time.Millisecond))
	pollCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	fs := cons.PollFetches(pollCtx)
	cancel()
	if n := fs.NumRecords(); n != 0 {
		t.Fatalf("consumer saw %d records above the HW", n)
	}

	if err := c.ResumeReplica("held", 0, 3); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for len(got) < 10 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Value...) })
	}
	for i, b := range got {
		if int(b) != i {
			t.Fatalf("record %d has value %d", i, b)
		}
	}
}

// TestNotEnoughReplicas forces the ISR below min.insync.replicas: acks=all
// gets NOT_ENOUGH_REPLICAS and nothing is appended; once the followers are
// back in the ISR the same producer succeeds.
func TestNotEnoughReplicas(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("nisr", 1, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{2, 3} {
		if err := c.PauseReplica("nisr", 0, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetISR("nisr", 0, []int32{1}); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	err := prod.ProduceSync(ctx, &kgo.Record{Topic: "nisr", Value: []byte("x")}).FirstErr()
	if !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("produce error %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if ps, _ := c.Partition("nisr", 0); ps.Replicas[0].LogEndOffset != 0 {
		t.Fatalf("leader LEO %d after NOT_ENOUGH_REPLICAS, want 0", ps.Replicas[0].LogEndOffset)
	}

	for _, id := range []int32{2, 3} {
		if err := c.ResumeReplica("nisr", 0, id); err != nil {
			t.Fatal(err)
		}
	}
	// A resumed follower rejoins on its first fetch: LEO 0 >= HW 0.
	waitFor(t, 10*time.Second, "followers to rejoin the ISR", func() bool {
		ps, _ := c.Partition("nisr", 0)
		return len(ps.ISR) == 3
	})
	r, err := prod.ProduceSync(ctx, &kgo.Record{Topic: "nisr", Value: []byte("y")}).First()
	if err != nil || r.Offset != 0 {
		t.Fatalf("produce after heal: offset %d, error %v; want offset 0", r.Offset, err)
	}
}

// TestCompressionCodecsRoundTrip produces and consumes with every codec.
func TestCompressionCodecsRoundTrip(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	for _, codec := range []struct {
		name string
		c    kgo.CompressionCodec
	}{
		{"none", kgo.NoCompression()},
		{"gzip", kgo.GzipCompression()},
		{"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()},
		{"zstd", kgo.ZstdCompression()},
	} {
		t.Run(codec.name, func(t *testing.T) {
			topic := "codec-" + codec.name
			prod := newClient(t, c, kgo.ProducerBatchCompression(codec.c), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
			var rs []*kgo.Record
			for i := range 200 {
				rs = append(rs, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("value %d %s", i, codec.name))})
			}
			if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			cons := newClient(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			var n int
			for n < len(rs) {
				fs := cons.PollFetches(ctx)
				if err := fs.Err0(); err != nil {
					t.Fatal(err)
				}
				fs.EachRecord(func(r *kgo.Record) {
					if want := fmt.Sprintf("value %d %s", n, codec.name); string(r.Value) != want || r.Offset != int64(n) {
						t.Fatalf("record %d: %q at %d, want %q", n, r.Value, r.Offset, want)
					}
					n++
				})
			}
		})
	}
}

// TestAcksAllTimesOutWhileAFollowerLags parks an acks=all produce while a
// follower in the ISR is held back: it expires with REQUEST_TIMED_OUT, the
// record stays in the leader's log, and it becomes visible once the
// follower catches up.
func TestAcksAllTimesOutWhileAFollowerLags(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("slow", 1, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	if err := c.PauseReplica("slow", 0, 3); err != nil {
		t.Fatal(err)
	}
	req := byTopicID(c, rawProduce(t, "slow", -1, 200, "parked"))
	cl := newClient(t, c)
	resp, err := cl.Broker(1).Request(testContext(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.RequestTimedOut.Code {
		t.Fatalf("error %d, want REQUEST_TIMED_OUT", code)
	}
	ps, _ := c.Partition("slow", 0)
	if ps.Replicas[0].LogEndOffset != 1 || ps.HighWatermark != 0 || len(ps.ISR) != 3 {
		t.Fatalf("state %+v: want the record kept at LEO 1, HW 0, follower 3 still in the ISR", ps)
	}
	if err := c.ResumeReplica("slow", 0, 3); err != nil {
		t.Fatal(err)
	}
	cons := newClient(t, c, kgo.ConsumeTopics("slow"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cons.PollFetches(testContext(t))
	if err := fs.Err0(); err != nil || fs.NumRecords() != 1 || string(fs.Records()[0].Value) != "parked" {
		t.Fatalf("consumed %d records, error %v", fs.NumRecords(), err)
	}
}
