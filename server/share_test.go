package server

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The data path, step by step: the first fetch initialises the share
// partition at the high watermark (share.auto.offset.reset=latest), then
// records are acquired with delivery counts, acknowledged with every type,
// a lock that runs out gives a record back, and the delivery limit
// archives it.
func TestShareFetchAcknowledgeSteps(t *testing.T) {
	c, _ := newShareCluster(t)
	shareProduce(t, c, "q", 2) // before the share partition exists: never seen (latest)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "the opening fetch", m.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 5) // offsets 2-6
	wantAcquired(t, "after produce", m.fetch("q", time.Second), "2-6/1")
	gs, ok := c.Group("sg")
	if !ok || gs.Type != "share" || len(gs.Members) != 1 || len(gs.SharePartitions) != 1 {
		t.Fatalf("group state: %+v", gs)
	}
	if sp := gs.SharePartitions[0]; sp.StartOffset != 2 || sp.EndOffset != 7 || len(sp.InFlight) != 5 ||
		sp.InFlight[0].State != "ACQUIRED" || sp.InFlight[0].DeliveryCount != 1 || sp.InFlight[0].Member != "m1" {
		t.Fatalf("share partition state: %+v", sp)
	}

	// Accept 2, release 3, reject 4, gap 5; 6 stays acquired.
	r := m.fetch("q", 10*time.Millisecond, ack{2, 5, []int8{1, 2, 3, 0}})
	if ackCode(r) != 0 {
		t.Fatalf("ack: %v", kerr.ErrorForCode(ackCode(r)))
	}
	wantAcquired(t, "the released record again", r, "3-3/2")

	// An acknowledgement of a record the member no longer holds (4 is
	// archived; the window starts at 3), and of one below the start (2:
	// done, ignored, as Kafka 4.4 does).
	r = m.fetch("q", 10*time.Millisecond, ack{4, 4, []int8{1}})
	if ackCode(r) != kerr.InvalidRecordState.Code {
		t.Fatalf("ack of an archived record: %v", kerr.ErrorForCode(ackCode(r)))
	}
	r = m.fetch("q", 10*time.Millisecond, ack{2, 2, []int8{1}})
	if ackCode(r) != 0 {
		t.Fatalf("ack below the start: %v", kerr.ErrorForCode(ackCode(r)))
	}

	// 3 and 6 are held: after the lock duration (30 s) they come back.
	since := c.Events(0)
	seq := since[len(since)-1].Seq
	if err := c.AdvanceClock(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantAcquired(t, "after the lock expired", m.fetch("q", time.Second), "3-3/3", "6-6/2")
	waitFor(t, 5*time.Second, "share_records_released", func() bool {
		for _, e := range c.Events(seq) {
			if e.Type == EventShareRecordsReleased && e.Group == "sg" && e.Reason == "acquisition lock expired" {
				return true
			}
		}
		return false
	})

	r = m.fetch("q", 10*time.Millisecond, ack{6, 6, []int8{1}})
	if ackCode(r) != 0 {
		t.Fatalf("ack 6: %v", kerr.ErrorForCode(ackCode(r)))
	}
	wantAcquired(t, "3 is still held", r)

	// The default limit is 5 deliveries: 3 is archived when its fifth
	// lock runs out.
	for _, want := range []string{"3-3/4", "3-3/5"} {
		if err := c.AdvanceClock(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		wantAcquired(t, "redelivery", m.fetch("q", time.Second), want)
	}
	if err := c.AdvanceClock(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantAcquired(t, "after the last delivery", m.fetch("q", 10*time.Millisecond))
	waitFor(t, 5*time.Second, "share_records_archived", func() bool {
		for _, e := range c.Events(seq) {
			if e.Type == EventShareRecordsArchived && e.From == 3 && e.To == 3 {
				return true
			}
		}
		return false
	})
	sp := c.shareSnapshot("sg")[0]
	sp.mu.Lock()
	start, end := sp.sm.StartOffset(), sp.sm.EndOffset()
	sp.mu.Unlock()
	if start != 7 || end != 7 {
		t.Fatalf("share partition [%d,%d), want [7,7)", start, end)
	}
}

// A long poll waits for records and answers as soon as one is produced.
func TestShareFetchLongPoll(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "open", m.fetch("q", 10*time.Millisecond))
	done := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { done <- m.fetch("q", time.Minute) }()
	waitFor(t, 5*time.Second, "the fetch waiting", func() bool {
		sp := c.shareSnapshot("sg")[0]
		sp.mu.Lock()
		defer sp.mu.Unlock()
		return len(sp.waiters) == 1
	})
	shareProduce(t, c, "q", 1)
	select {
	case r := <-done:
		wantAcquired(t, "woken", r, "0-0/1")
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not wake")
	}
}

// Two members share one partition: each record goes to one of them.
func TestShareTwoMembersOnePartition(t *testing.T) {
	c, _ := newShareCluster(t)
	a, b := newShareMember(t, c, "sg", "a"), newShareMember(t, c, "sg", "b")
	a.join("q")
	rb := b.join("q")
	if rb.Assignment == nil || len(rb.Assignment.TopicPartitions) != 1 || !slices.Equal(rb.Assignment.TopicPartitions[0].Partitions, []int32{0}) {
		t.Fatalf("b's assignment: %+v", rb.Assignment)
	}
	wantAcquired(t, "a opens", a.fetch("q", 10*time.Millisecond))
	wantAcquired(t, "b opens", b.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 4)
	wantAcquired(t, "a", a.fetch("q", time.Second), "0-3/1")
	wantAcquired(t, "b gets nothing held by a", b.fetch("q", 10*time.Millisecond))
	// a releases 2-3: b takes them.
	if r := a.fetch("q", 10*time.Millisecond, ack{0, 1, []int8{1}}, ack{2, 3, []int8{2}}); ackCode(r) != 0 {
		t.Fatalf("a's ack: %v", kerr.ErrorForCode(ackCode(r)))
	}
	// a's own fetch above took 2-3 back (it fetches after acking); b
	// waits for a's lock instead: a leaves, and its records go to b.
	if r := a.heartbeat(-1); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("a leaves: %+v", r)
	}
	wantAcquired(t, "b after a left", b.fetch("q", time.Second), "2-3/3")
}

// The session and request errors Kafka answers.
func TestShareFetchErrors(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	leader := leaderOf(c, "q", 0)
	ctx := testContext(t)
	send := func(epoch int32, topicID [16]byte, acks bool) *kmsg.ShareFetchResponse {
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("sg"), kmsg.StringPtr("m1"), epoch
		req.MaxRecords, req.MaxBytes = 10, 1<<20
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = topicID
		rp := kmsg.NewShareFetchRequestTopicPartition()
		if acks {
			b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
			b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 0, 0, []int8{1}
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := m.cl.Broker(int(leader)).RetriableRequest(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.ShareFetchResponse)
	}
	id := c.topic("q").id
	wantCode(t, "no session", send(3, id, false).ErrorCode, kerr.ShareSessionNotFound)
	wantCode(t, "close without a session", send(-1, id, false).ErrorCode, kerr.ShareSessionNotFound)
	wantCode(t, "acks on the opening request", send(0, id, true).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "open", send(0, id, false).ErrorCode, nil)
	wantCode(t, "the wrong epoch", send(5, id, false).ErrorCode, kerr.InvalidShareSessionEpoch)
	wantCode(t, "the right one", send(1, id, false).ErrorCode, nil)
	r := send(2, [16]byte{9}, false)
	var codes []int16
	for _, t := range r.Topics {
		if t.TopicID == [16]byte{9} {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	}
	if r.ErrorCode != 0 || !slices.Equal(codes, []int16{kerr.UnknownTopicID.Code}) {
		t.Fatalf("unknown topic id: %v %v", kerr.ErrorForCode(r.ErrorCode), codes)
	}
	// Not the leader.
	other := leader%3 + 1
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch, req.MaxRecords = kmsg.StringPtr("sg"), kmsg.StringPtr("m2"), 0, 10
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = id
	rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := m.cl.Broker(int(other)).RetriableRequest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.(*kmsg.ShareFetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != leader {
		t.Fatalf("not the leader: %v leader %d", kerr.ErrorForCode(p.ErrorCode), p.CurrentLeader.LeaderID)
	}

	// ShareAcknowledge cannot open a session.
	ar := kmsg.NewPtrShareAcknowledgeRequest()
	ar.GroupID, ar.MemberID, ar.ShareSessionEpoch = kmsg.StringPtr("sg"), kmsg.StringPtr("m1"), 0
	aresp, err := ar.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "ShareAcknowledge at epoch 0", aresp.ErrorCode, kerr.InvalidShareSessionEpoch)
}

// The heartbeat's errors, and a group id one type uses refused by the
// A new leader reads the state from the persister: acquired records are
// delivered again with the same delivery count, released ones with one
// more, accepted ones never.
func TestShareLeaderFailover(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "open", m.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 6)
	wantAcquired(t, "first", m.fetch("q", time.Second), "0-5/1")
	r := m.fetch("q", 10*time.Millisecond, ack{0, 1, []int8{1}}, ack{2, 2, []int8{2}})
	wantAcquired(t, "2 again", r, "2-2/2")
	// 2 (count 2) is acquired again, 3-5 (count 1) still held.
	old := leaderOf(c, "q", 0)
	next := old%3 + 1
	if _, err := c.ElectLeader("q", 0, next, false); err != nil {
		t.Fatal(err)
	}
	m2 := newShareMember(t, c, "sg", "m1")
	m2.epochs = map[int32]int32{}
	wantAcquired(t, "new leader opens", m2.fetchFrom(next, "q", 0, time.Second), "2-2/2", "3-5/1")
	if r := m2.fetchFrom(next, "q", 0, 10*time.Millisecond, ack{2, 5, []int8{1}}); ackCode(r) != 0 {
		t.Fatalf("ack on the new leader: %v", kerr.ErrorForCode(ackCode(r)))
	}
	// Back to the old leader: nothing accepted comes back.
	if _, err := c.ElectLeader("q", 0, old, false); err != nil {
		t.Fatal(err)
	}
	m3 := newShareMember(t, c, "sg", "m1")
	wantAcquired(t, "back on the old leader", m3.fetchFrom(old, "q", 0, 10*time.Millisecond))
}

// share.isolation.level=read_committed: nothing past the last stable
// offset is handed out, and aborted transactions (and the markers) are
// archived unseen. share.auto.offset.reset=earliest starts at the log
// start.
func TestShareReadCommittedEarliest(t *testing.T) {
	c, _ := newShareCluster(t)
	shareSet(t, c, "sg", "share.isolation.level", "read_committed", "share.auto.offset.reset", "earliest")
	shareProduce(t, c, "q", 2) // 0-1, before the share partition: earliest still sees them
	txn := newClient(t, c, kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("q"))
	runTxn(t, txn, false, "x", "y") // 2-3 aborted, marker 4
	runTxn(t, txn, true, "z")       // 5 committed, marker 6
	// An open transaction holds the LSO at 7.
	ctx := testContext(t)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	r := m.fetch("q", 10*time.Millisecond)
	wantAcquired(t, "read_committed", r, "0-1/1", "5-5/1")
	gs, _ := c.Group("sg")
	sp := gs.SharePartitions[0]
	if sp.StartOffset != 0 || sp.EndOffset != 7 {
		t.Fatalf("window [%d,%d), want [0,7)", sp.StartOffset, sp.EndOffset)
	}
	for _, rec := range sp.InFlight {
		if want := map[bool]string{true: "ARCHIVED", false: "ACQUIRED"}[rec.Offset >= 2 && rec.Offset <= 4 || rec.Offset == 6]; rec.State != want {
			t.Fatalf("offset %d: %s, want %s", rec.Offset, rec.State, want)
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// 7 committed (marker 8): now it is handed out.
	wantAcquired(t, "after the commit", m.fetch("q", time.Second), "7-7/1")
}

// share.auto.offset.reset=by_duration:PT1M starts at the first record no
// older than a minute.
func TestShareAutoOffsetResetByDuration(t *testing.T) {
	c, clk := newShareCluster(t)
	shareSet(t, c, "sg", "share.auto.offset.reset", "by_duration:PT1M")
	cl := newClient(t, c, kgo.DefaultProduceTopic("q"))
	produceAt := func(v string) {
		r := &kgo.Record{Value: []byte(v), Timestamp: clk.Now()}
		if err := cl.ProduceSync(testContext(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produceAt("old") // 0
	if err := c.AdvanceClock(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	produceAt("new") // 1
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "by_duration", m.fetch("q", 10*time.Millisecond), "1-1/1")
	if d, ok := parseISODuration("P1DT2H30M0.5S"); !ok || d != 26*time.Hour+30*time.Minute+500*time.Millisecond {
		t.Fatalf("parse: %v %v", d, ok)
	}
	for _, bad := range []string{"1H", "PT", "P1H", "PT1D", "PTxS"} {
		if _, ok := parseISODuration(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The assignment initialises the share partition (latest: the high
// watermark then), so records produced between the heartbeat and the
// first fetch are delivered; an empty share group can be deleted, with
// group.share.max.share.sessions bounds one broker's share sessions; a
// A member silent for share.session.timeout.ms (45 s on the cluster's
// clock) leaves the group; what it held goes back with its delivery

// RENEW (ShareAcknowledge v2 with IsRenewAck) restarts a record's lock.
func TestShareRenew(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "open", m.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 1)
	wantAcquired(t, "acquire", m.fetch("q", time.Second), "0-0/1")
	leader := leaderOf(c, "q", 0)
	renew := func() int16 {
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.SetVersion(2)
		req.GroupID, req.MemberID, req.ShareSessionEpoch, req.IsRenewAck = kmsg.StringPtr("sg"), kmsg.StringPtr("m1"), m.epochs[leader], true
		rt := kmsg.NewShareAcknowledgeRequestTopic()
		rt.TopicID = c.topic("q").id
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 0, 0, []int8{4}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := m.cl.Broker(int(leader)).RetriableRequest(testContext(t), req)
		if err != nil {
			t.Fatal(err)
		}
		ar := resp.(*kmsg.ShareAcknowledgeResponse)
		if ar.ErrorCode != 0 {
			return ar.ErrorCode
		}
		m.epochs[leader]++
		if ar.AcquisitionLockTimeoutMillis != 30000 {
			t.Fatalf("lock timeout %d", ar.AcquisitionLockTimeoutMillis)
		}
		return ar.Topics[0].Partitions[0].ErrorCode
	}
	if err := c.AdvanceClock(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "renew", renew(), nil)
	if err := c.AdvanceClock(20 * time.Second); err != nil { // 40 s after the acquisition, 20 s after the renewal
		t.Fatal(err)
	}
	gs, _ := c.Group("sg")
	if r := gs.SharePartitions[0].InFlight[0]; r.State != "ACQUIRED" || r.DeliveryCount != 1 {
		t.Fatalf("after the renewal: %+v", r)
	}
	if err := c.AdvanceClock(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantAcquired(t, "after the renewed lock", m.fetch("q", time.Second), "0-0/2")
}
