package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
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
// waitLEO waits until the brokers' replicas of topic/0 have leo as their
// log end, and the leader knows it of each follower among them (their
// next fetch told it), so what the leader decides next is settled.
func waitLEO(t *testing.T, c *Cluster, topic string, leo int64, brokers ...int32) {
	t.Helper()
	waitFor(t, 10*time.Second, "the replicas to reach the log end", func() bool {
		ps, _ := c.Partition(topic, 0)
		for _, b := range brokers {
			r := replicaOf(ps, b)
			if r.LogEndOffset != leo || b != ps.Leader && (r.LeaderView == nil || r.LeaderView.LogEndOffset != leo) {
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
	req := byTopicID(c, rawProduce(t, "parked", -1, 30_000, "parked"))
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

// TestAdvanceAbortsHangingTransaction: with Kafka's defaults (a 60 s
// transaction timeout, checked every 10 s) a transaction left open is
// aborted only once the clock passes its timeout and the next check; the
// LSO then moves past it.
func TestAdvanceAbortsHangingTransaction(t *testing.T) {
	c := manualCluster(t, Config{TransactionStatePartitions: 3})
	if err := c.CreateTopic("h", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	hang := newClient(t, c, kgo.TransactionalID("hang"), kgo.DefaultProduceTopic("h"), kgo.TransactionTimeout(60*time.Second))
	if err := hang.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := hang.ProduceSync(ctx, &kgo.Record{Value: []byte("hung")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	state := func() (string, int64) {
		ps, _ := c.Partition("h", 0)
		if ts := c.Transactions(); len(ts) == 1 {
			return ts[0].State, ps.LastStableOffset
		}
		return "", ps.LastStableOffset
	}
	c.AdvanceClock(59 * time.Second) // the checks at 10, 20, ... 50 s find nothing to abort
	if st, lso := state(); st != "Ongoing" || lso != 0 {
		t.Fatalf("after 59 s: %s, LSO %d; want Ongoing, LSO 0", st, lso)
	}
	c.AdvanceClock(11 * time.Second) // past 60 s and the next check at 70 s
	waitFor(t, 10*time.Second, "the hanging transaction aborted by its timeout", func() bool {
		st, lso := state()
		return st == "CompleteAbort" && lso == 2
	})
}
