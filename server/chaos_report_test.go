package server

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The report's JSON reads back into ChaosReport, so a Go client of the
// HTTP API can use the server's own types.
func TestChaosReportJSONRoundTrip(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("j", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	spec, err := chaos.ParseSpec(`{"seed":4,"duration_ms":60000,"actions":[{"at_ms":0,"kind":"pause","pick":3,"hold_ms":60000},{"at_ms":0,"kind":"latency","api":"Fetch","delay_ms":1,"hold_ms":60000}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(spec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "two actions", func() bool {
		rep, _ := c.ChaosReport()
		return len(rep.Actions) == 2
	})
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back ChaosReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	if len(back.Actions) != 4 || !strings.HasPrefix(back.Actions[0].Target, "j/0 replica ") || back.Actions[0].Target != rep.Actions[0].Target ||
		back.Actions[1].Fault == "" || back.Actions[3].Of != back.Actions[1].Seq || !back.Actions[0].Time.Equal(rep.Actions[0].Time) || back.Seed != 4 {
		t.Fatalf("round trip:\n%+v\n%+v", back.Actions, rep.Actions)
	}
}

// Closing a cluster mid-run ends the runner and the watcher: Close waits
// for them.
func TestChaosCloseMidRun(t *testing.T) {
	c, err := NewCluster(Config{Chaos: &chaos.Spec{Preset: "rough", Seed: 9, Duration: 10 * time.Second, Interval: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(testContext(t), OfType(EventChaosAction)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Close waits for their wg.Done; a goroutine may still be returning
	// from its deferred calls for a moment after that.
	buf := make([]byte, 1<<20)
	var stacks string
	alive := func() string {
		stacks = string(buf[:runtime.Stack(buf, true)])
		for _, f := range []string{"(*Cluster).runChaos", "(*Cluster).watchChaos"} {
			if strings.Contains(stacks, f) {
				return f
			}
		}
		return ""
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive() != "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling a condition, not synchronising
	}
	if f := alive(); f != "" {
		t.Fatalf("%s outlived Close:\n%s", f, stacks)
	}
}

// Group commits are recorded: a client committing a lower offset is
// reported as its own (allowed) rewind.
func TestChaosRecordsGroupCommits(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("gc", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(noSchedule); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	for _, off := range []int64{10, 5} {
		simpleCommit(t, c, cl, "g", "gc", off)
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	want := []chaos.OffsetRewind{{Group: "g", Topic: "gc", Partition: 0, From: 10, To: 5, Allowed: true, Why: "the client committed a lower offset"}}
	if !reflect.DeepEqual(rep.Offsets, want) || len(rep.Violations()) != 0 {
		t.Fatalf("offsets %+v, violations %v", rep.Offsets, rep.Violations())
	}
}

// A transaction's offsets are recorded when its commit marker makes them
// committed, and an aborted transaction's not at all: here a transaction
// commits a lower offset (the client's own, allowed rewind), then one that
// aborts tries a lower one still.
func TestChaosRecordsTxnOffsetCommits(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("gt", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartChaos(noSchedule); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	// Transaction version 1 requests, each sent to its coordinator.
	cl := newClient(t, c, kgo.MaxVersions(kversion.V3_9_0()))
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("gtx"), 60000
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, ir)
	}
	txn := func(off int64, commit bool) {
		t.Helper()
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = "gtx", ir.ProducerID, ir.ProducerEpoch, "g"
		if ar, err := add.RequestWith(ctx, cl); err != nil || ar.ErrorCode != 0 {
			t.Fatalf("AddOffsetsToTxn: %v %+v", err, ar)
		}
		toc := kmsg.NewPtrTxnOffsetCommitRequest()
		toc.TransactionalID, toc.Group, toc.ProducerID, toc.ProducerEpoch, toc.Generation = "gtx", "g", ir.ProducerID, ir.ProducerEpoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "gt"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, off
		rt.Partitions = append(rt.Partitions, rp)
		toc.Topics = append(toc.Topics, rt)
		if tr, err := toc.RequestWith(ctx, cl); err != nil || tr.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("TxnOffsetCommit %d: %v %+v", off, err, tr)
		}
		end := kmsg.NewPtrEndTxnRequest()
		end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "gtx", ir.ProducerID, ir.ProducerEpoch, commit
		if er, err := end.RequestWith(ctx, cl); err != nil || er.ErrorCode != 0 {
			t.Fatalf("EndTxn: %v %+v", err, er)
		}
	}
	simpleCommit(t, c, cl, "g", "gt", 10)
	txn(5, true)
	if _, err := c.WaitFor(ctx, TxnCommitted("gtx")); err != nil {
		t.Fatal(err)
	}
	txn(2, false)
	if _, err := c.WaitFor(ctx, TxnAborted("gtx")); err != nil {
		t.Fatal(err)
	}
	rep, err := c.StopChaos()
	if err != nil {
		t.Fatal(err)
	}
	want := []chaos.OffsetRewind{{Group: "g", Topic: "gt", Partition: 0, From: 10, To: 5, Allowed: true, Why: "the client committed a lower offset"}}
	if !reflect.DeepEqual(rep.Offsets, want) || len(rep.Violations()) != 0 {
		t.Fatalf("offsets %+v, violations %v", rep.Offsets, rep.Violations())
	}
}

// simpleCommit commits offset off of topic/0 for group as a client outside
// any generation does (Kafka's "simple" commit, generation -1).
func simpleCommit(t *testing.T, c *Cluster, cl *kgo.Client, group, topic string, off int64) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, off
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := withTopicIDs(c, req).RequestWith(testContext(t), cl)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit %d: %v %+v", off, err, resp)
	}
}
