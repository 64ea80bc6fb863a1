package server

import (
	"errors"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestZombieLeaderLosesAcksOneWrites isolates the leader of a partition
// from the other brokers: a client still talking to it gets its acks=1
// write acknowledged, an acks=all write times out, a new leader is elected
// elsewhere, and when the zombie heals its acknowledged write is gone.
func TestZombieLeaderLosesAcksOneWrites(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("zombie", 1, 3, nil); err != nil { // leader 1
		t.Fatal(err)
	}
	if err := c.IsolateBroker(1); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("zombie", 0)
	if ps.Leader != 2 || ps.LeaderEpoch != 1 {
		t.Fatalf("after isolation leader %d epoch %d, want 2 at epoch 1", ps.Leader, ps.LeaderEpoch)
	}

	produceTo := func(broker int32, acks int16, value string) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = acks, 300
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "zombie"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = buildBatch(t, value)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		// kgo rewrites a raw produce's acks to its own setting.
		opts := []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}
		if acks == 1 {
			opts = []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}
		}
		resp, err := newClient(t, c, opts...).Broker(int(broker)).Request(testContext(t), byTopicID(c, req))
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	}
	// The zombie still believes it leads.
	if r := produceTo(1, 1, "lost"); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("zombie acks=1: error %d offset %d, want success at 0", r.ErrorCode, r.BaseOffset)
	}
	if r := produceTo(1, -1, "never"); r.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("zombie acks=all: error %d, want REQUEST_TIMED_OUT", r.ErrorCode)
	}
	// The real leader takes offset 0 too.
	if r := produceTo(2, -1, "kept"); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("new leader: error %d offset %d", r.ErrorCode, r.BaseOffset)
	}
	if r := produceTo(3, 1, "x"); r.ErrorCode != kerr.NotLeaderForPartition.Code || r.CurrentLeader.LeaderID != 2 {
		t.Fatalf("follower: error %d, current leader %+v", r.ErrorCode, r.CurrentLeader)
	}

	if err := c.HealBroker(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the healed broker to converge and rejoin the ISR", func() bool {
		ps, _ := c.Partition("zombie", 0)
		return len(ps.ISR) == 3 && ps.Replicas[0].LogEndOffset == 1 && ps.Replicas[0].HighWatermark == 1
	})
	cons := newClient(t, c, kgo.ConsumeTopics("zombie"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cons.PollFetches(testContext(t))
	if err := fs.Err0(); err != nil || fs.NumRecords() != 1 || string(fs.Records()[0].Value) != "kept" {
		t.Fatalf("consumed %d records (%v), want only \"kept\"", fs.NumRecords(), errors.Join(err))
	}
}

// buildBatch is a one-record, non-idempotent batch as a producer sends it.
func buildBatch(t *testing.T, value string) []byte {
	t.Helper()
	b, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone,
		[]protocol.Record{{Value: []byte(value)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
