package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnCluster is a three-broker cluster with few coordinator shards.
func txnCluster(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	if cfg.TransactionStatePartitions == 0 {
		cfg.TransactionStatePartitions = 3
	}
	return NewTestCluster(t, cfg)
}

// runTxn produces values in one transaction and commits or aborts it.
func runTxn(t *testing.T, cl *kgo.Client, commit bool, values ...string) {
	t.Helper()
	ctx := testContext(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end (commit %v): %v", commit, err)
	}
}

// consumeValues reads topic from the start with the given isolation until
// it has read everything below end, and returns the values with offsets.
func consumeValues(t *testing.T, c *Cluster, topic string, committed bool, until func([]*kgo.Record) bool) []*kgo.Record {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := newClient(t, c, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	ctx := testContext(t)
	var out []*kgo.Record
	for !until(out) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %s (committed %v): got %v", topic, committed, values(out))
		}
		for _, err := range fs.Errors() {
			t.Fatalf("fetch: %v", err.Err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

func values(rs []*kgo.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Value)
	}
	return out
}

func offsetsOf(rs []*kgo.Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Offset
	}
	return out
}

func lastOffsetAtLeast(o int64) func([]*kgo.Record) bool {
	return func(rs []*kgo.Record) bool { return len(rs) > 0 && rs[len(rs)-1].Offset >= o }
}

func TestTxnCommitAndAbortReadCommitted(t *testing.T) {
	for _, tv := range []int{1, 2} {
		t.Run(fmt.Sprintf("transaction.version=%d", tv), func(t *testing.T) {
			c := txnCluster(t, Config{TransactionVersion: tv})
			if err := c.CreateTopic("t", 1, 3, nil); err != nil {
				t.Fatal(err)
			}
			p := newClient(t, c, kgo.TransactionalID("tx-a"), kgo.DefaultProduceTopic("t"), kgo.RequiredAcks(kgo.AllISRAcks()))
			runTxn(t, p, true, "c1", "c2", "c3")
			runTxn(t, p, false, "a1", "a2")
			runTxn(t, p, true, "c4")

			// Offsets: c1-c3 0-2, commit 3, a1-a2 4-5, abort 6, c4 7, commit 8.
			got := consumeValues(t, c, "t", true, lastOffsetAtLeast(7))
			if !slices.Equal(values(got), []string{"c1", "c2", "c3", "c4"}) || !slices.Equal(offsetsOf(got), []int64{0, 1, 2, 7}) {
				t.Fatalf("read_committed: %v at %v", values(got), offsetsOf(got))
			}
			got = consumeValues(t, c, "t", false, lastOffsetAtLeast(7))
			if !slices.Equal(values(got), []string{"c1", "c2", "c3", "a1", "a2", "c4"}) {
				t.Fatalf("read_uncommitted: %v", values(got))
			}
			waitFor(t, 5*time.Second, "the commit marker replicated", func() bool {
				ps, _ := c.Partition("t", 0)
				return ps.HighWatermark == 9 && ps.LastStableOffset == 9
			})
			// Version 2 bumps the epoch at every EndTxn; version 1 never.
			st := describeProducers(t, p, "t", 0)
			wantEpoch := int32(0)
			if tv == 2 {
				wantEpoch = 3
			}
			if len(st) != 1 || st[0].ProducerEpoch != wantEpoch || st[0].CurrentTxnStartOffset != -1 {
				t.Fatalf("producers: %+v, want one at epoch %d with no open transaction", st, wantEpoch)
			}
		})
	}
}

func describeProducers(t *testing.T, cl *kgo.Client, topic string, partition int32) []kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	t.Helper()
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{partition}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	rp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
		t.Fatalf("describe producers: %v", err)
	}
	return rp.ActiveProducers
}

var _ = errors.Is
var _ = kerr.ProducerFenced
var _ context.Context
