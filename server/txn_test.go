package server

import (
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

// TestTxnZombieFenced: a second producer with the same transactional id
// fences the first: its open transaction is aborted, its EndTxn fails with
// PRODUCER_FENCED, and read_committed sees only the new producer's records.
func TestTxnZombieFenced(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("z", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	zombie := newClient(t, c, kgo.TransactionalID("z"), kgo.DefaultProduceTopic("z"))
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, &kgo.Record{Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := newClient(t, c, kgo.TransactionalID("z"), kgo.DefaultProduceTopic("z"))
	runTxn(t, fresh, true, "fresh")

	err := zombie.EndTransaction(ctx, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("zombie commit: %v, want PRODUCER_FENCED", err)
	}
	got := consumeValues(t, c, "z", true, func(rs []*kgo.Record) bool { return len(rs) == 1 })
	if !slices.Equal(values(got), []string{"fresh"}) {
		t.Fatalf("read_committed: %v", values(got))
	}
	all := consumeValues(t, c, "z", false, func(rs []*kgo.Record) bool { return len(rs) == 2 })
	if !slices.Equal(values(all), []string{"zombie", "fresh"}) {
		t.Fatalf("read_uncommitted: %v", values(all))
	}
}

// TestTxnTimeoutAbortsHangingTransaction: a transaction left open past its
// timeout is aborted by the coordinator and the LSO moves past it.
func TestTxnTimeoutAbortsHangingTransaction(t *testing.T) {
	c := txnCluster(t, Config{TransactionAbortTimedOutInterval: 20 * time.Millisecond})
	if err := c.CreateTopic("h", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	hang := newClient(t, c, kgo.TransactionalID("hang"), kgo.DefaultProduceTopic("h"), kgo.TransactionTimeout(300*time.Millisecond))
	if err := hang.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := hang.ProduceSync(ctx, &kgo.Record{Value: []byte("hung")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("h", 0); ps.LastStableOffset != 0 {
		t.Fatalf("LSO %d while the transaction is open, want 0", ps.LastStableOffset)
	}
	waitFor(t, 10*time.Second, "the timed-out transaction aborted", func() bool {
		ps, _ := c.Partition("h", 0)
		ts := c.Transactions()
		return ps.HighWatermark == 2 && ps.LastStableOffset == 2 && len(ts) == 1 && ts[0].State == "CompleteAbort"
	})
	if ts := c.Transactions(); ts[0].ProducerEpoch != 1 {
		t.Fatalf("transactions: %+v, want hang at epoch 1", ts)
	}
	plain := newClient(t, c, kgo.DefaultProduceTopic("h"))
	if err := plain.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := consumeValues(t, c, "h", true, func(rs []*kgo.Record) bool { return len(rs) == 1 })
	if !slices.Equal(values(got), []string{"after"}) {
		t.Fatalf("read_committed: %v", values(got))
	}
	// The producer was fenced by the abort's epoch bump.
	if err := hang.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("commit of the timed-out transaction succeeded")
	}
}

// TestTxnHeldMarkersKeepLSO: a partition whose leader does not get the
// marker keeps its LSO, while the other partition of the transaction moves.
func TestTxnHeldMarkersKeepLSO(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("m", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	p := newClient(t, c, kgo.TransactionalID("held"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := c.HoldTransactionMarkers("m", 1); err != nil {
		t.Fatal(err)
	}
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	err := p.ProduceSync(ctx, &kgo.Record{Topic: "m", Partition: 0, Value: []byte("p0")}, &kgo.Record{Topic: "m", Partition: 1, Value: []byte("p1")}).FirstErr()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "partition 0's marker", func() bool {
		ps, _ := c.Partition("m", 0)
		return ps.LastStableOffset == 2
	})
	if ps, _ := c.Partition("m", 1); ps.LastStableOffset != 0 || ps.HighWatermark != 1 {
		t.Fatalf("held partition: HW %d LSO %d, want 1 and 0", ps.HighWatermark, ps.LastStableOffset)
	}
	if ts := c.Transactions(); len(ts) != 1 || ts[0].State != "PrepareCommit" {
		t.Fatalf("transactions: %+v, want PrepareCommit", ts)
	}
	c.ReleaseTransactionMarkers("m", 1)
	waitFor(t, 5*time.Second, "partition 1's marker", func() bool {
		ps, _ := c.Partition("m", 1)
		ts := c.Transactions()
		return ps.LastStableOffset == 2 && len(ts) == 1 && ts[0].State == "CompleteCommit"
	})
}

// TestTxnFailoverReadCommitted: interleaved committed and aborted
// transactions of two producers, with the partition leader crashing in
// the middle: read_committed sees exactly the committed records in order,
// read_uncommitted all of them.
func TestTxnFailoverReadCommitted(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("f", 1, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	// A short metadata age so the producers find the new leader at once.
	a := newClient(t, c, kgo.TransactionalID("fa"), kgo.DefaultProduceTopic("f"), kgo.MetadataMinAge(10*time.Millisecond))
	b := newClient(t, c, kgo.TransactionalID("fb"), kgo.DefaultProduceTopic("f"), kgo.MetadataMinAge(10*time.Millisecond))
	runTxn(t, a, true, "a1")
	runTxn(t, b, false, "b-aborted1")
	runTxn(t, a, true, "a2")
	ps, _ := c.Partition("f", 0)
	if err := c.StopBroker(ps.Leader, StopCrash); err != nil {
		t.Fatal(err)
	}
	runTxn(t, b, true, "b1")
	runTxn(t, a, false, "a-aborted2")
	runTxn(t, b, true, "b2")
	if err := c.StartBroker(ps.Leader); err != nil {
		t.Fatal(err)
	}

	want := []string{"a1", "a2", "b1", "b2"}
	got := consumeValues(t, c, "f", true, func(rs []*kgo.Record) bool { return len(rs) >= len(want) })
	if !slices.Equal(values(got), want) {
		t.Fatalf("read_committed: %v, want %v", values(got), want)
	}
	all := consumeValues(t, c, "f", false, func(rs []*kgo.Record) bool { return len(rs) >= 6 })
	if !slices.Equal(values(all), []string{"a1", "b-aborted1", "a2", "b1", "a-aborted2", "b2"}) {
		t.Fatalf("read_uncommitted: %v", values(all))
	}
	// Every replica rebuilt the same transaction state from its log: no
	// transaction open anywhere. The log holds six records and six markers,
	// and one more when the coordinator wrote a marker again because the
	// crash lost the answer to the first write (Kafka does the same), so
	// the end is 12 or a little above.
	waitFor(t, 10*time.Second, "replicas caught up", func() bool {
		ps, _ := c.Partition("f", 0)
		for _, r := range ps.Replicas {
			if r.LogEndOffset < 12 || r.LogEndOffset != ps.HighWatermark || r.LastStableOffset != r.LogEndOffset {
				return false
			}
		}
		return true
	})
}

// TestTxnInitProducerIDOnTheWire: the coordinator's epoch rules as a client
// sees them, including the version-dependent fencing error.
func TestTxnInitProducerIDOnTheWire(t *testing.T) {
	c := txnCluster(t, Config{})
	cl := newClient(t, c)
	ctx := testContext(t)
	init := func(version int16, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
		t.Helper()
		req := kmsg.NewPtrInitProducerIDRequest()
		req.SetVersion(version)
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("wire"), 60000
		req.ProducerID, req.ProducerEpoch = pid, epoch
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := init(4, -1, -1)
	if first.ErrorCode != 0 || first.ProducerEpoch != 0 {
		t.Fatalf("first: %+v", first)
	}
	pid := first.ProducerID
	for _, c := range []struct {
		version   int16
		pid       int64
		epoch     int16
		wantCode  int16
		wantEpoch int16
	}{
		{4, pid, 0, 0, 1},                                // bump
		{4, pid, 0, 0, 1},                                // retry of that bump
		{4, -1, -1, 0, 2},                                // no id: plain bump
		{4, pid, 1, kerr.ProducerFenced.Code, -1},        // an old epoch
		{4, pid + 1000, 2, kerr.ProducerFenced.Code, -1}, // another producer id
		{4, pid, 2, 0, 3},
	} {
		r := init(c.version, c.pid, c.epoch)
		if r.ErrorCode != c.wantCode || r.ProducerEpoch != c.wantEpoch || (c.wantCode == 0 && r.ProducerID != pid) {
			t.Fatalf("v%d (%d, %d): %v epoch %d pid %d, want %v epoch %d", c.version, c.pid, c.epoch,
				kerr.ErrorForCode(r.ErrorCode), r.ProducerEpoch, r.ProducerID, kerr.ErrorForCode(c.wantCode), c.wantEpoch)
		}
	}
	// Before v4 a fenced producer gets INVALID_PRODUCER_EPOCH (the client
	// negotiates the newest version, so this goes to the handler).
	coord, _ := c.txnCoordinatorOf("wire")
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(3)
	req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("wire"), 60000
	req.ProducerID, req.ProducerEpoch = pid, 1
	if r := callHandler[*kmsg.InitProducerIDResponse](t, c, coord, req); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("v3 with an old epoch: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(r.ErrorCode))
	}
	// Only the coordinator answers.
	other := coord%3 + 1
	req.SetVersion(4)
	req.ProducerID, req.ProducerEpoch = -1, -1
	if r := callHandler[*kmsg.InitProducerIDResponse](t, c, other, req); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("broker %d (not the coordinator %d): %v", other, coord, kerr.ErrorForCode(r.ErrorCode))
	}
}

// TestTxnNewCoordinatorFinishesPreparedTransaction: a transaction left
// PrepareCommit by a crashed coordinator is finished by the next leader of
// its __transaction_state partition on its own, with no client asking.
func TestTxnNewCoordinatorFinishesPreparedTransaction(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("n", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.HoldTransactionMarkers("n", 0); err != nil {
		t.Fatal(err)
	}
	p := newClient(t, c, kgo.TransactionalID("orphan"), kgo.DefaultProduceTopic("n"))
	runTxn(t, p, true, "v")
	p.Close() // nobody will retry anything
	ts := c.Transactions()
	if len(ts) != 1 || ts[0].State != "PrepareCommit" {
		t.Fatalf("before the crash: %+v", ts)
	}
	old := ts[0].Coordinator
	if err := c.StopBroker(old, StopCrash); err != nil {
		t.Fatal(err)
	}
	c.ReleaseTransactionMarkers("n", 0)
	waitFor(t, 10*time.Second, "the new coordinator to commit", func() bool {
		ps, _ := c.Partition("n", 0)
		ts := c.Transactions()
		return ps.LastStableOffset == ps.HighWatermark && ps.HighWatermark == 2 && len(ts) == 1 && ts[0].State == "CompleteCommit" && ts[0].Coordinator != old
	})
	got := consumeValues(t, c, "n", true, func(rs []*kgo.Record) bool { return len(rs) == 1 })
	if !slices.Equal(values(got), []string{"v"}) {
		t.Fatalf("read_committed: %v", values(got))
	}
}
