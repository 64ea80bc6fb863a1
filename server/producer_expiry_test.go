package server

import (
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProducerExpiryLetsARetryDuplicate: an idempotent producer's retry of
// a batch already written is answered as a duplicate until the producer's
// state expires (producer.id.expiration.ms, here an hour, checked every 10
// minutes on the cluster's clock); after that the same batch is appended
// again and a consumer reads the record twice, as from Kafka.
func TestProducerExpiryLetsARetryDuplicate(t *testing.T) {
	c := manualCluster(t, Config{ProducerIDExpiration: time.Hour})
	if err := c.CreateTopic("exp", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	init, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
	if err != nil || init.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %+v", err, init)
	}
	batch, err := protocol.BuildBatch(protocol.BatchHeader{BaseTimestamp: c.now().UnixMilli(), ProducerID: init.ProducerID,
		ProducerEpoch: init.ProducerEpoch, BaseSequence: 0}, protocol.CodecNone, []protocol.Record{{Value: []byte("once")}})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("exp", 0)
	produce := func() int64 {
		t.Helper()
		resp, err := byTopicID(c, produceBatchRequest("exp", -1, 5000, batch)).RequestWith(ctx, cl.Broker(int(ps.Leader)))
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("produce: error %d", p.ErrorCode)
		}
		return p.BaseOffset
	}
	producers := func() int {
		t.Helper()
		ds, err := kadm.NewClient(cl).DescribeProducers(ctx, kadm.TopicsSet{"exp": {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		return len(ds.SortedProducers())
	}

	if first, retry := produce(), produce(); first != 0 || retry != 0 {
		t.Fatalf("first write at %d, its retry at %d; want both 0 (a duplicate)", first, retry)
	}
	if n := producers(); n != 1 {
		t.Fatalf("DescribeProducers: %d producers, want 1", n)
	}
	c.AdvanceClock(50 * time.Minute) // five checks, none past the hour
	if retry := produce(); retry != 0 {
		t.Fatalf("retry after 50 minutes at %d, want the duplicate of 0", retry)
	}
	c.AdvanceClock(10 * time.Minute)
	if _, err := c.WaitFor(ctx, ProducerExpired("exp", 0, init.ProducerID)); err != nil {
		t.Fatal(err)
	}
	if n := producers(); n != 0 {
		t.Fatalf("DescribeProducers after expiry: %d producers, want 0", n)
	}
	if again := produce(); again != 1 {
		t.Fatalf("retry after expiry at %d, want appended at 1", again)
	}
	got := values(consumeValues(t, c, "exp", false, func(rs []*kgo.Record) bool { return len(rs) >= 2 }))
	if !slices.Equal(got, []string{"once", "once"}) {
		t.Fatalf("consumed %v, want the record twice", got)
	}
}
