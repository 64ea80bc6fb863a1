package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// txnStory is the events of transactional id after since, in brief.
func txnStory(c *Cluster, since uint64, id string) []string {
	var out []string
	for _, e := range c.Events(since) {
		if e.TransactionalID == id {
			out = append(out, txnLine(e))
		}
	}
	return out
}

func checkTxnStory(t *testing.T, c *Cluster, since uint64, id string, want ...string) {
	t.Helper()
	if got := txnStory(c, since, id); !slices.Equal(got, want) {
		t.Errorf("events of %s:\n got %s\nwant %s", id, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestTxnEventsCommitAndAbort: a franz-go transactional producer commits
// then aborts; every transition, partition added and marker written is an
// event, in order, under both transaction versions (version 2 bumps the
// epoch at every EndTxn).
func TestTxnEventsCommitAndAbort(t *testing.T) {
	for _, tv := range []int{1, 2} {
		t.Run(fmt.Sprintf("transaction.version=%d", tv), func(t *testing.T) {
			c := txnCluster(t, Config{TransactionVersion: tv})
			scMust(t, c.CreateTopic("t", 1, 3, nil))
			p := newClient(t, c, kgo.TransactionalID("tx-ev"), kgo.DefaultProduceTopic("t"), kgo.RequiredAcks(kgo.AllISRAcks()))
			// franz-go moves to version 2 (with an InitProducerId) once
			// it has seen the feature in the brokers' ApiVersions: two
			// transactions first, so the story below is one version's.
			if _, err := kadm.NewClient(p).ApiVersions(testContext(t)); err != nil {
				t.Fatal(err)
			}
			runTxn(t, p, true, "w1")
			runTxn(t, p, true, "w2")
			waitEvents(t, c, TxnCommitted("tx-ev"), 2)
			since := evLastSeq(c)
			runTxn(t, p, true, "c1", "c2")
			ctx := testContext(t)
			if _, err := c.WaitFor(ctx, TxnCommitted("tx-ev")); err != nil {
				t.Fatal(err)
			}
			runTxn(t, p, false, "a1")
			e, err := c.WaitFor(ctx, func(e Event) bool { return e.Seq > since && TxnCompleted("tx-ev")(e) })
			if err != nil || e.State != "CompleteCommit" {
				t.Fatalf("first completion %+v, %v; want the commit", e, err)
			}
			e, err = c.WaitFor(ctx, TxnAborted("tx-ev"))
			if err != nil {
				t.Fatal(err)
			}
			if e.ProducerID < 0 || len(e.Partitions) != 1 || e.Partitions[0].Topic != "t" {
				t.Fatalf("abort event %+v: want the producer id and the partition t/0", e)
			}
			// Offsets: w1 0, commit 1, w2 2, commit 3, c1 c2 4-5,
			// commit 6, a1 7, abort 8: the LSO follows.
			if _, err := c.WaitFor(ctx, LSOAdvanced("t", 0, 9)); err != nil {
				t.Fatal(err)
			}
			if tv == 1 {
				checkTxnStory(t, c, since, "tx-ev",
					"txn_state_changed CompleteCommit->Ongoing t/0 epoch 0 (AddPartitionsToTxn)",
					"txn_partitions_added ->Ongoing t/0 epoch 0 (AddPartitionsToTxn)",
					"txn_state_changed Ongoing->PrepareCommit t/0 epoch 0 (EndTxn)",
					"txn_marker_written ->COMMIT t/0 epoch 0",
					"txn_state_changed PrepareCommit->CompleteCommit t/0 epoch 0 (markers written)",
					"txn_state_changed CompleteCommit->Ongoing t/0 epoch 0 (AddPartitionsToTxn)",
					"txn_partitions_added ->Ongoing t/0 epoch 0 (AddPartitionsToTxn)",
					"txn_state_changed Ongoing->PrepareAbort t/0 epoch 0 (EndTxn)",
					"txn_marker_written ->ABORT t/0 epoch 0",
					"txn_state_changed PrepareAbort->CompleteAbort t/0 epoch 0 (markers written)",
				)
				return
			}
			// Version 2: the partition leader adds the partition for the
			// producer, and each EndTxn bumps the epoch (markers carry
			// the new one).
			e, _ = c.WaitFor(ctx, func(e Event) bool { return e.Seq > since && e.TransactionalID == "tx-ev" })
			n := e.ProducerEpoch // the epoch the story starts at
			line := func(f string) string {
				return strings.NewReplacer("N+1", fmt.Sprint(n+1), "N", fmt.Sprint(n)).Replace(f)
			}
			var want []string
			for _, f := range []string{
				"txn_state_changed CompleteCommit->Ongoing t/0 epoch N (implicit add)",
				"txn_partitions_added ->Ongoing t/0 epoch N (implicit add)",
				"txn_epoch_bumped epoch N+1 (EndTxn)",
				"txn_state_changed Ongoing->PrepareCommit t/0 epoch N+1 (EndTxn)",
				"txn_marker_written ->COMMIT t/0 epoch N+1",
				"txn_state_changed PrepareCommit->CompleteCommit t/0 epoch N+1 (markers written)",
			} {
				want = append(want, line(f))
			}
			n++
			for _, f := range []string{
				"txn_state_changed CompleteCommit->Ongoing t/0 epoch N (implicit add)",
				"txn_partitions_added ->Ongoing t/0 epoch N (implicit add)",
				"txn_epoch_bumped epoch N+1 (EndTxn)",
				"txn_state_changed Ongoing->PrepareAbort t/0 epoch N+1 (EndTxn)",
				"txn_marker_written ->ABORT t/0 epoch N+1",
				"txn_state_changed PrepareAbort->CompleteAbort t/0 epoch N+1 (markers written)",
			} {
				want = append(want, line(f))
			}
			checkTxnStory(t, c, since, "tx-ev", want...)
		})
	}
}

// waitEvents waits until n events match.
func waitEvents(t *testing.T, c *Cluster, match EventMatcher, n int) {
	t.Helper()
	ctx := testContext(t)
	var since uint64
	for seen := 0; seen < n; {
		e, err := c.WaitFor(ctx, func(e Event) bool { return e.Seq > since && match(e) })
		if err != nil {
			t.Fatalf("%d of %d events: %v", seen, n, err)
		}
		since = e.Seq
		seen++
	}
}

// TestTxnEventsTimeout: the coordinator aborts a transaction left open
// past its timeout, on the cluster's clock. The client is capped at
// Kafka 3.9's versions so the transaction version 1 path (an explicit
// AddPartitionsToTxn) keeps its own coverage.
func TestTxnEventsTimeout(t *testing.T) {
	c := txnCluster(t, Config{TransactionAbortTimedOutInterval: 20 * time.Millisecond})
	scMust(t, c.CreateTopic("h", 1, 3, nil))
	ctx := testContext(t)
	hang := newClient(t, c, kgo.TransactionalID("hang"), kgo.DefaultProduceTopic("h"), kgo.TransactionTimeout(300*time.Millisecond), kgo.MaxVersions(kversion.V3_9_0()))
	scMust(t, hang.BeginTransaction())
	since := evLastSeq(c)
	scMust(t, hang.ProduceSync(ctx, &kgo.Record{Value: []byte("hung")}).FirstErr())
	e, err := c.WaitFor(ctx, TxnTimedOut("hang"))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Partitions) != 1 || e.Partitions[0].Topic != "h" || e.Detail == "" {
		t.Fatalf("timeout event %+v: want the open partition h/0 and the timeout", e)
	}
	if _, err := c.WaitFor(ctx, TxnAborted("hang")); err != nil {
		t.Fatal(err)
	}
	checkTxnStory(t, c, since, "hang",
		"txn_state_changed Empty->Ongoing h/0 epoch 0 (AddPartitionsToTxn)",
		"txn_partitions_added ->Ongoing h/0 epoch 0 (AddPartitionsToTxn)",
		"txn_timed_out h/0 epoch 1 (timeout)",
		"txn_epoch_bumped epoch 1 (timeout)",
		"txn_state_changed Ongoing->PrepareAbort h/0 epoch 1 (timeout)",
		"txn_marker_written ->ABORT h/0 epoch 1",
		"txn_state_changed PrepareAbort->CompleteAbort h/0 epoch 1 (markers written)",
	)
	if _, err := c.WaitFor(ctx, ProducerFenced("hang")); err != nil {
		t.Fatal(err)
	}
}

// TestTxnEventsHeldMarkerKeepsLSO: while a marker is held the LSO of that
// partition stays at the transaction's first offset; once released,
// lso_advanced reports the jump, which hw_advanced alone would not show.
func TestTxnEventsHeldMarkerKeepsLSO(t *testing.T) {
	c := txnCluster(t, Config{})
	scMust(t, c.CreateTopic("m", 1, 3, nil))
	scMust(t, c.HoldTransactionMarkers("m", 0))
	ctx := testContext(t)
	p := newClient(t, c, kgo.TransactionalID("held"), kgo.DefaultProduceTopic("m"))
	runTxn(t, p, true, "a", "b")
	if _, err := c.WaitFor(ctx, TxnStateChanged("held", "PrepareCommit")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "HW 2", func() bool {
		ps, _ := c.Partition("m", 0)
		return ps.HighWatermark == 2
	})
	since := evLastSeq(c)
	c.ReleaseTransactionMarkers("m", 0)
	e, err := c.WaitFor(ctx, LSOAdvanced("m", 0, 3))
	if err != nil {
		t.Fatal(err)
	}
	if e.From != 0 || e.To != 3 {
		t.Fatalf("lso_advanced %d->%d, want 0->3 (past the marker)", e.From, e.To)
	}
	if _, err := c.WaitFor(ctx, TxnMarkerWritten("held", "m", 0)); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Events(0) {
		if e.Type == EventLSOAdvanced && e.Seq <= since {
			t.Errorf("lso_advanced before the marker: %+v", e)
		}
	}
}

// TestTxnEventsExpiry: an idle transactional id is removed once
// transactional.id.expiration.ms passes on the cluster's clock, and the
// removal is an event.
func TestTxnEventsExpiry(t *testing.T) {
	c := manualCluster(t, Config{TransactionStatePartitions: 3, TransactionalIDExpiration: time.Hour,
		TransactionAbortTimedOutInterval: 10 * time.Second})
	scMust(t, c.CreateTopic("x", 1, 3, nil))
	p := newClient(t, c, kgo.TransactionalID("idle"), kgo.DefaultProduceTopic("x"))
	runTxn(t, p, true, "once")
	ctx := testContext(t)
	committed, err := c.WaitFor(ctx, TxnCommitted("idle"))
	if err != nil {
		t.Fatal(err)
	}
	c.AdvanceClock(59 * time.Minute)
	if ts := c.Transactions(); len(ts) != 1 {
		t.Fatalf("transactions after 59 min idle: %+v, want idle still there", ts)
	}
	for _, e := range c.Events(0) {
		if e.Type == EventTxnExpired {
			t.Fatalf("expired before its time: %+v", e)
		}
	}
	c.AdvanceClock(time.Minute + 10*time.Second) // past the hour, and the next check
	e, err := c.WaitFor(ctx, TxnExpired("idle"))
	if err != nil {
		t.Fatal(err)
	}
	if e.PreviousState != "CompleteCommit" || e.State != "Dead" || e.ProducerID < 0 {
		t.Fatalf("txn_expired %+v, want CompleteCommit -> Dead with the producer id", e)
	}
	if idle := e.Time.Sub(committed.Time); idle < time.Hour {
		t.Fatalf("expired after %v idle, want at least an hour", idle)
	}
	if ts := c.Transactions(); len(ts) != 0 {
		t.Fatalf("transactions after expiry: %+v, want none", ts)
	}
}
