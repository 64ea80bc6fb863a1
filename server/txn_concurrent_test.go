package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnProduceConcurrentTransactions: under transaction version 2 a
// Produce whose implicit AddPartitionsToTxn meets the previous transaction
// still completing (its markers held) is retried inside the broker for
// add.partitions.to.txn.retry.backoff.max.ms, 100 ms of the cluster's
// clock, and then answered CONCURRENT_TRANSACTIONS, as Kafka 4.4 answers a
// transaction version 2 producer. Once the markers are out the batch behind
// it is out of order and the same batch goes in.
func TestTxnProduceConcurrentTransactions(t *testing.T) {
	h := txnMarkersHeld(t, "cc")
	c, clk, cl, id, batch, next := h.c, h.clk, h.cl, kmsg.StringPtr("cc"), h.batch, h.next

	start := clk.Now()
	code, at := answerAfterRetryDeadline(t, c, func() int16 { return produceRaw(t, c, cl, id, batch(next, 0)) })
	r := struct {
		code int16
		at   time.Time
	}{code, at}
	if r.code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("produce during the previous transaction's markers: %v, want CONCURRENT_TRANSACTIONS", kerr.ErrorForCode(r.code))
	}
	if waited := r.at.Sub(start); waited != addPartitionsToTxnRetryBackoffMax {
		t.Fatalf("answered after %v of the cluster's clock, want exactly 100 ms (not the 5 s a coordinator write may take)", waited)
	}
	c.ReleaseTransactionMarkers("pr", 0)
	waitFor(t, 10*time.Second, "the commit to complete", func() bool {
		ts := c.Transactions()
		return len(ts) == 1 && ts[0].State == "CompleteCommit"
	})
	// The batch the producer had in flight behind the refused one
	// (sequence 1) arrives first: out of order, as in Kafka 4.4, so the
	// refused batch's retry still finds sequence 0 free.
	if code := produceRaw(t, c, cl, id, batch(next, 1)); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("sequence 1 before 0 at the new epoch: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(code))
	}
	if code := produceRaw(t, c, cl, id, batch(next, 0)); code != 0 {
		t.Fatalf("the retried batch: %v", kerr.ErrorForCode(code))
	}
	if code := produceRaw(t, c, cl, id, batch(next, 1)); code != 0 {
		t.Fatalf("the batch behind it, resent: %v", kerr.ErrorForCode(code))
	}
}

// ctLog is a franz-go logger at debug level that counts the
// CONCURRENT_TRANSACTIONS answers to its produce requests.
type ctLog struct{ n atomic.Int64 }

func (*ctLog) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *ctLog) Log(_ kgo.LogLevel, msg string, kvs ...any) {
	if msg != "produced" {
		return
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		if kvs[i] == "to" {
			l.n.Add(int64(strings.Count(fmt.Sprint(kvs[i+1]), "(CONCURRENT_TRANSACTIONS")))
		}
	}
}

// TestTxnFranzGoRetriesConcurrentTransactions: the client side of the
// 100 ms answer. A franz-go transactional producer (transaction version 2)
// commits a transaction whose marker to one partition is held, and at once
// produces its next transaction there: each Produce is answered
// CONCURRENT_TRANSACTIONS after 100 ms and retried by the client, until the
// marker goes out; then the records go in and the second transaction
// commits, every record read_committed exactly once.
func TestTxnFranzGoRetriesConcurrentTransactions(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("fct", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	var ct ctLog
	cl := newClient(t, c, kgo.TransactionalID("fct-txn"), kgo.DefaultProduceTopic("fct"), kgo.WithLogger(&ct),
		// franz-go retries a CONCURRENT_TRANSACTIONS batch after its next
		// metadata refresh, at most every MetadataMinAge (5 s by default).
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(50*time.Millisecond))
	ctx := testContext(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("t1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := c.HoldTransactionMarkers("fct", 0); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cl.ProduceSync(ctx, &kgo.Record{Value: []byte("t2")}).FirstErr() }()
	waitFor(t, 20*time.Second, "three CONCURRENT_TRANSACTIONS answers", func() bool { return ct.n.Load() >= 3 })
	select {
	case err := <-done:
		t.Fatalf("the produce finished (%v) while the previous transaction's marker was held", err)
	default:
	}
	c.ReleaseTransactionMarkers("fct", 0)
	if err := <-done; err != nil {
		t.Fatalf("the produce after the marker went out: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	recs := consumeValues(t, c, "fct", true, func(rs []*kgo.Record) bool { return len(rs) >= 2 })
	if len(recs) != 2 || string(recs[0].Value) != "t1" || string(recs[1].Value) != "t2" {
		var got []string
		for _, r := range recs {
			got = append(got, string(r.Value))
		}
		t.Fatalf("read_committed %v, want [t1 t2]", got)
	}
}

// TestTxnOffsetCommitConcurrentTransactionsAtOnce: under transaction
// version 2 a TxnOffsetCommit (v5+) whose implicit add of the group's
// __consumer_offsets partition meets the previous transaction still
// completing is answered CONCURRENT_TRANSACTIONS at once, as Kafka's group
// coordinator answers it (only the Produce path retries inside the
// broker): the cluster's manual clock never moves here. Once the markers
// are out the same commit goes in.
func TestTxnOffsetCommitConcurrentTransactionsAtOnce(t *testing.T) {
	h := txnMarkersHeld(t, "oc")
	c, cl, pid := h.c, h.cl, h.pid
	ctx := testContext(t)
	commit := func() int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "oc", "oc-group", pid, h.next, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "pr"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset, rp.LeaderEpoch = 1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := withTopicIDs(c, req).RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(); code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("TxnOffsetCommit during the previous transaction's markers: %v, want CONCURRENT_TRANSACTIONS", kerr.ErrorForCode(code))
	}
	c.ReleaseTransactionMarkers("pr", 0)
	waitFor(t, 10*time.Second, "the commit to complete", func() bool {
		ts := c.Transactions()
		return len(ts) == 1 && ts[0].State == "CompleteCommit"
	})
	if code := commit(); code != 0 {
		t.Fatalf("TxnOffsetCommit once the markers are out: %v", kerr.ErrorForCode(code))
	}
}

// heldTxn is a transaction of version 2 committed with its marker to pr-0
// held: the coordinator stays in PrepareCommit until
// ReleaseTransactionMarkers("pr", 0).
type heldTxn struct {
	c     *Cluster
	clk   *clock.Clock
	cl    *kgo.Client
	pid   int64
	next  int16 // the epoch the commit bumped to, the next transaction's
	batch func(epoch int16, seq int32) []byte
}

// txnMarkersHeld starts a cluster on a manual clock with topic pr (2
// partitions) and commits one transaction of id there, its marker to pr-0
// held.
func txnMarkersHeld(t *testing.T, id string) heldTxn {
	t.Helper()
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := txnCluster(t, Config{Clock: clk})
	if err := c.CreateTopic("pr", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, ir)
	}
	h := heldTxn{c: c, clk: clk, cl: cl, pid: ir.ProducerID}
	h.batch = func(epoch int16, seq int32) []byte {
		b, err := protocol.BuildBatch(protocol.BatchHeader{Attributes: protocol.AttrTransactional, ProducerID: h.pid, ProducerEpoch: epoch, BaseSequence: seq},
			protocol.CodecNone, []protocol.Record{{Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := c.HoldTransactionMarkers("pr", 0); err != nil {
		t.Fatal(err)
	}
	if code := produceRaw(t, c, cl, kmsg.StringPtr(id), h.batch(ir.ProducerEpoch, 0)); code != 0 {
		t.Fatalf("first transaction's batch: %v", kerr.ErrorForCode(code))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, h.pid, ir.ProducerEpoch, true
	er, err := end.RequestWith(ctx, cl)
	if err != nil || er.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v %v", err, er)
	}
	if ts := c.Transactions(); len(ts) != 1 || ts[0].State != "PrepareCommit" {
		t.Fatalf("transactions: %+v, want PrepareCommit (markers held)", ts)
	}
	h.next = er.ProducerEpoch // transaction version 2 bumps the epoch at every end
	return h
}

// answerAfterRetryDeadline sends a Produce (send) that the leader parks on
// its add.partitions.to.txn.retry.backoff.max.ms deadline, a timer of the
// cluster's manual clock; once it is parked it moves the clock by exactly
// that much and returns the answer and the clock's time then. A send that
// answers before, or not once the deadline passed, fails t.
func answerAfterRetryDeadline[T any](t *testing.T, c *Cluster, send func() T) (T, time.Time) {
	t.Helper()
	clk := c.Clock()
	base, _ := clk.Pending()
	type result struct {
		v  T
		at time.Time
	}
	done := make(chan result, 1)
	go func() {
		v := send()
		done <- result{v, clk.Now()}
	}()
	waitFor(t, 10*time.Second, "the produce to park on the retry deadline", func() bool {
		n, _ := clk.Pending()
		return n > base
	})
	select {
	case r := <-done:
		t.Fatalf("the produce answered before its retry deadline: %v", r.v)
	default:
	}
	if err := c.AdvanceClock(addPartitionsToTxnRetryBackoffMax); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		return r.v, r.at
	case <-time.After(20 * time.Second):
		t.Fatal("the produce did not answer once its retry deadline passed")
	}
	panic("unreachable")
}
