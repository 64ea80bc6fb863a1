package server

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnMarkerDelayFault: a fault rule on WriteTxnMarkers with a delay
// holds the coordinator's marker request to that leader on the cluster's
// clock, so the transaction stays PrepareCommit that long after EndTxn
// answered; a Produce of the next transaction (transaction version 2) is
// answered CONCURRENT_TRANSACTIONS after the leader's 100 ms, and the
// transaction completes once the delay has passed.
func TestTxnMarkerDelayFault(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := txnCluster(t, Config{Clock: clk, Timing: TimingKafka})
	if err := c.CreateTopic("pr", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("pr", 0)
	rule, err := c.InjectFault(Fault{API: "WriteTxnMarkers", Broker: ps.Leader, Topic: "pr", Delay: time.Second,
		ClientID: markerSenderClientID(mustTxnCoordinator(t, c, "slow"))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("slow"), 60000
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, ir)
	}
	pid := ir.ProducerID
	batch := func(epoch int16, seq int32) []byte {
		b, err := protocol.BuildBatch(protocol.BatchHeader{Attributes: protocol.AttrTransactional, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq},
			protocol.CodecNone, []protocol.Record{{Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	id := kmsg.StringPtr("slow")
	if code := produceRaw(t, c, cl, id, batch(ir.ProducerEpoch, 0)); code != 0 {
		t.Fatalf("first transaction's batch: %v", kerr.ErrorForCode(code))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "slow", pid, ir.ProducerEpoch, true
	er, err := end.RequestWith(ctx, cl)
	if err != nil || er.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v %v", err, er)
	}
	ended := clk.Now()
	if err := rule.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{"slow"}
	dresp, err := cl.Broker(int(mustTxnCoordinator(t, c, "slow"))).Request(ctx, dreq)
	if err != nil {
		t.Fatal(err)
	}
	if sts := dresp.(*kmsg.DescribeTransactionsResponse).TransactionStates; len(sts) != 1 || sts[0].State != "PrepareCommit" {
		t.Fatalf("DescribeTransactions while the marker is delayed: %+v, want PrepareCommit", sts)
	}

	// Both the leader's 100 ms and the marker's delay run on the
	// cluster's clock: the produce is answered once the clock passed its
	// retry deadline, the transaction completes once it passed the delay.
	code, at := answerAfterRetryDeadline(t, c, func() int16 { return produceRaw(t, c, cl, id, batch(er.ProducerEpoch, 0)) })
	if code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("produce while the markers are delayed: %v, want CONCURRENT_TRANSACTIONS", kerr.ErrorForCode(code))
	}
	if waited := at.Sub(ended); waited != addPartitionsToTxnRetryBackoffMax {
		t.Fatalf("answered %v after EndTxn on the cluster's clock, want exactly 100 ms", waited)
	}
	if ts := c.Transactions(); len(ts) != 1 || ts[0].State != "PrepareCommit" {
		t.Fatalf("transactions before the marker's delay passed: %+v, want PrepareCommit", ts)
	}
	if err := c.AdvanceClock(time.Second - addPartitionsToTxnRetryBackoffMax); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the transaction to complete", func() bool {
		ts := c.Transactions()
		return len(ts) == 1 && ts[0].State == "CompleteCommit"
	})
	completed := clk.Now()
	if took := completed.Sub(ended); took != time.Second {
		t.Fatalf("complete %v after EndTxn on the cluster's clock, want the marker's 1 s delay", took)
	}
	if n := rule.Hits(); n != 1 {
		t.Fatalf("fault fired %d times, want once (one marker request to one leader)", n)
	}
	if code := produceRaw(t, c, cl, id, batch(er.ProducerEpoch, 0)); code != 0 {
		t.Fatalf("the retried batch after completion: %v", kerr.ErrorForCode(code))
	}
}

// mustTxnCoordinator is the broker coordinating transactional id.
func mustTxnCoordinator(t *testing.T, c *Cluster, id string) int32 {
	t.Helper()
	b, code := c.txnCoordinatorOf(id)
	if code != 0 {
		t.Fatalf("coordinator of %s: %v", id, kerr.ErrorForCode(code))
	}
	return b
}

// txnErrLog is a franz-go logger at debug level that counts the
// CONCURRENT_TRANSACTIONS and OUT_OF_ORDER_SEQUENCE_NUMBER answers to its
// produce requests, one per partition.
type txnErrLog struct {
	ct, ooo atomic.Int64
	mu      sync.Mutex
	answers []string // the produce answers that carried either
}

func (*txnErrLog) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *txnErrLog) Log(_ kgo.LogLevel, msg string, kvs ...any) {
	if msg != "produced" {
		return
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		if kvs[i] == "to" {
			s := fmt.Sprint(kvs[i+1])
			ct, ooo := strings.Count(s, "(CONCURRENT_TRANSACTIONS"), strings.Count(s, "(OUT_OF_ORDER_SEQUENCE_NUMBER")
			l.ct.Add(int64(ct))
			l.ooo.Add(int64(ooo))
			if ct+ooo > 0 {
				l.mu.Lock()
				l.answers = append(l.answers, s)
				l.mu.Unlock()
			}
		}
	}
}

// TestTxnFranzGoSlowMarkers: under timing kafka, with every marker request
// delayed 250 ms by a fault rule, a franz-go transactional producer
// (transaction version 2) that starts each transaction as soon as the
// previous one's EndTxn answers meets CONCURRENT_TRANSACTIONS on the first
// Produce of every transaction after the first (the leader answers it after
// 100 ms), retries, and commits every transaction with each record read
// exactly once.
func TestTxnFranzGoSlowMarkers(t *testing.T) {
	c := txnCluster(t, Config{Timing: TimingKafka})
	if err := c.CreateTopic("slowm", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	rule, err := c.InjectFault(Fault{API: "WriteTxnMarkers", Delay: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var log txnErrLog
	cl := newClient(t, c, kgo.TransactionalID("slowm-txn"), kgo.DefaultProduceTopic("slowm"), kgo.WithLogger(&log),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		// franz-go retries a CONCURRENT_TRANSACTIONS batch after its next
		// metadata refresh, at most every MetadataMinAge (5 s by default).
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(50*time.Millisecond))
	ctx := testContext(t)
	const txns, perPartition = 4, 5
	for i := range txns {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for part := range int32(3) {
			for j := range perPartition {
				cl.Produce(ctx, &kgo.Record{Partition: part, Value: fmt.Appendf(nil, "%d-%d-%d", i, part, j)}, nil)
			}
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	if n := log.ct.Load(); n < txns-1 {
		t.Fatalf("%d CONCURRENT_TRANSACTIONS answers, want one at least for each of the %d transactions after the first", n, txns-1)
	}
	if n := rule.Hits(); n < txns {
		t.Fatalf("fault fired %d times, want a marker request per leader per transaction (>= %d)", n, txns)
	}
	t.Logf("%d CONCURRENT_TRANSACTIONS, %d OUT_OF_ORDER_SEQUENCE_NUMBER answers; %d marker requests delayed", log.ct.Load(), log.ooo.Load(), rule.Hits())
	want := txns * 3 * perPartition
	recs := consumeValues(t, c, "slowm", true, func(rs []*kgo.Record) bool { return len(rs) >= want })
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[string(r.Value)] {
			t.Fatalf("record %s read twice", r.Value)
		}
		seen[string(r.Value)] = true
	}
	if len(seen) != want {
		t.Fatalf("read_committed %d records, want %d", len(seen), want)
	}
}

// TestTxnFranzGoOutOfOrderBehindConcurrentTransactions: the batch a
// franz-go producer has in flight behind one answered
// CONCURRENT_TRANSACTIONS is answered OUT_OF_ORDER_SEQUENCE_NUMBER once the
// previous transaction completes (sequence 1 at the new epoch, sequence 0
// not written), as in Kafka 4.4; franz-go skips that answer (the batch is
// not its first) and resends both in order. The marker is delayed 300 ms
// by a fault rule; the first Produce of the next transaction gets
// CONCURRENT_TRANSACTIONS after 100 ms, and a Produce fault rule holds the
// second one 250 ms, so it reaches the leader while the first is waiting
// for its retry and goes in as soon as the transaction completes.
func TestTxnFranzGoOutOfOrderBehindConcurrentTransactions(t *testing.T) {
	c := txnCluster(t, Config{Timing: TimingKafka})
	if err := c.CreateTopic("oos", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	var log txnErrLog
	cl := newClient(t, c, kgo.TransactionalID("oos-txn"), kgo.DefaultProduceTopic("oos"), kgo.WithLogger(&log),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(50*time.Millisecond))
	ctx := testContext(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("t1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InjectFault(Fault{API: "WriteTxnMarkers", Topic: "oos", Delay: 300 * time.Millisecond, Count: 1}); err != nil {
		t.Fatal(err)
	}
	first, err := c.InjectFault(Fault{API: "Produce", Topic: "oos", Count: 1}) // counts the first request
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.InjectFault(Fault{API: "Produce", Topic: "oos", Count: 1, Delay: 250 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 2)
	done := func(_ *kgo.Record, err error) { results <- err }
	cl.Produce(ctx, &kgo.Record{Value: []byte("t2-0")}, done)
	if err := first.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cl.Produce(ctx, &kgo.Record{Value: []byte("t2-1")}, done) // a second request, in flight behind the first
	for range 2 {
		if err := <-results; err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	answers := strings.Join(log.answers, "; ")
	log.mu.Unlock()
	// franz-go logs the first batch as "retrying" and the one behind it
	// as "skipped": it is resent after the first.
	if ct, ooo := log.ct.Load(), log.ooo.Load(); ct < 1 || ooo < 1 || !strings.Contains(answers, "skipped@") {
		t.Fatalf("franz-go saw %d CONCURRENT_TRANSACTIONS and %d OUT_OF_ORDER_SEQUENCE_NUMBER answers (%s), want both, the second skipped", ct, ooo, answers)
	}
	t.Logf("franz-go's produce answers: %s", answers)
	recs := consumeValues(t, c, "oos", true, func(rs []*kgo.Record) bool { return len(rs) >= 3 })
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, ",") != "t1,t2-0,t2-1" {
		t.Fatalf("read_committed %v, want [t1 t2-0 t2-1]", got)
	}
}

// TestTxnProduceAddsRequestPartitionsTogether: a transaction version 2
// Produce to two partitions of one leader adds both to the transaction in
// one request to the coordinator, as Kafka's leader does: while the
// previous transaction completes (its marker delayed by a fault rule) both
// are answered CONCURRENT_TRANSACTIONS after one 100 ms wait, not one
// after 100 ms and the other after 200 ms.
func TestTxnProduceAddsRequestPartitionsTogether(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := txnCluster(t, Config{Clock: clk})
	if err := c.CreateTopic("two", 6, 3, nil); err != nil {
		t.Fatal(err)
	}
	byLeader := map[int32][]int32{}
	var leader int32 = -1
	for p := range int32(6) {
		ps, _ := c.Partition("two", p)
		byLeader[ps.Leader] = append(byLeader[ps.Leader], p)
		if len(byLeader[ps.Leader]) == 2 {
			leader = ps.Leader
			break
		}
	}
	if leader < 0 {
		t.Fatalf("no two partitions share a leader: %v", byLeader)
	}
	parts := byLeader[leader]
	if _, err := c.InjectFault(Fault{API: "WriteTxnMarkers", Topic: "two", Delay: time.Second, Count: 1}); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("two"), 60000
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, ir)
	}
	produce := func(epoch int16, parts ...int32) []int16 {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, kmsg.StringPtr("two")
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "two"
		for _, p := range parts {
			b, err := protocol.BuildBatch(protocol.BatchHeader{Attributes: protocol.AttrTransactional, ProducerID: ir.ProducerID, ProducerEpoch: epoch},
				protocol.CodecNone, []protocol.Record{{Value: []byte("v")}})
			if err != nil {
				t.Error(err)
				return nil
			}
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = p, b
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		kresp, err := cl.Broker(int(leader)).Request(ctx, byTopicID(c, req))
		if err != nil {
			t.Error(err)
			return nil
		}
		var codes []int16
		for _, sp := range kresp.(*kmsg.ProduceResponse).Topics[0].Partitions {
			codes = append(codes, sp.ErrorCode)
		}
		return codes
	}
	if codes := produce(ir.ProducerEpoch, parts[0]); len(codes) != 1 || codes[0] != 0 {
		t.Fatalf("first transaction's batch: %v", codes)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "two", ir.ProducerID, ir.ProducerEpoch, true
	er, err := end.RequestWith(ctx, cl)
	if err != nil || er.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v %v", err, er)
	}
	start := clk.Now()
	codes, at := answerAfterRetryDeadline(t, c, func() []int16 { return produce(er.ProducerEpoch, parts...) })
	r := struct {
		codes []int16
		at    time.Time
	}{codes, at}
	ct := kerr.ConcurrentTransactions.Code
	if len(r.codes) != 2 || r.codes[0] != ct || r.codes[1] != ct {
		t.Fatalf("answers %v, want CONCURRENT_TRANSACTIONS for both partitions", r.codes)
	}
	if waited := r.at.Sub(start); waited != addPartitionsToTxnRetryBackoffMax {
		t.Fatalf("answered after %v of the cluster's clock, want one 100 ms wait for both partitions", waited)
	}
}

// TestTxnMarkerErrorsRetried: marker requests failed by fault rules on
// WriteTxnMarkers (NOT_LEADER_OR_FOLLOWER for one partition, a dropped
// connection, an error after the markers were written) are retried by the
// coordinator as Kafka's marker channel retries them: every transaction
// of a franz-go producer commits and read_committed sees each record once.
func TestTxnMarkerErrorsRetried(t *testing.T) {
	c := txnCluster(t, Config{Timing: TimingKafka})
	if err := c.CreateTopic("mret", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	var rules []*FaultRule
	for _, f := range []Fault{
		{API: "WriteTxnMarkers", Topic: "mret", Partition: &one, Error: "NOT_LEADER_OR_FOLLOWER", Count: 2},
		{API: "WriteTxnMarkers", Topic: "mret", DropConnection: true, Count: 1},
		{API: "WriteTxnMarkers", Topic: "mret", Error: "NOT_LEADER_OR_FOLLOWER", AfterWork: true, Count: 1},
	} {
		r, err := c.InjectFault(f)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	cl := newClient(t, c, kgo.TransactionalID("mret-txn"), kgo.DefaultProduceTopic("mret"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(50*time.Millisecond))
	ctx := testContext(t)
	const txns = 3
	for i := range txns {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for part := range int32(3) {
			cl.Produce(ctx, &kgo.Record{Partition: part, Value: fmt.Appendf(nil, "%d-%d", i, part)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rules {
		if err := r.WaitHits(ctx, r.State().Count); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the last commit to complete", func() bool {
		ts := c.Transactions()
		return len(ts) == 1 && ts[0].State == "CompleteCommit"
	})
	recs := consumeValues(t, c, "mret", true, func(rs []*kgo.Record) bool { return len(rs) >= txns*3 })
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[string(r.Value)] {
			t.Fatalf("record %s read twice", r.Value)
		}
		seen[string(r.Value)] = true
	}
	if len(seen) != txns*3 {
		t.Fatalf("read_committed %d records, want %d", len(seen), txns*3)
	}
}

// TestWriteTxnMarkersWireFault: on a WriteTxnMarkers request sent on the
// wire, a fault rule's error lands on the partitions in its scope, whose
// markers are not written, and the rest are served.
func TestWriteTxnMarkersWireFault(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("wm", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	p0, _ := c.Partition("wm", 0)
	p1, _ := c.Partition("wm", 1)
	if p0.Leader != p1.Leader {
		if err := c.CreateTopic("wm2", 4, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Two partitions of one leader.
	topic, parts, leader := "wm", []int32{0, 1}, p0.Leader
	if p0.Leader != p1.Leader {
		byLeader := map[int32][]int32{}
		for p := range int32(4) {
			ps, _ := c.Partition("wm2", p)
			byLeader[ps.Leader] = append(byLeader[ps.Leader], p)
			if len(byLeader[ps.Leader]) == 2 {
				topic, parts, leader = "wm2", byLeader[ps.Leader], ps.Leader
				break
			}
		}
	}
	failed := parts[1]
	if _, err := c.InjectFault(Fault{API: "WriteTxnMarkers", Topic: topic, Partition: &failed, Error: "NOT_LEADER_OR_FOLLOWER"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed = 1000, 0, false
	rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	rt.Topic, rt.Partitions = topic, parts
	m.Topics = append(m.Topics, rt)
	req.Markers = append(req.Markers, m)
	kresp, err := cl.Broker(int(leader)).Request(testContext(t), req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]int16{}
	for _, rm := range kresp.(*kmsg.WriteTxnMarkersResponse).Markers {
		for _, t := range rm.Topics {
			for _, p := range t.Partitions {
				got[p.Partition] = p.ErrorCode
			}
		}
	}
	if len(got) != 2 || got[parts[0]] != 0 || got[failed] != kerr.NotLeaderForPartition.Code {
		t.Fatalf("answers %v, want NONE for %d and NOT_LEADER_OR_FOLLOWER for %d", got, parts[0], failed)
	}
	for _, p := range parts {
		ps, _ := c.Partition(topic, p)
		want := int64(1)
		if p == failed {
			want = 0 // not written
		}
		if end := ps.Replicas[0].LogEndOffset; end != want {
			t.Fatalf("partition %d: log end offset %d, want %d", p, end, want)
		}
	}
}
