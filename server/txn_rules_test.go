package server

import (
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceRaw sends one hand-built batch to pr/0 on its leader.
func produceRaw(t *testing.T, c *Cluster, cl *kgo.Client, txnID *string, batch []byte) int16 {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "pr"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ps, _ := c.Partition("pr", 0)
	kresp, err := cl.Broker(int(ps.Leader)).Request(testContext(t), byTopicID(c, req))
	if err != nil {
		t.Fatal(err)
	}
	return kresp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

// TestTxnProduceRules: what a partition leader refuses around transactions.
func TestTxnProduceRules(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("pr", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("rules"), 60000
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, ir)
	}
	pid, epoch := ir.ProducerID, ir.ProducerEpoch
	batch := func(attrs int16, seq int32) []byte {
		b, err := protocol.BuildBatch(protocol.BatchHeader{Attributes: attrs, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq},
			protocol.CodecNone, []protocol.Record{{Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	id := kmsg.StringPtr("rules")

	// A client may not write markers.
	if code := produceRaw(t, c, cl, id, protocol.BuildControlBatch(pid, epoch, true, 0, 0)); code != kerr.InvalidRecord.Code {
		t.Fatalf("control batch from a client: %v, want INVALID_RECORD", kerr.ErrorForCode(code))
	}
	// Under transaction.version 2 a Produce v12 adds the partition to the
	// transaction implicitly (TestTxnProduceNotAddedV1 covers version 1).
	if code := produceRaw(t, c, cl, id, batch(protocol.AttrTransactional, 0)); code != 0 {
		t.Fatalf("transactional batch (implicit add): %v", kerr.ErrorForCode(code))
	}
	// An idempotent batch from the same producer while its transaction is
	// open.
	if code := produceRaw(t, c, cl, nil, batch(0, 1)); code != kerr.InvalidTxnState.Code {
		t.Fatalf("non-transactional batch in a transaction: %v, want INVALID_TXN_STATE", kerr.ErrorForCode(code))
	}
	// A marker from an older coordinator epoch than the partition has seen.
	ps, _ := c.Partition("pr", 0)
	marker := kmsg.NewPtrWriteTxnMarkersRequest()
	marker.Version = 1 // v0 removed in Kafka 4.0 (KIP-896)
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, false, 5
	m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "pr", Partitions: []int32{0}}}
	marker.Markers = append(marker.Markers, m)
	if r := callHandler[*kmsg.WriteTxnMarkersResponse](t, c, ps.Leader, marker); r.Markers[0].Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("WriteTxnMarkers: %v", kerr.ErrorForCode(r.Markers[0].Topics[0].Partitions[0].ErrorCode))
	}
	marker.Markers[0].CoordinatorEpoch = 4
	if r := callHandler[*kmsg.WriteTxnMarkersResponse](t, c, ps.Leader, marker); r.Markers[0].Topics[0].Partitions[0].ErrorCode != kerr.TransactionCoordinatorFenced.Code {
		t.Fatalf("WriteTxnMarkers from an older coordinator: %v", kerr.ErrorForCode(r.Markers[0].Topics[0].Partitions[0].ErrorCode))
	}
	if r := callHandler[*kmsg.WriteTxnMarkersResponse](t, c, ps.Leader%3+1, marker); r.Markers[0].Topics[0].Partitions[0].ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("WriteTxnMarkers to a follower: %v", kerr.ErrorForCode(r.Markers[0].Topics[0].Partitions[0].ErrorCode))
	}
	if ps, _ := c.Partition("pr", 0); ps.LastStableOffset != ps.HighWatermark {
		t.Fatalf("after the abort marker: LSO %d HW %d", ps.LastStableOffset, ps.HighWatermark)
	}
}

// TestTxnProduceNotAddedV1: under transaction version 1 a transactional
// batch to a partition not in the transaction is refused (KIP-890 part 1).
func TestTxnProduceNotAddedV1(t *testing.T) {
	c := txnCluster(t, Config{TransactionVersion: 1})
	if err := c.CreateTopic("pr", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("v1"), 60000
	ir, err := init.RequestWith(testContext(t), cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %v", err, ir)
	}
	b, _ := protocol.BuildBatch(protocol.BatchHeader{Attributes: protocol.AttrTransactional, ProducerID: ir.ProducerID, ProducerEpoch: ir.ProducerEpoch},
		protocol.CodecNone, []protocol.Record{{Value: []byte("v")}})
	if code := produceRaw(t, c, cl, kmsg.StringPtr("v1"), b); code != kerr.TransactionAbortable.Code {
		t.Fatalf("batch to a partition not added: %v, want TRANSACTION_ABORTABLE (INVALID_TXN_STATE before v11)", kerr.ErrorForCode(code))
	}
}

// TestTxnOffsetCommitMemberChecks: KIP-447's member checks on
// TxnOffsetCommit v3+, and the fencing error by version.
func TestTxnOffsetCommitMemberChecks(t *testing.T) {
	c := txnCluster(t, Config{OffsetsTopicPartitions: 1})
	if err := c.CreateTopic("src", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	coord, code := c.coordinatorOf("g447")
	if code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	commit := func(version int16, member string, generation int32, epoch int16) int16 {
		t.Helper()
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.SetVersion(version)
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "t447", "g447", 7777, epoch
		req.MemberID, req.Generation = member, generation
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "src"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset = 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return callHandler[*kmsg.TxnOffsetCommitResponse](t, c, coord, req).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(3, "ghost", 4, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %v", kerr.ErrorForCode(code))
	}
	if code := commit(3, "", -1, 1); code != 0 {
		t.Fatalf("no member, no generation: %v", kerr.ErrorForCode(code))
	}
	// The producer's epoch is now 1 on the offsets partition: older is fenced.
	if code := commit(3, "", -1, 0); code != kerr.ProducerFenced.Code {
		t.Fatalf("stale epoch, v3: %v, want PRODUCER_FENCED", kerr.ErrorForCode(code))
	}
	if code := commit(2, "", -1, 0); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch, v2: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(code))
	}
}

// TestTxnIDExpiration: an idle transactional id is forgotten after
// transactional.id.expiration.ms; a new InitProducerId starts it afresh.
func TestTxnIDExpiration(t *testing.T) {
	c := txnCluster(t, Config{TransactionalIDExpiration: 200 * time.Millisecond, TransactionAbortTimedOutInterval: 20 * time.Millisecond})
	if err := c.CreateTopic("x", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	p := newClient(t, c, kgo.TransactionalID("expiring"), kgo.DefaultProduceTopic("x"))
	runTxn(t, p, true, "v")
	waitFor(t, 10*time.Second, "the id expired", func() bool { return len(c.Transactions()) == 0 })
	// It stays gone after a coordinator failover (the tombstone is in the log).
	coord, _ := c.txnCoordinatorOf("expiring")
	if err := c.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	if ts := c.Transactions(); len(ts) != 0 {
		t.Fatalf("after failover: %+v", ts)
	}
}

// TestTxnStaleTV2MarkerOnTheWire: a WriteTxnMarkers v2 request naming
// transaction version 2 and the producer's current epoch is a retry of the
// marker that bumped it. While the producer's next transaction is open at
// that epoch the leader refuses it with INVALID_PRODUCER_EPOCH (Kafka 4.x),
// so it cannot commit records the producer then aborts; once no
// transaction is open it is written again.
func TestTxnStaleTV2MarkerOnTheWire(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("tv2", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.TransactionalID("tv2"), kgo.DefaultProduceTopic("tv2"))
	runTxn(t, prod, true, "first")
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("aborted")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ts := c.Transactions()
	if len(ts) != 1 || ts[0].State != "Ongoing" {
		t.Fatalf("transactions: %+v, want one Ongoing", ts)
	}
	ps, _ := c.Partition("tv2", 0)
	stale := func(version int16, txnVersion int8) int16 {
		t.Helper()
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.SetVersion(version)
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed, m.TransactionVersion = ts[0].ProducerID, ts[0].ProducerEpoch, true, txnVersion
		m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "tv2", Partitions: []int32{0}}}
		req.Markers = append(req.Markers, m)
		resp, err := req.RequestWith(ctx, prod.Broker(int(ps.Leader)))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Markers[0].Topics[0].Partitions[0].ErrorCode
	}
	if code := stale(2, 2); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale TV2 commit marker: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(code))
	}
	if err := prod.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	got := consumeValues(t, c, "tv2", true, func(rs []*kgo.Record) bool { return len(rs) >= 1 })
	if !slices.Equal(values(got), []string{"first"}) {
		t.Fatalf("read_committed: %v, want [first]", values(got))
	}
	// The abort bumped the epoch again; a retry of its marker, with no
	// transaction open, is written again.
	waitFor(t, 5*time.Second, "the abort completed", func() bool {
		ts = c.Transactions()
		return len(ts) == 1 && ts[0].State == "CompleteAbort"
	})
	before, _ := c.Partition("tv2", 0)
	if code := stale(2, 2); code != 0 {
		t.Fatalf("retried TV2 marker with no transaction open: %v", kerr.ErrorForCode(code))
	}
	if after, _ := c.Partition("tv2", 0); after.HighWatermark != before.HighWatermark+1 {
		t.Fatalf("HW %d after the retried marker, want %d", after.HighWatermark, before.HighWatermark+1)
	}
}
