package matrix

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// scTxnOffsetsFencing is the producer's half of consume-transform-produce.
// The client's transactional producer writes to "out" and sends offsets of
// "in" for a group in each transaction: the first commits (offset 2), the
// second aborts (3), and while the third (4) is open a second producer with
// the same transactional id (franz-go) initialises and commits one record,
// which fences the client's: its commit must fail. The group's committed
// offset must then be the first transaction's only, and a read_committed
// reader must see the first transaction's records and the fencer's.
func scTxnOffsetsFencing(r *cell, cl Client) {
	c := server.NewTestCluster(r, server.Config{TransactionStatePartitions: 3})
	must(r, c.CreateTopic("in", 1, 3, nil))
	must(r, c.CreateTopic("out", 1, 3, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	group, id := "matrix-ctp-"+cl.Name(), "matrix-fenced-"+cl.Name()
	tc := TxnConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "txn-offsets-fencing"), TransactionalID: id, Topic: "out"}
	rec := func(v string) []Record { return []Record{{Key: v, Value: v}} }
	at := func(o int64) *TxnOffsets { return &TxnOffsets{Group: group, Topic: "in", Partition: 0, Offset: o} }
	var fenceErr error
	fence := func() error {
		fc := tc
		fc.ClientID += "-fencer"
		fenceErr = FranzGo{}.Transact(ctx, fc, []Txn{{Records: rec("f1"), Commit: true}})
		return fenceErr
	}
	txns := []Txn{
		{Records: append(rec("o1"), rec("o2")...), Offsets: at(2), Commit: true},
		{Records: rec("o3"), Offsets: at(3)},
		{Records: rec("o4"), Offsets: at(4), Commit: true, BeforeEnd: fence},
	}
	err := cl.Transact(ctx, tc, txns)
	if ns, ok := IsNotSupported(err); ok {
		r.notSupported(ns.Reason)
	}
	noProtocolError(r, err)
	switch {
	case fenceErr != nil:
		r.Fatalf("the fencing producer: %v", fenceErr)
	case err == nil:
		r.Fatalf("the fenced producer's commit succeeded")
	}
	var ae *AdapterError
	if _, adapter := cl.(Process); adapter && !errors.As(err, &ae) {
		r.Fatalf("the fenced producer's adapter failed: %v", err) // not an error its client reported
	}
	fenced := cl.Describe(err)

	// o1 0, o2 1, commit 2, o3 3, abort 4, o4 5, abort (the fence) 6, f1 7, commit 8.
	s, err := FranzGo{}.Consume(ctx, ConsumerConfig{Bootstrap: c.Bootstrap(), ClientID: tc.ClientID + "-reader", Topic: "out", ReadCommitted: true})
	r.check(err, "read_committed reader")
	got, _ := readN(r, s, 3, 15*time.Second)
	s.Close()
	want := []Record{{Key: "o1", Value: "o1", Offset: 0}, {Key: "o2", Value: "o2", Offset: 1}, {Key: "f1", Value: "f1", Offset: 7}}
	for i, g := range got {
		if g.Value != want[i].Value || g.Offset != want[i].Offset {
			r.Fatalf("read_committed record %d is %q at %d, want %q at %d", i, g.Value, g.Offset, want[i].Value, want[i].Offset)
		}
	}
	if o := committedOffset(r, c, group); o != 2 {
		r.Fatalf("group %s committed offset %d for in/0, want 2 (the committed transaction's; the aborted and the fenced ones' dropped)", group, o)
	}
	how := ""
	if _, ok := cl.(FranzGo); ok {
		how = " (offsets by raw AddOffsetsToTxn/TxnOffsetCommit: franz-go's API sends them only from a GroupTransactSession, a group member)"
	}
	r.pass("offsets committed with the transaction only; fenced by a new producer of its id: %s%s", fenced, how)
}

// committedOffset is the group's stable committed offset of in/0, -1 for
// none, waiting while transactional offsets are pending.
func committedOffset(r *cell, c *server.Cluster, group string) int64 {
	cl, err := kgo.NewClient(kgoBase(c.Bootstrap(), "matrix-offsets")...)
	must(r, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var out int64 = -1
	var last error
	ok := waitUntil(10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resps, err := adm.FetchOffsets(kadm.RequireStable(ctx), group)
		if err == nil {
			err = resps.Error()
		}
		if last = err; err != nil {
			return false
		}
		if o, ok := resps.Lookup("in", 0); ok {
			out = o.At
		}
		return true
	})
	if !ok {
		r.Fatalf("fetching group %s's offsets: %v", group, fmt.Sprint(last))
	}
	return out
}

// txnVersion names the transaction version the producer of id ran, as
// its coordinator recorded it: 2 is KIP-890's (one epoch bump per
// transaction, no AddPartitionsToTxn), 1 the classic protocol.
func txnVersion(c *server.Cluster, id string) string {
	for _, t := range c.Transactions() {
		if t.TransactionalID == id {
			return fmt.Sprintf(", transaction version %d", t.TransactionVersion)
		}
	}
	return ""
}
