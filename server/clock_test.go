package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clockStart is where the manual clocks of these tests start.
var clockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// manualCluster starts a cluster whose time moves only when the test
// advances it.
func manualCluster(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	cfg.Clock = clock.NewManual(clockStart)
	return NewTestCluster(t, cfg)
}

// followers returns the leader of topic/0 and its two followers.
func followers(t *testing.T, c *Cluster, topic string) (leader, f1, f2 int32) {
	t.Helper()
	ps, _ := c.Partition(topic, 0)
	var fs []int32
	for _, r := range ps.Replicas {
		if r.Broker != ps.Leader {
			fs = append(fs, r.Broker)
		}
	}
	if len(fs) != 2 {
		t.Fatalf("leader %d replicas %+v; want rf 3", ps.Leader, ps.Replicas)
	}
	return ps.Leader, fs[0], fs[1]
}

func replicaOf(ps PartitionState, broker int32) ReplicaState {
	for _, r := range ps.Replicas {
		if r.Broker == broker {
			return r
		}
	}
	return ReplicaState{}
}

// waitLEO waits until every listed replica of topic/0 has log end offset leo.
func waitLEO(t *testing.T, c *Cluster, topic string, leo int64, brokers ...int32) {
	t.Helper()
	waitFor(t, 10*time.Second, "the replicas to reach the log end", func() bool {
		ps, _ := c.Partition(topic, 0)
		for _, b := range brokers {
			if replicaOf(ps, b).LogEndOffset != leo {
				return false
			}
		}
		return true
	})
}

// TestAdvancePausedFollowerLeavesISR: on a manual clock nothing expires
// until the test advances it. A paused follower stays in the ISR for
// replica.lag.time.max.ms after it last caught up and leaves at the next
// ISR check (they run every half lag time, as in Kafka), when the advance
// returns; a follower that keeps fetching through the same advance (its
// idle fetches run at their own virtual times) stays in.
func TestAdvancePausedFollowerLeavesISR(t *testing.T) {
	c := manualCluster(t, Config{})
	const lag = 30 * time.Second
	if err := c.CreateTopic("lag", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	leader, live, stuck := followers(t, c, "lag")
	prod := newClient(t, c, kgo.DefaultProduceTopic("lag"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	ctx := testContext(t)
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("one")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitLEO(t, c, "lag", 1, leader, live, stuck)
	if err := c.PauseReplica("lag", 0, stuck); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("two")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitLEO(t, c, "lag", 2, leader, live)

	if err := c.AdvanceClock(lag); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("lag", 0)
	if len(ps.ISR) != 3 || ps.HighWatermark != 1 {
		t.Fatalf("after %v: ISR %v HW %d; want all three (not before the lag time has passed), HW held at 1 by the stuck follower", lag, ps.ISR, ps.HighWatermark)
	}
	if err := c.AdvanceClock(lag / 2); err != nil {
		t.Fatal(err)
	}
	ps, _ = c.Partition("lag", 0)
	if slices.Contains(ps.ISR, stuck) || !slices.Contains(ps.ISR, live) || ps.HighWatermark != 2 {
		t.Fatalf("after %v: ISR %v HW %d; want %d out, %d in, HW 2", lag+lag/2, ps.ISR, ps.HighWatermark, stuck, live)
	}
	now := c.Now()
	if !now.Equal(clockStart.Add(lag + lag/2)) {
		t.Fatalf("clock at %v", now)
	}
	// The idle follower's empty fetches ran at their own times, the last
	// one at most replica.fetch.wait.max.ms (500 ms) before now.
	view := replicaOf(ps, live).LeaderView
	if view == nil || now.UnixMilli()-view.LastCaughtUpTimeMs > 500 {
		t.Fatalf("leader's view of the live follower %+v at %d", view, now.UnixMilli())
	}
}

// TestAdvanceRealClock: advancing a real clock (the default) jumps it
// ahead: a paused follower leaves the ISR at once, with no waiting and no
// change to replica.lag.time.max.ms.
func TestAdvanceRealClock(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("jump", 1, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	leader, live, stuck := followers(t, c, "jump")
	prod := newClient(t, c, kgo.DefaultProduceTopic("jump"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err := c.PauseReplica("jump", 0, stuck); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(testContext(t), &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitLEO(t, c, "jump", 1, leader, live)
	before := time.Now()
	if err := c.AdvanceClock(45 * time.Second); err != nil {
		t.Fatal(err)
	}
	if ahead := c.Now().Sub(time.Now()); ahead < 44*time.Second || ahead > 45*time.Second {
		t.Fatalf("the clock runs %v ahead of the wall clock, want 45 s", ahead)
	}
	ps, _ := c.Partition("jump", 0)
	if !slices.Equal(ps.ISR, []int32{leader, live}) && !slices.Equal(ps.ISR, []int32{live, leader}) {
		t.Fatalf("ISR %v after advancing 45 s (in %v); want %d out", ps.ISR, time.Since(before), stuck)
	}
	if got := c.ClockState(); got.Mode != "real" || got.AdvancedMillis != 45000 {
		t.Fatalf("clock state %+v", got)
	}
}

// TestAdvanceFencesCrashedBroker: a crashed leader keeps its leadership
// until broker.session.timeout.ms passes on the clock; then the controller
// fences it and a producer writes to the new leader.
func TestAdvanceFencesCrashedBroker(t *testing.T) {
	const session = 9 * time.Second // Kafka's default
	c := manualCluster(t, Config{BrokerSessionTimeout: session})
	if err := c.CreateTopic("fence", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	leader, _, _ := followers(t, c, "fence")
	if err := c.StopBroker(leader, StopCrash); err != nil {
		t.Fatal(err)
	}
	if err := c.AdvanceClock(session - time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("fence", 0); ps.Leader != leader || len(ps.ISR) != 3 {
		t.Fatalf("before the session timeout: leader %d ISR %v; want %d still leading, ISR intact", ps.Leader, ps.ISR, leader)
	}
	if err := c.AdvanceClock(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("fence", 0)
	if ps.Leader == leader || ps.Leader < 0 || slices.Contains(ps.ISR, leader) || ps.LeaderEpoch != 1 {
		t.Fatalf("after the session timeout: leader %d epoch %d ISR %v; want %d fenced", ps.Leader, ps.LeaderEpoch, ps.ISR, leader)
	}
	prod := newClient(t, c, kgo.SeedBrokers(liveBrokers(c)...), kgo.DefaultProduceTopic("fence"))
	if err := prod.ProduceSync(testContext(t), &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// parkedResult is what a request parked on its own goroutine got.
type parkedResult struct {
	resp kmsg.Response
	err  error
}

// parkRequest sends req to broker on its own goroutine and waits until the
// broker parks it on a clock timer (one more timer pending).
func parkRequest(t *testing.T, c *Cluster, cl *kgo.Client, broker int32, req kmsg.Request) <-chan parkedResult {
	t.Helper()
	base, _ := c.Clock().Pending()
	// Far below the request's own timeouts: only the clock can release it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	got := make(chan parkedResult, 1)
	go func() {
		resp, err := cl.Broker(int(broker)).Request(ctx, req)
		got <- parkedResult{resp, err}
	}()
	waitFor(t, 10*time.Second, "the request to park on a clock timer", func() bool {
		n, _ := c.Clock().Pending()
		return n > base
	})
	return got
}

func notYet(t *testing.T, got <-chan parkedResult, what string) {
	t.Helper()
	select {
	case r := <-got:
		t.Fatalf("%s answered before its deadline: %+v", what, r)
	default:
	}
}

func answer(t *testing.T, got <-chan parkedResult) kmsg.Response {
	t.Helper()
	r := <-got
	if r.err != nil {
		t.Fatalf("no answer once the clock passed the deadline: %v", r.err)
	}
	return r.resp
}

// TestAdvanceTimesOutParkedProduce: an acks=all produce waiting for a
// paused follower still in the ISR answers REQUEST_TIMED_OUT when the clock
// passes its timeout, not before, however long that is in wall time. (With
// a timeout past replica.lag.time.max.ms and the next ISR check, the
// follower would leave the ISR first and the produce succeed, as in Kafka.)
func TestAdvanceTimesOutParkedProduce(t *testing.T) {
	c := manualCluster(t, Config{})
	if err := c.CreateTopic("parked", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	leader, _, stuck := followers(t, c, "parked")
	if err := c.PauseReplica("parked", 0, stuck); err != nil {
		t.Fatal(err)
	}
	batch, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone,
		[]protocol.Record{{Value: []byte("parked")}})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "parked"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	got := parkRequest(t, c, newClient(t, c), leader, req)

	c.AdvanceClock(30*time.Second - time.Millisecond)
	notYet(t, got, "the acks=all produce")
	c.AdvanceClock(time.Millisecond)
	resp := answer(t, got).(*kmsg.ProduceResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.RequestTimedOut.Code {
		t.Fatalf("produce answered %v, want REQUEST_TIMED_OUT", errorName(code))
	}
}

// TestAdvanceEndsFetchLongPoll: a Fetch waiting for data returns empty when
// the clock passes its max_wait, not before.
func TestAdvanceEndsFetchLongPoll(t *testing.T) {
	c := manualCluster(t, Config{})
	if err := c.CreateTopic("poll", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	leader, _, _ := followers(t, c, "poll")
	got := parkRequest(t, c, pinnedFetchClient(t, c, 12), leader, fetchRequest(12, "poll", 0, -1, 1, 60_000))

	c.AdvanceClock(60*time.Second - time.Millisecond)
	notYet(t, got, "the fetch")
	c.AdvanceClock(time.Millisecond)
	p := answer(t, got).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 0 {
		t.Fatalf("fetch answered error %d, %d bytes, HW %d; want an empty answer", p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
	}
}

// clockScenario builds the same cluster state on a fresh manual clock:
// topic "prop" with partitions 0 [1,2,3] and 1 [2,3,1], records on both,
// follower 3 of partition 0 paused behind, a classic group whose only
// member has gone silent, and broker 2 crashed. advance then moves the
// clock a minute, and the result is the state of the topic and the group.
func clockScenario(t *testing.T, advance func(c *Cluster)) ([]PartitionState, GroupState) {
	t.Helper()
	c := manualCluster(t, Config{BrokerSessionTimeout: 9 * time.Second})
	ctx := testContext(t)
	if err := c.CreateTopic("prop", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.DefaultProduceTopic("prop"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(partition int32, n int) {
		for range n {
			if err := prod.ProduceSync(ctx, &kgo.Record{Partition: partition, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	settled := func(partition int32, leo int64, brokers ...int32) {
		waitFor(t, 10*time.Second, "the replicas to settle", func() bool {
			ps, _ := c.Partition("prop", partition)
			for _, b := range brokers {
				if r := replicaOf(ps, b); r.LogEndOffset != leo || r.HighWatermark != ps.HighWatermark {
					return false
				}
			}
			return true
		})
	}
	produce(0, 5)
	produce(1, 5)
	settled(0, 5, 1, 2, 3)
	settled(1, 5, 1, 2, 3)
	if err := c.PauseReplica("prop", 0, 3); err != nil {
		t.Fatal(err)
	}
	produce(0, 3)
	settled(0, 8, 1, 2)

	// A group coordinated by broker 1 (so the crash does not move it),
	// whose only member joins, syncs and falls silent.
	group := ""
	for i := 0; group == ""; i++ {
		if g := "g" + string(rune('a'+i)); javaHash(g)&0x7fffffff%int32(c.cfg.OffsetsTopicPartitions) == 0 {
			group = g
		}
	}
	raw := newClient(t, c)
	resp := mustJoin(t, ctx, raw, rawJoinRequest(group, "", 20*time.Second, "range", "prop"))
	m := &rawMember{cl: raw, group: group, id: resp.MemberID, generation: resp.Generation}
	if code, _ := m.sync(t, ctx, map[string][]byte{m.id: consumerAssignment("prop", 0, 1)}); code != 0 {
		t.Fatalf("sync: %v", errorName(code))
	}
	if gs, _ := c.Group(group); gs.Coordinator != 1 || gs.State != "Stable" {
		t.Fatalf("group %s: coordinator %d state %s; want 1, Stable", group, gs.Coordinator, gs.State)
	}

	if err := c.StopBroker(2, StopCrash); err != nil {
		t.Fatal(err)
	}
	start := c.Now()
	advance(c)
	if got := c.Now().Sub(start); got != time.Minute {
		t.Fatalf("advanced %v, want a minute", got)
	}
	ts := c.State().Topics
	var parts []PartitionState
	for _, topic := range ts {
		if topic.Name == "prop" {
			parts = topic.Partitions
		}
	}
	gs, _ := c.Group(group)
	return parts, gs
}

// TestAdvanceInStepsEqualsOneStep: a minute in one advance and the same
// minute in many uneven steps leave the cluster in the same state, down to
// the leader's view of every follower, and that state is what a minute of
// Kafka's rules gives.
func TestAdvanceInStepsEqualsOneStep(t *testing.T) {
	oneParts, oneGroup := clockScenario(t, func(c *Cluster) { c.AdvanceClock(time.Minute) })
	stepParts, stepGroup := clockScenario(t, func(c *Cluster) {
		steps := []time.Duration{37 * time.Millisecond, 250 * time.Millisecond, time.Second, 3 * time.Millisecond, 500 * time.Millisecond}
		for i, left := 0, time.Minute; left > 0; i++ {
			d := min(steps[i%len(steps)], left)
			c.AdvanceClock(d)
			left -= d
		}
	})
	if !reflect.DeepEqual(oneParts, stepParts) {
		t.Fatalf("one step:\n%+v\nmany steps:\n%+v", oneParts, stepParts)
	}
	if oneGroup.State != stepGroup.State || oneGroup.Generation != stepGroup.Generation || len(oneGroup.Members) != len(stepGroup.Members) {
		t.Fatalf("group after one step %+v, after many %+v", oneGroup, stepGroup)
	}
	// What a minute does: broker 2 fenced at 9 s (partition 1 moves to 3),
	// the paused follower out of partition 0's ISR at the check after 30 s,
	// the silent member expired at 20 s and the group emptied by the
	// rebalance timeout.
	p0, p1 := oneParts[0], oneParts[1]
	if !slices.Equal(p0.ISR, []int32{1}) || p0.HighWatermark != 8 || p0.Leader != 1 {
		t.Errorf("partition 0: leader %d ISR %v HW %d; want 1, [1], 8", p0.Leader, p0.ISR, p0.HighWatermark)
	}
	if p1.Leader != 3 || p1.LeaderEpoch != 1 || !slices.Equal(p1.ISR, []int32{3, 1}) || p1.HighWatermark != 5 {
		t.Errorf("partition 1: leader %d epoch %d ISR %v HW %d; want 3, 1, [3 1], 5", p1.Leader, p1.LeaderEpoch, p1.ISR, p1.HighWatermark)
	}
	if oneGroup.State != "Empty" || oneGroup.Generation != 2 || len(oneGroup.Members) != 0 {
		t.Errorf("group %s generation %d with %d members; want Empty, 2, none", oneGroup.State, oneGroup.Generation, len(oneGroup.Members))
	}
}

// TestClockControlAPI: GET /v1/clock reads the clock, POST
// /v1/clock/advance moves it and runs what fell due before it answers (here
// the fencing of a crashed leader), and bad bodies get a 4xx with a JSON
// message and leave the clock alone.
func TestClockControlAPI(t *testing.T) {
	c := manualCluster(t, Config{BrokerSessionTimeout: 9 * time.Second})
	if err := c.CreateTopic("http", 1, 3, nil); err != nil { // leader 1
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.ControlHandler())
	t.Cleanup(srv.Close)

	var st ClockState
	if code := controlCall(t, srv, "GET", "/v1/clock", "", &st); code != http.StatusOK {
		t.Fatalf("GET /v1/clock: %d", code)
	}
	if st.Mode != "manual" || !st.Now.Equal(clockStart) || st.NowMillis != clockStart.UnixMilli() || st.AdvancedMillis != 0 || st.Timers == 0 {
		t.Fatalf("GET /v1/clock: %+v", st)
	}

	for _, tc := range []struct {
		method, body string
		want         int
	}{
		{"POST", `{"ms":-1}`, http.StatusBadRequest},
		{"POST", `{}`, http.StatusBadRequest},
		{"POST", ``, http.StatusBadRequest},
		{"POST", `{"ms":"10"}`, http.StatusBadRequest},
		{"POST", `{"ms":1.5}`, http.StatusBadRequest},
		{"POST", `{"ms":10,"seconds":1}`, http.StatusBadRequest},
		{"POST", `{"ms":10} {}`, http.StatusBadRequest},
		{"POST", `{"ms":99999999999999999}`, http.StatusBadRequest},
		{"POST", `{"ms":1e400}`, http.StatusBadRequest},
		{"GET", ``, http.StatusMethodNotAllowed},
	} {
		if got := controlCall(t, srv, tc.method, "/v1/clock/advance", tc.body, nil); got != tc.want {
			t.Errorf("%s /v1/clock/advance %s: status %d, want %d", tc.method, tc.body, got, tc.want)
		}
	}
	if now := c.Now(); !now.Equal(clockStart) {
		t.Fatalf("bad requests moved the clock to %v", now)
	}

	if err := c.StopBroker(1, StopCrash); err != nil {
		t.Fatal(err)
	}
	if code := controlCall(t, srv, "POST", "/v1/clock/advance", `{"ms":8999}`, &st); code != http.StatusOK || st.NowMillis != clockStart.UnixMilli()+8999 {
		t.Fatalf("advance 8999 ms: %d %+v", code, st)
	}
	if ps, _ := c.Partition("http", 0); ps.Leader != 1 {
		t.Fatalf("leader %d before the broker session timeout, want 1", ps.Leader)
	}
	if code := controlCall(t, srv, "POST", "/v1/clock/advance", `{"ms":1}`, &st); code != http.StatusOK || st.AdvancedMillis != 9000 {
		t.Fatalf("advance 1 ms: %d %+v", code, st)
	}
	var cs ClusterState
	controlCall(t, srv, "GET", "/v1/cluster", "", &cs)
	for _, topic := range cs.Topics {
		if topic.Name == "http" && (topic.Partitions[0].Leader == 1 || slices.Contains(topic.Partitions[0].ISR, 1)) {
			t.Fatalf("broker 1 not fenced when the advance answered: %+v", topic.Partitions[0])
		}
	}
}

// TestAdvanceExpiresKIP848Member: a KIP-848 member that stops heartbeating
// is removed when the clock passes group.consumer.session.timeout.ms (45 s
// by default), not before; it learns on its next heartbeat.
func TestAdvanceExpiresKIP848Member(t *testing.T) {
	c := manualCluster(t, Config{})
	if err := c.CreateTopic("work", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	ctx := testContext(t)
	heartbeat := func(epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version = 1
		req.Group, req.MemberID, req.MemberEpoch = "g848", "member-one", epoch
		if epoch == 0 {
			req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 60_000, []string{"work"}
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	joined := heartbeat(0)
	if joined.ErrorCode != 0 || joined.MemberEpoch < 1 {
		t.Fatalf("join: %v epoch %d", errorName(joined.ErrorCode), joined.MemberEpoch)
	}
	const session = 45 * time.Second
	c.AdvanceClock(session - time.Millisecond)
	if gs, _ := c.Group("g848"); len(gs.Members) != 1 {
		t.Fatalf("members %+v before the session timeout, want the one", gs.Members)
	}
	c.AdvanceClock(time.Millisecond)
	if gs, _ := c.Group("g848"); len(gs.Members) != 0 {
		t.Fatalf("members %+v after the session timeout, want none", gs.Members)
	}
	if code := heartbeat(joined.MemberEpoch).ErrorCode; code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of the expired member: %v, want UNKNOWN_MEMBER_ID", errorName(code))
	}
}

// TestAdvanceReleasesFaultDelay: a fault rule's delay holds the answer
// until the clock passes it, so on a manual clock the test decides exactly
// when a slow response arrives.
func TestAdvanceReleasesFaultDelay(t *testing.T) {
	c := manualCluster(t, Config{})
	rule := mustInject(t, c, Fault{API: "ListGroups", Delay: 30 * time.Second, Count: 1})
	got := parkRequest(t, c, newClient(t, c), 1, kmsg.NewPtrListGroupsRequest())
	c.AdvanceClock(30*time.Second - time.Millisecond)
	notYet(t, got, "the delayed ListGroups")
	c.AdvanceClock(time.Millisecond)
	if resp := answer(t, got).(*kmsg.ListGroupsResponse); resp.ErrorCode != 0 {
		t.Fatalf("ListGroups: %v", errorName(resp.ErrorCode))
	}
	if err := rule.WaitHits(testContext(t), 1); err != nil {
		t.Fatal(err)
	}
}

// TestLogAppendTimeReadsTheClock: with message.timestamp.type=LogAppendTime
// the broker stamps records with the cluster's clock.
func TestLogAppendTimeReadsTheClock(t *testing.T) {
	c := manualCluster(t, Config{})
	if err := c.CreateTopic("stamped", 1, 3, map[string]string{"message.timestamp.type": "LogAppendTime"}); err != nil {
		t.Fatal(err)
	}
	c.AdvanceClock(time.Hour + 1234*time.Millisecond)
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("stamped"))
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("v"), Timestamp: time.Unix(1, 0)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons := newClient(t, c, kgo.ConsumeTopics("stamped"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cons.PollFetches(ctx)
	if err := fs.Err0(); err != nil || fs.NumRecords() != 1 {
		t.Fatalf("consumed %d records, error %v", fs.NumRecords(), err)
	}
	if got, want := fs.Records()[0].Timestamp, clockStart.Add(time.Hour+1234*time.Millisecond); !got.Equal(want) {
		t.Fatalf("record stamped %v, want the clock's %v", got.UTC(), want)
	}
}

// TestAdvanceCheckpointsHW: replicas checkpoint their HW every
// replica.high.watermark.checkpoint.interval.ms (5 s) of the clock; a
// crashed follower restarts with the HW of the last checkpoint before the
// crash, which a paused follower keeps for the test to see.
func TestAdvanceCheckpointsHW(t *testing.T) {
	for _, tc := range []struct {
		advance time.Duration
		wantHW  int64
	}{{5*time.Second - time.Millisecond, 1}, {5 * time.Second, 2}} {
		c := manualCluster(t, Config{})
		if err := c.CreateTopic("hw", 1, 3, nil); err != nil {
			t.Fatal(err)
		}
		leader, _, follower := followers(t, c, "hw")
		prod := newClient(t, c, kgo.DefaultProduceTopic("hw"))
		ctx := testContext(t)
		hwEverywhere := func(hw int64) {
			waitFor(t, 10*time.Second, "every replica to learn the HW", func() bool {
				ps, _ := c.Partition("hw", 0)
				for _, r := range ps.Replicas {
					if r.HighWatermark != hw {
						return false
					}
				}
				return true
			})
		}
		if err := prod.ProduceSync(ctx, kgo.StringRecord("one")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		hwEverywhere(1)
		c.AdvanceClock(5 * time.Second) // checkpoint: HW 1
		if err := prod.ProduceSync(ctx, kgo.StringRecord("two")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		hwEverywhere(2)
		c.AdvanceClock(tc.advance) // the next checkpoint is due at 10 s
		scMust(t, c.StopBroker(follower, StopCrash))
		scMust(t, c.PauseReplica("hw", 0, follower))
		scMust(t, c.StartBroker(follower))
		ps, _ := c.Partition("hw", 0)
		if got := replicaOf(ps, follower).HighWatermark; got != tc.wantHW || ps.Leader != leader {
			t.Fatalf("advanced %v before the crash: follower restarted with HW %d, want %d from the last checkpoint", 5*time.Second+tc.advance, got, tc.wantHW)
		}
	}
}
