package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReassignKadm drives a reassignment with kadm: the new replica is
// paused ahead so the reassignment visibly stalls with adding/removing
// replicas listed everywhere; resumed, it catches up, joins the ISR, and
// the removed leader hands over.
func TestReassignKadm(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 4})
	ctx := testContext(t)
	if err := c.CreateTopic("mv", 1, 2, nil); err != nil { // replicas [1 2]
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "mv", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.PauseReplica("mv", 0, 3); err != nil { // ahead of the replica
		t.Fatal(err)
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("mv", 0, []int32{2, 3})
	rs, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil || rs["mv"][0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	ls, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"mv": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	got := ls["mv"][0]
	if !slices.Equal(got.Replicas, []int32{2, 3, 1}) || !slices.Equal(got.AddingReplicas, []int32{3}) || !slices.Equal(got.RemovingReplicas, []int32{1}) {
		t.Fatalf("listed %+v, want replicas [2 3 1] adding [3] removing [1]", got)
	}
	ps, _ := c.Partition("mv", 0)
	if !slices.Equal(ps.AddingReplicas, []int32{3}) || !slices.Equal(ps.RemovingReplicas, []int32{1}) || ps.Leader != 1 || ps.Replicas[1].LogEndOffset != 0 {
		t.Fatalf("state %+v", ps)
	}
	md, err := kadm.NewClient(newClient(t, c)).Metadata(ctx, "mv") // a fresh client: no cached metadata
	if err != nil || !slices.Equal(md.Topics["mv"].Partitions[0].Replicas, []int32{2, 3, 1}) {
		t.Fatalf("metadata replicas: %v %+v", err, md.Topics["mv"].Partitions[0])
	}
	if rs := c.Reassignments(); len(rs) != 1 || rs[0].Topic != "mv" {
		t.Fatalf("Reassignments: %+v", rs)
	}

	if err := c.ResumeReplica("mv", 0, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, ReassignmentCompleted("mv", 0)); err != nil {
		t.Fatal(err)
	}
	ps, _ = c.Partition("mv", 0)
	if !slices.Equal(replicaIDs(ps), []int32{2, 3}) || ps.Leader != 2 || !slices.Equal(ps.ISR, []int32{2, 3}) ||
		ps.AddingReplicas != nil || ps.Replicas[1].LogEndOffset != 5 {
		t.Fatalf("after: %+v", ps)
	}
	ls, err = adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"mv": {0: {}}})
	if err != nil || len(ls["mv"]) != 0 {
		t.Fatalf("still listed: %v %+v", err, ls)
	}
	// The data moved: read it from the new replica set.
	fs := newClient(t, c, kgo.ConsumeTopics("mv"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())).PollRecords(ctx, 5)
	if recs := fs.Records(); len(recs) != 5 || string(recs[4].Value) != "4" {
		t.Fatalf("read back %d records: %v", len(recs), fs.Errors())
	}

	// Cancellation reverts and deletes the half-built replica.
	if err := c.PauseReplica("mv", 0, 4); err != nil {
		t.Fatal(err)
	}
	if err := c.ReassignPartition("mv", 0, []int32{4, 3}); err != nil {
		t.Fatal(err)
	}
	var cancel kadm.AlterPartitionAssignmentsReq
	cancel.CancelAssign("mv", 0)
	if rs, err := adm.AlterPartitionAssignments(ctx, cancel); err != nil || rs["mv"][0].Err != nil {
		t.Fatalf("cancel: %v %+v", err, rs)
	}
	if _, err := c.WaitFor(ctx, ReassignmentCancelled("mv", 0)); err != nil {
		t.Fatal(err)
	}
	ps, _ = c.Partition("mv", 0)
	if !slices.Equal(replicaIDs(ps), []int32{2, 3}) || ps.Leader != 2 {
		t.Fatalf("after cancel: %+v", ps)
	}

	// Kafka's errors.
	for _, tc := range []struct {
		topic   string
		p       int32
		target  []int32
		cancel  bool
		want    *kerr.Error
		comment string
	}{
		{"mv", 0, nil, true, kerr.NoReassignmentInProgress, "nothing to cancel"},
		{"mv", 0, []int32{2, 9}, false, kerr.InvalidReplicaAssignment, "unknown broker"},
		{"mv", 0, []int32{2, 2}, false, kerr.InvalidReplicaAssignment, "broker twice"},
		{"mv", 0, []int32{}, false, kerr.InvalidReplicaAssignment, "empty"},
		{"mv", 7, []int32{1, 2}, false, kerr.UnknownTopicOrPartition, "no such partition"},
		{"nope", 0, []int32{1, 2}, false, kerr.UnknownTopicOrPartition, "no such topic"},
	} {
		var req kadm.AlterPartitionAssignmentsReq
		if tc.cancel {
			req.CancelAssign(tc.topic, tc.p)
		} else {
			req.Assign(tc.topic, tc.p, tc.target)
		}
		rs, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil || !errors.Is(rs[tc.topic][tc.p].Err, tc.want) {
			t.Errorf("%s: %v %+v, want %v", tc.comment, err, rs[tc.topic][tc.p], tc.want)
		}
	}
	evs := c.Events(0)
	for _, typ := range []EventType{EventReassignmentStarted, EventReassignmentCompleted, EventReassignmentCancelled} {
		if !slices.ContainsFunc(evs, func(e Event) bool { return e.Type == typ && e.Topic == "mv" }) {
			t.Errorf("no %s event", typ)
		}
	}
}

// TestReassignUnderLoad moves a partition, leader included, from brokers
// [1 2 3] to [4 3 2] while an acks=all idempotent producer keeps writing
// (the new replica held back first, so it catches up with a log that keeps
// growing): every acknowledged record is read back exactly once, in order.
func TestReassignUnderLoad(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 4})
	ctx := testContext(t)
	if err := c.CreateTopic("load", 1, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.MaxBufferedRecords(500))

	var mu sync.Mutex
	var acked []string
	var produceErr error
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // many records in flight; the callbacks of one partition run in order
		defer close(done)
		defer prod.Flush(ctx)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("r%06d", i)
			prod.Produce(ctx, &kgo.Record{Topic: "load", Value: []byte(v)}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					produceErr = err
					return
				}
				acked = append(acked, string(r.Value))
			})
		}
	}()
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitFor(t, 20*time.Second, "records before the move", func() bool { return ackedCount() >= 200 })
	// Hold the new replica back while writes go on, so that it has a
	// moving log to chase once it starts.
	if err := c.PauseReplica("load", 0, 4); err != nil {
		t.Fatal(err)
	}
	if err := c.ReassignPartition("load", 0, []int32{4, 3, 2}); err != nil {
		t.Fatal(err)
	}
	started := ackedCount()
	waitFor(t, 20*time.Second, "records while the move is pending", func() bool { return ackedCount() >= started+300 })
	if ps, _ := c.Partition("load", 0); !slices.Equal(ps.AddingReplicas, []int32{4}) || ps.Replicas[0].LogEndOffset != 0 || ps.Leader != 1 {
		t.Fatalf("pending move: %+v", ps)
	}
	if err := c.ResumeReplica("load", 0, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, ReassignmentCompleted("load", 0)); err != nil {
		t.Fatal(err)
	}
	moved := ackedCount()
	waitFor(t, 20*time.Second, "records after the move", func() bool { return ackedCount() >= moved+200 })
	close(stop)
	<-done
	if produceErr != nil {
		t.Fatalf("produce: %v", produceErr)
	}
	ps, _ := c.Partition("load", 0)
	if !slices.Equal(replicaIDs(ps), []int32{4, 3, 2}) || ps.Leader != 4 {
		t.Fatalf("after: %+v", ps)
	}

	cons := newClient(t, c, kgo.ConsumeTopics("load"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var read []string
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for len(read) < len(acked) && cctx.Err() == nil {
		cons.PollFetches(cctx).EachRecord(func(r *kgo.Record) { read = append(read, string(r.Value)) })
	}
	if !slices.Equal(read, acked) {
		n := min(len(read), len(acked))
		i := 0
		for i < n && read[i] == acked[i] {
			i++
		}
		t.Fatalf("read %d records, acknowledged %d; first difference at %d", len(read), len(acked), i)
	}
	t.Logf("%d records acknowledged and read back once in order; %d before the move completed", len(acked), moved)
}

// TestReassignPendingWhileTargetDown: the target broker is down, so the
// reassignment stays pending while writes go on; after the restart the new
// replica catches up and the reassignment completes.
func TestReassignPendingWhileTargetDown(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 4})
	ctx := testContext(t)
	if err := c.CreateTopic("wait", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.StopBroker(4, StopCrash); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("wait", 0, []int32{1, 2, 4})
	if rs, err := adm.AlterPartitionAssignments(ctx, req); err != nil || rs["wait"][0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "wait", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the live followers to catch up", func() bool {
		ps, _ := c.Partition("wait", 0)
		return ps.HighWatermark == 20 && ps.Replicas[1].HighWatermark == 20
	})
	ps, _ := c.Partition("wait", 0)
	if !slices.Equal(ps.AddingReplicas, []int32{4}) || !slices.Equal(ps.RemovingReplicas, []int32{3}) || ps.Replicas[2].State != "offline" {
		t.Fatalf("pending reassignment: %+v", ps)
	}
	ls, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"wait": {0: {}}})
	if err != nil || !slices.Equal(ls["wait"][0].AddingReplicas, []int32{4}) {
		t.Fatalf("listed: %v %+v", err, ls)
	}

	if err := c.StartBroker(4); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, ReassignmentCompleted("wait", 0)); err != nil {
		t.Fatal(err)
	}
	ps, _ = c.Partition("wait", 0)
	if !slices.Equal(replicaIDs(ps), []int32{1, 2, 4}) || ps.Replicas[2].LogEndOffset != 20 || !slices.Contains(ps.ISR, 4) {
		t.Fatalf("after restart: %+v", ps)
	}
}

// TestReassignDuringTransaction moves a partition's leader while a
// transaction on it is open: the new leader holds the LSO at the open
// transaction, the commit marker lands on it, and a read_committed
// consumer reads every committed record and nothing of an aborted one.
func TestReassignDuringTransaction(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 4, TransactionStatePartitions: 1})
	ctx := testContext(t)
	if err := c.CreateTopic("tx", 1, 2, nil); err != nil { // [1 2]
		t.Fatal(err)
	}
	p := newClient(t, c, kgo.TransactionalID("mover"), kgo.DefaultProduceTopic("tx"), kgo.RequiredAcks(kgo.AllISRAcks()))
	txn := func(values []string, commit bool) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if len(values) == 2 { // move while this transaction is open
			if err := c.ReassignPartition("tx", 0, []int32{3, 4}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.WaitFor(ctx, ReassignmentCompleted("tx", 0)); err != nil {
				t.Fatal(err)
			}
			ps, _ := c.Partition("tx", 0)
			if ps.Leader != 3 || ps.LastStableOffset >= ps.HighWatermark {
				t.Fatalf("new leader with an open transaction: %+v", ps)
			}
		}
		if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn([]string{"a"}, true)
	txn([]string{"b", "c"}, true)
	txn([]string{"x"}, false)
	txn([]string{"d"}, true)

	cons := newClient(t, c, kgo.ConsumeTopics("tx"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 4 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("read committed %v", got)
	}
}

// TestFaultOnReassignment: a fault rule fails the reassignment of the
// partition in its scope before any work and serves the others.
func TestFaultOnReassignment(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 4})
	ctx := testContext(t)
	if err := c.CreateTopic("f", 2, 2, nil); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	if _, err := c.InjectFault(Fault{API: "AlterPartitionReassignments", Error: "NOT_CONTROLLER", Topic: "f", Partition: &one, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InjectFault(Fault{API: "CreatePartitions", Error: "THROTTLING_QUOTA_EXCEEDED", Topic: "f", Partition: &one}); err == nil {
		t.Fatal("a per-partition rule on CreatePartitions was accepted")
	}
	adm := kadm.NewClient(newClient(t, c))
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("f", 0, []int32{4, 2})
	req.Assign("f", 1, []int32{4, 3})
	rs, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil || rs["f"][0].Err != nil || !errors.Is(rs["f"][1].Err, kerr.NotController) {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	if _, err := c.WaitFor(ctx, ReassignmentCompleted("f", 0)); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("f", 1); !slices.Equal(replicaIDs(ps), []int32{2, 3}) || ps.AddingReplicas != nil {
		t.Fatalf("partition 1 moved despite the fault: %+v", ps)
	}
	if _, err := c.InjectFault(Fault{API: "CreatePartitions", Error: "THROTTLING_QUOTA_EXCEEDED", Topic: "f", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if rs, err := adm.CreatePartitions(ctx, 1, "f"); err != nil || !errors.Is(rs["f"].Err, kerr.ThrottlingQuotaExceeded) {
		t.Fatalf("create partitions: %v %+v", err, rs)
	}
	if st := topicState(c.State(), "f"); len(st.Partitions) != 2 {
		t.Fatalf("partitions created despite the fault: %d", len(st.Partitions))
	}
}
