package server

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestTxnDescribeAndList: DescribeTransactions and ListTransactions (with
// filters) through kadm while one transaction is open and one completed.
func TestTxnDescribeAndList(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("d", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	done := newClient(t, c, kgo.TransactionalID("done"), kgo.DefaultProduceTopic("d"))
	runTxn(t, done, true, "x")
	waitTxnComplete(t, c, "done")
	open := newClient(t, c, kgo.TransactionalID("open"), kgo.DefaultProduceTopic("d"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := open.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := open.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, c))
	ds, err := adm.DescribeTransactions(ctx, "open", "done", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	o := ds["open"]
	if o.Err != nil || o.State != "Ongoing" || o.ProducerEpoch < 0 || o.StartTimestamp <= 0 || !slices.Equal(o.Topics.Sorted()[0].Partitions, []int32{1}) {
		t.Fatalf("open: %+v", o)
	}
	if d := ds["done"]; d.Err != nil || d.State != "CompleteCommit" || len(d.Topics) != 0 {
		t.Fatalf("done: %+v", d)
	}
	if n := ds["nobody"]; !errors.Is(n.Err, kerr.TransactionalIDNotFound) {
		t.Fatalf("unknown id: %v", n.Err)
	}
	ls, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ls.TransactionalIDs(); !slices.Equal(got, []string{"done", "open"}) {
		t.Fatalf("listed %v", got)
	}
	ls, err = adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ls.TransactionalIDs(); !slices.Equal(got, []string{"open"}) || ls["open"].ProducerID != o.ProducerID {
		t.Fatalf("listed Ongoing: %v", ls)
	}
	ls, err = adm.ListTransactions(ctx, []int64{ds["done"].ProducerID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ls.TransactionalIDs(); !slices.Equal(got, []string{"done"}) {
		t.Fatalf("listed by producer id: %v", got)
	}
	// The same through the control surface.
	ts := c.Transactions()
	if len(ts) != 2 || ts[1].TransactionalID != "open" || ts[1].State != "Ongoing" || ts[1].Partitions[0].Topic != "d" {
		t.Fatalf("Transactions(): %+v", ts)
	}
}

// TestTxnOffsetsPendingUntilMarker: offsets committed in a transaction are
// pending until the marker reaches __consumer_offsets: OffsetFetch with
// require_stable answers UNSTABLE_OFFSET_COMMIT, without it the old offset.
func TestTxnOffsetsPendingUntilMarker(t *testing.T) {
	c := txnCluster(t, Config{OffsetsTopicPartitions: 1})
	if err := c.CreateTopic("src", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c, kgo.TransactionalID("offs"), kgo.DefaultProduceTopic("src"))
	adm := kadm.NewClient(cl)
	// Make __consumer_offsets exist, then hold markers to it.
	if _, err := adm.FetchOffsets(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if err := c.HoldTransactionMarkers("__consumer_offsets", 0); err != nil {
		t.Fatal(err)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("r")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A transactional offset commit as GroupTransactSession sends it: the
	// group's partition joins the transaction first.
	init := describeTxn(t, adm, "offs")
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = "offs", init.ProducerID, init.ProducerEpoch, "g"
	if resp, err := add.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %v", err, resp)
	}
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = "offs", "g", init.ProducerID, init.ProducerEpoch
	commit.Generation = -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "src"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 1
	rt.Partitions = append(rt.Partitions, rp)
	commit.Topics = append(commit.Topics, rt)
	resp, err := withTopicIDs(c, commit).RequestWith(ctx, cl)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("TxnOffsetCommit: %v %+v", err, resp)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	fetch := func(stable bool) (int64, int16) {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group, req.RequireStable = "g", stable
		ft := kmsg.NewOffsetFetchRequestTopic()
		ft.Topic, ft.Partitions = "src", []int32{0}
		req.Topics = append(req.Topics, ft)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Groups) > 0 {
			p := resp.Groups[0].Topics[0].Partitions[0]
			return p.Offset, p.ErrorCode
		}
		p := resp.Topics[0].Partitions[0]
		return p.Offset, p.ErrorCode
	}
	if off, code := fetch(true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("require_stable while pending: offset %d %v, want UNSTABLE_OFFSET_COMMIT", off, kerr.ErrorForCode(code))
	}
	if off, code := fetch(false); code != 0 || off != -1 {
		t.Fatalf("without require_stable while pending: offset %d %v, want -1", off, kerr.ErrorForCode(code))
	}
	c.ReleaseTransactionMarkers("__consumer_offsets", 0)
	waitFor(t, 5*time.Second, "the committed offset", func() bool {
		off, code := fetch(true)
		return code == 0 && off == 1
	})
}

func describeTxn(t *testing.T, adm *kadm.Client, id string) kadm.DescribedTransaction {
	t.Helper()
	ds, err := adm.DescribeTransactions(testContext(t), id)
	if err != nil || ds[id].Err != nil {
		t.Fatalf("describe %s: %v %v", id, err, ds[id].Err)
	}
	return ds[id]
}

// TestTxnRetriesAndInjectedErrors: fault rules by API name work for the
// transaction APIs, and the client's retries after a dropped connection
// (the work done, the answer lost) or injected retriable errors end in
// exactly one committed copy.
func TestTxnRetriesAndInjectedErrors(t *testing.T) {
	// Version 1, so that the client sends AddPartitionsToTxn.
	c := txnCluster(t, Config{TransactionVersion: 1})
	if err := c.CreateTopic("r", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	rules := []Fault{
		// (A connection dropped at its first request looks like missing
		// SASL to franz-go, so InitProducerID gets errors instead.)
		{API: "InitProducerID", Error: "COORDINATOR_LOAD_IN_PROGRESS", Count: 1},
		{API: "InitProducerID", Error: "CONCURRENT_TRANSACTIONS", AfterWork: true, Count: 1},
		{API: "AddPartitionsToTxn", Error: "CONCURRENT_TRANSACTIONS", Count: 2, AfterWork: true},
		{API: "AddPartitionsToTxn", DropConnection: true, AfterWork: true, Count: 1},
		{API: "EndTxn", Error: "COORDINATOR_LOAD_IN_PROGRESS", Count: 1},
		{API: "EndTxn", DropConnection: true, AfterWork: true, Count: 1},
	}
	for _, f := range rules {
		if _, err := c.InjectFault(f); err != nil {
			t.Fatal(err)
		}
	}
	p := newClient(t, c, kgo.TransactionalID("retry"), kgo.DefaultProduceTopic("r"))
	runTxn(t, p, true, "once")
	runTxn(t, p, true, "twice")
	for _, fs := range c.Faults() {
		if fs.Hits == 0 {
			t.Errorf("fault %+v never fired", fs)
		}
	}
	got := consumeValues(t, c, "r", true, func(rs []*kgo.Record) bool { return len(rs) >= 2 })
	if !slices.Equal(values(got), []string{"once", "twice"}) {
		t.Fatalf("read_committed: %v", values(got))
	}

	// An injected PRODUCER_FENCED is fatal to the producer, as Kafka's is.
	if _, err := c.InjectFault(Fault{API: "EndTxn", Error: "PRODUCER_FENCED", Count: 1}); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("fenced")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p.EndTransaction(ctx, kgo.TryCommit); !errors.Is(err, kerr.ProducerFenced) {
		t.Fatalf("EndTxn with PRODUCER_FENCED injected: %v", err)
	}
}

// TestTxnVersionsSideBySide: a client on transaction version 2 and one held
// to version 1 (EndTxn v4, Produce v11) share a cluster and a partition.
func TestTxnVersionsSideBySide(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("v", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	// An older client: Kafka 3.6's versions predate KIP-890's EndTxn v5.
	v1 := newClient(t, c, kgo.TransactionalID("tv1"), kgo.DefaultProduceTopic("v"), kgo.MaxVersions(kversion.V3_6_0()))
	v2 := newClient(t, c, kgo.TransactionalID("tv2"), kgo.DefaultProduceTopic("v"))
	// franz-go opts into version 2 once it has seen the feature in a
	// broker's ApiVersions; let it meet every broker first.
	if _, err := kadm.NewClient(v2).ApiVersions(testContext(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		runTxn(t, v1, i != 1, "one")
		runTxn(t, v2, i != 2, "two")
	}
	got := consumeValues(t, c, "v", true, func(rs []*kgo.Record) bool { return len(rs) >= 4 })
	if !slices.Equal(values(got), []string{"one", "two", "two", "one"}) {
		t.Fatalf("read_committed: %v", values(got))
	}
	byID := map[string]TransactionState{}
	for _, ts := range c.Transactions() {
		byID[ts.TransactionalID] = ts
	}
	if byID["tv1"].TransactionVersion != 1 || byID["tv1"].ProducerEpoch != 0 {
		t.Fatalf("tv1: %+v, want version 1 at epoch 0", byID["tv1"])
	}
	if byID["tv2"].TransactionVersion != 2 || byID["tv2"].ProducerEpoch < 3 {
		t.Fatalf("tv2: %+v, want version 2 bumped by every EndTxn", byID["tv2"])
	}
}
