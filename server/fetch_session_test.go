package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// sessionCluster is a cluster with topic "fs", two partitions led by
// broker 1 (replicas 1, 2, 3) and a client pinned to Fetch version.
type sessionCluster struct {
	t    *testing.T
	c    *Cluster
	cl   *kgo.Client
	prod *kgo.Client
	v    int16
	id   [16]byte
}

func newSessionCluster(t *testing.T, cfg Config, version int16) *sessionCluster {
	c := NewTestCluster(t, cfg)
	_, kerr, msg := c.createTopic(topicSpec{name: "fs", partitions: -1, rf: -1, assignment: [][]int32{{1, 2, 3}, {1, 3, 2}}}, false)
	if kerr != nil {
		t.Fatal(kerr, msg)
	}
	return &sessionCluster{t: t, c: c, cl: pinnedFetchClient(t, c, version), v: version, id: c.topic("fs").id,
		prod: newClient(t, c, kgo.DefaultProduceTopic("fs"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))}
}

func (sc *sessionCluster) produce(partition int32, values ...string) {
	sc.t.Helper()
	for _, v := range values {
		if err := sc.prod.ProduceSync(testContext(sc.t), &kgo.Record{Partition: partition, Value: []byte(v)}).FirstErr(); err != nil {
			sc.t.Fatal(err)
		}
	}
}

// part is a request partition: partition@offset.
type part struct {
	p      int32
	offset int64
}

// request builds a Fetch of the cluster's version for session id and
// epoch, listing parts and forgetting forget.
func (sc *sessionCluster) request(id, epoch int32, parts []part, forget []int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = sc.v
	req.ReplicaID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 1<<20
	req.SessionID, req.SessionEpoch = id, epoch
	if len(parts) > 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "fs", sc.id
		for _, p := range parts {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p.p, p.offset, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	if len(forget) > 0 {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID, ft.Partitions = "fs", sc.id, forget
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return req
}

func (sc *sessionCluster) fetch(broker int32, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	sc.t.Helper()
	resp, err := sc.cl.Broker(int(broker)).Request(testContext(sc.t), req)
	if err != nil {
		sc.t.Fatal(err)
	}
	return resp.(*kmsg.FetchResponse)
}

// answered summarises a response: partition -> records returned, with HW
// and error, in order.
type answeredPart struct {
	p       int32
	records int
	hw      int64
	err     int16
}

func (sc *sessionCluster) answered(resp *kmsg.FetchResponse) []answeredPart {
	sc.t.Helper()
	var out []answeredPart
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			out = append(out, answeredPart{rp.Partition, countRecords(sc.t, rp.RecordBatches), rp.HighWatermark, rp.ErrorCode})
		}
	}
	return out
}

func (sc *sessionCluster) want(what string, resp *kmsg.FetchResponse, code *kerr.Error, session bool, want ...answeredPart) {
	sc.t.Helper()
	wantCode := int16(0)
	if code != nil {
		wantCode = code.Code
	}
	if resp.ErrorCode != wantCode {
		sc.t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(resp.ErrorCode), code)
	}
	if session != (resp.SessionID != 0) {
		sc.t.Fatalf("%s: session id %d", what, resp.SessionID)
	}
	got := sc.answered(resp)
	if len(got) != len(want) {
		sc.t.Fatalf("%s: answered %+v, want %+v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			sc.t.Fatalf("%s: answered %+v, want %+v", what, got, want)
		}
	}
}

// TestFetchSessionSteps walks a session through Fetch v17 (topic ids) and
// v12 (names): creation, incremental answers with only what changed,
// forgotten partitions, the session errors and closing.
func TestFetchSessionSteps(t *testing.T) {
	for _, v := range []int16{12, 17} {
		t.Run("v"+string(rune('0'+v/10))+string(rune('0'+v%10)), func(t *testing.T) {
			sc := newSessionCluster(t, Config{}, v)
			sc.produce(0, "a", "b", "c")

			full := sc.fetch(1, sc.request(0, 0, []part{{0, 0}, {1, 0}}, nil))
			sc.want("full fetch", full, nil, true, answeredPart{0, 3, 3, 0}, answeredPart{1, 0, 0, 0})
			id := full.SessionID
			if n := sc.c.broker(1).sessions.Len(); n != 1 {
				t.Fatalf("%d sessions on broker 1", n)
			}

			// Epoch 1: p0 moved to 3; nothing changed anywhere.
			sc.want("epoch 1", sc.fetch(1, sc.request(id, 1, []part{{0, 3}}, nil)), nil, true)
			// Epoch 2: new records on p1 only; the request lists nothing.
			sc.produce(1, "x", "y")
			sc.want("epoch 2", sc.fetch(1, sc.request(id, 2, nil, nil)), nil, true, answeredPart{1, 2, 2, 0})
			// The same epoch again: INVALID_FETCH_SESSION_EPOCH, session 0.
			sc.want("epoch 2 again", sc.fetch(1, sc.request(id, 2, nil, nil)), kerr.InvalidFetchSessionEpoch, false)
			// Epoch 3: p1 moved to 2 and p0 is forgotten: records on p0
			// are not answered any more.
			sc.produce(0, "d")
			sc.want("epoch 3", sc.fetch(1, sc.request(id, 3, []part{{1, 2}}, []int32{0})), nil, true)
			sc.want("epoch 4", sc.fetch(1, sc.request(id, 4, nil, nil)), nil, true)
			// Epoch 5: p0 comes back at 3: new to the session, answered.
			sc.want("epoch 5", sc.fetch(1, sc.request(id, 5, []part{{0, 3}}, nil)), nil, true, answeredPart{0, 1, 4, 0})

			// The other version on this session: FETCH_SESSION_TOPIC_ID_ERROR.
			other := int16(12)
			if v == 12 {
				other = 13
			}
			req := sc.request(id, 6, nil, nil)
			req.Version = other
			cl := pinnedFetchClient(t, sc.c, other)
			resp, err := cl.Broker(1).Request(testContext(t), req)
			if err != nil {
				t.Fatal(err)
			}
			sc.want("other version", resp.(*kmsg.FetchResponse), kerr.FetchSessionTopicIDError, false)

			// Unknown ids: on another broker, or one nobody handed out.
			sc.want("other broker", sc.fetch(2, sc.request(id, 6, nil, nil)), kerr.FetchSessionIDNotFound, false)
			sc.want("unknown id", sc.fetch(1, sc.request(id^1, 6, nil, nil)), kerr.FetchSessionIDNotFound, false)

			// Epoch -1 closes the session and answers without one.
			sc.want("epoch -1", sc.fetch(1, sc.request(id, -1, []part{{0, 4}}, nil)), nil, false, answeredPart{0, 0, 4, 0})
			sc.want("after close", sc.fetch(1, sc.request(id, 6, nil, nil)), kerr.FetchSessionIDNotFound, false)
			if n := sc.c.broker(1).sessions.Len(); n != 0 {
				t.Fatalf("%d sessions after close", n)
			}
		})
	}
}

// An id past every cache shard's range fails inside Kafka: the generic
// error answer, UNKNOWN_SERVER_ERROR with the request's session id.
func TestFetchSessionIDOutOfRange(t *testing.T) {
	sc := newSessionCluster(t, Config{}, 17)
	resp := sc.fetch(1, sc.request(1<<31-1, 1, []part{{0, 0}}, nil))
	if resp.ErrorCode != kerr.UnknownServerError.Code || resp.SessionID != 1<<31-1 || len(resp.Topics) != 0 {
		t.Fatalf("error %v, session %d, %d topics", kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, len(resp.Topics))
	}
}

// A partition in error is answered on every incremental fetch, and once
// the error clears it is answered again (its cached HW was reset).
func TestFetchSessionErrorsAlwaysAnswered(t *testing.T) {
	sc := newSessionCluster(t, Config{}, 17)
	sc.produce(0, "a")
	full := sc.fetch(1, sc.request(0, 0, []part{{0, 1}, {1, 0}}, nil))
	sc.want("full", full, nil, true, answeredPart{0, 0, 1, 0}, answeredPart{1, 0, 0, 0})
	id := full.SessionID
	// Out of range: answered each time.
	sc.want("epoch 1", sc.fetch(1, sc.request(id, 1, []part{{0, 99}}, nil)), nil, true, answeredPart{0, 0, -1, kerr.OffsetOutOfRange.Code})
	sc.want("epoch 2", sc.fetch(1, sc.request(id, 2, nil, nil)), nil, true, answeredPart{0, 0, -1, kerr.OffsetOutOfRange.Code})
	// Back in range: answered once (HW 1 against the cached -1), then not.
	sc.want("epoch 3", sc.fetch(1, sc.request(id, 3, []part{{0, 1}}, nil)), nil, true, answeredPart{0, 0, 1, 0})
	sc.want("epoch 4", sc.fetch(1, sc.request(id, 4, nil, nil)), nil, true)
}

// Leadership moves while a session is open: the session's cached leader
// epoch is fenced and every incremental answer says so; a restarted
// broker has forgotten its sessions.
func TestFetchSessionLeaderMoves(t *testing.T) {
	sc := newSessionCluster(t, Config{}, 17)
	sc.produce(0, "a")
	req := sc.request(0, 0, []part{{0, 0}}, nil)
	ps, _ := sc.c.Partition("fs", 0)
	req.Topics[0].Partitions[0].CurrentLeaderEpoch = ps.LeaderEpoch
	full := sc.fetch(1, req)
	sc.want("full", full, nil, true, answeredPart{0, 1, 1, 0})
	id := full.SessionID
	if _, err := sc.c.ElectLeader("fs", 0, 2, false); err != nil {
		t.Fatal(err)
	}
	resp := sc.fetch(1, sc.request(id, 1, nil, nil))
	sc.want("after election", resp, nil, true, answeredPart{0, 0, -1, kerr.FencedLeaderEpoch.Code})
	if l := resp.Topics[0].Partitions[0].CurrentLeader; l.LeaderID != 2 || l.LeaderEpoch != ps.LeaderEpoch+1 {
		t.Fatalf("current leader %+v", l)
	}
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 2 {
		t.Fatalf("brokers %+v", resp.Brokers)
	}
	sc.want("again", sc.fetch(1, sc.request(id, 2, nil, nil)), nil, true, answeredPart{0, 0, -1, kerr.FencedLeaderEpoch.Code})

	if err := sc.c.StopBroker(1, StopClean); err != nil {
		t.Fatal(err)
	}
	if err := sc.c.StartBroker(1); err != nil {
		t.Fatal(err)
	}
	// The client's connection closed with the broker: retry until it is
	// back.
	var resp2 kmsg.Response
	waitFor(t, 10*time.Second, "broker 1 to answer", func() bool {
		var err error
		resp2, err = sc.cl.Broker(1).Request(testContext(t), sc.request(id, 3, nil, nil))
		return err == nil
	})
	sc.want("after restart", resp2.(*kmsg.FetchResponse), kerr.FetchSessionIDNotFound, false)
}

// An incremental fetch with nothing new long-polls like any fetch and
// wakes when its session's partitions get records.
func TestFetchSessionLongPoll(t *testing.T) {
	sc := newSessionCluster(t, Config{}, 17)
	full := sc.fetch(1, sc.request(0, 0, []part{{0, 0}, {1, 0}}, nil))
	id := full.SessionID
	req := sc.request(id, 1, nil, nil)
	req.MaxWaitMillis = 30_000
	done := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, err := sc.cl.Broker(1).Request(context.Background(), req)
		if err != nil {
			done <- nil
			return
		}
		done <- resp.(*kmsg.FetchResponse)
	}()
	select {
	case <-done:
		t.Fatal("answered before there was anything new")
	case <-time.After(100 * time.Millisecond): // a negative check: a short grace
	}
	sc.produce(1, "x")
	select {
	case resp := <-done:
		if resp == nil {
			t.Fatal("fetch failed")
		}
		sc.want("woken", resp, nil, true, answeredPart{1, 1, 1, 0})
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not wake")
	}
}

// With no slots a full fetch opens no session (session id 0), and every
// fetch stays full.
func TestFetchSessionNoSlots(t *testing.T) {
	sc := newSessionCluster(t, Config{FetchSessionCacheSlots: -1}, 17)
	sc.want("full", sc.fetch(1, sc.request(0, 0, []part{{0, 0}}, nil)), nil, false, answeredPart{0, 0, 0, 0})
}

// A throttled incremental answer (consumer_byte_rate) carries the session
// id and no partitions and leaves the session's cached offsets alone, so
// the next answer carries what the throttled one dropped (Kafka's
// getThrottledResponse). A throttled full fetch opens no session.
func TestFetchSessionThrottled(t *testing.T) {
	sc := newSessionCluster(t, Config{QuotaWindowSize: 50 * time.Millisecond}, 17)
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(1, 17)
	sc.cl = newClient(t, sc.c, kgo.MaxVersions(vs), kgo.ClientID("slowc"))
	full := sc.fetch(1, sc.request(0, 0, []part{{0, 0}}, nil))
	sc.want("full", full, nil, true, answeredPart{0, 0, 0, 0})
	id := full.SessionID
	sc.produce(0, strings.Repeat("x", 1000), strings.Repeat("y", 1000))
	if err := sc.c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("slowc")}, quota.Op{Key: quota.ConsumerByteRate, Value: 10}); err != nil {
		t.Fatal(err)
	}
	resp := sc.fetch(1, sc.request(id, 1, nil, nil))
	sc.want("throttled", resp, nil, true)
	if resp.SessionID != id || resp.ThrottleMillis <= 0 {
		t.Fatalf("session %d (want %d), throttle %d ms", resp.SessionID, id, resp.ThrottleMillis)
	}
	// The throttled connection stays muted for the throttle time (and kgo
	// waits it out): the session goes on from another client, unthrottled.
	sc.cl = pinnedFetchClient(t, sc.c, 17)
	sc.want("after the throttle", sc.fetch(1, sc.request(id, 2, nil, nil)), nil, true, answeredPart{0, 2, 2, 0})
	sc.want("then nothing new", sc.fetch(1, sc.request(id, 3, []part{{0, 2}}, nil)), nil, true)

	// A throttled full fetch: no session.
	sc.cl = newClient(t, sc.c, kgo.MaxVersions(vs), kgo.ClientID("slowc"))
	before := sc.c.FetchSessions(1)
	resp = sc.fetch(1, sc.request(0, 0, []part{{0, 0}}, nil))
	if resp.SessionID != 0 || len(resp.Topics) != 0 || resp.ThrottleMillis <= 0 || sc.c.FetchSessions(1) != before {
		t.Fatalf("throttled full fetch: session %d, %d topics, throttle %d, sessions %d -> %d", resp.SessionID, len(resp.Topics), resp.ThrottleMillis, before, sc.c.FetchSessions(1))
	}
}

// The cache's slots and eviction on the cluster's clock: 8 slots are one
// per shard; once every shard holds a young consumer session a new one
// gets no session (id 0); after two minutes of the clock without use, a
// new session evicts a stale one, whose next fetch is
// FETCH_SESSION_ID_NOT_FOUND.
func TestFetchSessionEviction(t *testing.T) {
	sc := newSessionCluster(t, Config{FetchSessionCacheSlots: 8, Clock: clock.NewManual(time.Unix(1_700_000_000, 0))}, 17)
	var ids []int32
	for range 8 {
		resp := sc.fetch(1, sc.request(0, 0, []part{{0, 0}}, nil))
		if resp.SessionID == 0 {
			t.Fatalf("no session after %d", len(ids))
		}
		ids = append(ids, resp.SessionID)
	}
	for range 8 { // every shard is tried in turn: all full
		sc.want("cache full", sc.fetch(1, sc.request(0, 0, []part{{0, 0}, {1, 0}}, nil)), nil, false,
			answeredPart{0, 0, 0, 0}, answeredPart{1, 0, 0, 0})
	}
	// Seven of them are used a minute later; the first is not.
	if err := sc.c.AdvanceClock(time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[1:] {
		sc.want("in use", sc.fetch(1, sc.request(id, 1, nil, nil)), nil, true)
	}
	if err := sc.c.AdvanceClock(time.Minute + time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// The next shard in turn is the first session's: it is stale now.
	resp := sc.fetch(1, sc.request(0, 0, []part{{0, 0}}, nil))
	if resp.SessionID == 0 {
		t.Fatal("the stale session was not evicted")
	}
	sc.want("evicted", sc.fetch(1, sc.request(ids[0], 1, nil, nil)), kerr.FetchSessionIDNotFound, false)
	if n := sc.c.FetchSessions(1); n != 8 {
		t.Fatalf("%d sessions, want 8", n)
	}
}

// A Fetch from a replica id (a follower fakekafka does not know: its own
// replicas fetch in-process) opens a privileged session, as Kafka's
// followers' do; its partitions answer NOT_LEADER_OR_FOLLOWER.
func TestFetchSessionFollowerPrivileged(t *testing.T) {
	sc := newSessionCluster(t, Config{}, 17)
	req := sc.request(0, 0, []part{{0, 0}}, nil)
	req.ReplicaID, req.ReplicaState.ID, req.ReplicaState.Epoch = -1, 2, 1
	resp := sc.fetch(1, req)
	sc.want("follower", resp, nil, true, answeredPart{0, 0, -1, kerr.NotLeaderForPartition.Code})
	if s := sc.c.broker(1).sessions.Get(resp.SessionID); s == nil || !s.Privileged() {
		t.Fatalf("session %d: %+v, want a privileged one", resp.SessionID, s)
	}
	consumer := sc.fetch(1, sc.request(0, 0, []part{{0, 0}}, nil))
	if s := sc.c.broker(1).sessions.Get(consumer.SessionID); s == nil || s.Privileged() {
		t.Fatal("a consumer's session is privileged")
	}
}

// With max_bytes too small for every partition, an incremental fetch
// reads the session's partitions in its order, and a partition that
// returned records moves to the end: the partitions take turns.
func TestFetchSessionPartitionsTakeTurns(t *testing.T) {
	sc := newSessionCluster(t, Config{}, 17)
	sc.produce(0, "a", "b", "c") // three batches
	sc.produce(1, "x", "y")
	small := func(req *kmsg.FetchRequest) *kmsg.FetchRequest {
		req.MaxBytes = 1 // the first batch found still goes out whole
		return req
	}
	full := sc.fetch(1, small(sc.request(0, 0, []part{{0, 0}, {1, 0}}, nil)))
	sc.want("full", full, nil, true, answeredPart{0, 1, 3, 0}, answeredPart{1, 0, 2, 0})
	id := full.SessionID
	// Order [0 1]: fs-0 reads first and moves to the end.
	sc.want("epoch 1", sc.fetch(1, small(sc.request(id, 1, []part{{0, 1}}, nil))), nil, true, answeredPart{0, 1, 3, 0})
	// Order [1 0]: fs-1's turn, fs-0 (with a record left) waits.
	sc.want("epoch 2", sc.fetch(1, small(sc.request(id, 2, []part{{0, 2}}, nil))), nil, true, answeredPart{1, 1, 2, 0})
	// Order [0 1] again.
	sc.want("epoch 3", sc.fetch(1, small(sc.request(id, 3, []part{{1, 1}}, nil))), nil, true, answeredPart{0, 1, 3, 0})
	if got := sc.c.broker(1).sessions.Get(id).Partitions(); len(got) != 2 || got[0].Partition != 1 {
		t.Fatalf("session order %v, want fs-1 first", got)
	}
}
