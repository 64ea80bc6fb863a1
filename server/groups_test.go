package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Classic consumer groups through franz-go, over TCP: members joining and
// leaving, static members, a coordinator crash, a silent member, injected
// heartbeat errors.

// groupConfig lets members use short sessions, so expiry tests stay short.
var groupConfig = Config{GroupMinSessionTimeout: 100 * time.Millisecond}

// ledger counts every delivery of every record value.
type ledger struct {
	mu   sync.Mutex
	seen map[string]int
}

func newLedger() *ledger { return &ledger{seen: map[string]int{}} }

func (l *ledger) add(v string) {
	l.mu.Lock()
	l.seen[v]++
	l.mu.Unlock()
}

// distinct is the number of different values delivered.
func (l *ledger) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// exactlyOnce checks that values v0..v(n-1) were each delivered once.
func (l *ledger) exactlyOnce(t *testing.T, n int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var missing, twice []string
	for i := range n {
		v := "v" + strconv.Itoa(i)
		switch l.seen[v] {
		case 0:
			missing = append(missing, v)
		case 1:
		default:
			twice = append(twice, fmt.Sprintf("%s×%d", v, l.seen[v]))
		}
	}
	if len(l.seen) != n || len(missing) > 0 || len(twice) > 0 {
		t.Fatalf("%d distinct values delivered, want %d; missing %v; delivered more than once %v", len(l.seen), n, head(missing), head(twice))
	}
}

func head(s []string) []string { return s[:min(len(s), 10)] }

// producer writes values v<next>... to a topic.
type producer struct {
	t     *testing.T
	cl    *kgo.Client
	topic string
	next  int
}

func newProducer(t *testing.T, c *Cluster, topic string) *producer {
	cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.MetadataMinAge(50*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	return &producer{t: t, cl: cl, topic: topic}
}

func (p *producer) produce(ctx context.Context, n int) {
	p.t.Helper()
	var rs []*kgo.Record
	for range n {
		v := "v" + strconv.Itoa(p.next)
		rs = append(rs, &kgo.Record{Key: []byte(v), Value: []byte(v)})
		p.next++
	}
	if err := p.cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		p.t.Fatal(err)
	}
}

// groupConsumer is one franz-go group member consuming into a ledger. It
// processes what it polled before it lets a rebalance through
// (BlockRebalanceOnPoll) and commits what it processed (AutoCommitMarks,
// and the commit franz-go makes on revoke), so a partition that moves is
// taken up exactly where its previous owner stopped.
type groupConsumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func startGroupConsumer(t *testing.T, c *Cluster, group, topic, name string, l *ledger, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap()...), kgo.ClientID(name),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(3 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond), kgo.RebalanceTimeout(5 * time.Second),
		kgo.BlockRebalanceOnPoll(), kgo.AutoCommitMarks(), kgo.AutoCommitInterval(100 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.FetchMaxWait(200 * time.Millisecond), kgo.MetadataMinAge(50 * time.Millisecond),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupConsumer{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(ctx)
			if fs.IsClientClosed() || ctx.Err() != nil {
				cl.AllowRebalance()
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				l.add(string(r.Value))
				cl.MarkCommitRecords(r)
			})
			cl.AllowRebalance()
		}
	}()
	t.Cleanup(m.stop)
	return m
}

// stop ends the poll loop, then closes the client: it commits what it
// marked and leaves the group (a static member does not leave).
func (m *groupConsumer) stop() {
	m.once.Do(func() {
		m.cancel()
		<-m.done
		m.cl.CloseAllowingRebalance()
	})
}

// waitGroup waits until the group's state satisfies ok.
func waitGroup(t *testing.T, c *Cluster, group, what string, ok func(GroupState) bool) GroupState {
	t.Helper()
	var last GroupState
	deadline := time.Now().Add(15 * time.Second)
	for {
		gs, found := c.Group(group)
		if found && ok(gs) {
			return gs
		}
		last = gs
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for group %s: %s; last state %+v", group, what, last)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}

// balanced says whether the group is Stable with n members that share all
// partitions of its topic evenly.
func balanced(n, partitions int) func(GroupState) bool {
	return func(gs GroupState) bool {
		if gs.State != "Stable" || len(gs.Members) != n {
			return false
		}
		seen := map[string]bool{}
		for _, m := range gs.Members {
			count := 0
			for topic, ps := range m.Assignment {
				for _, p := range ps {
					key := topic + "/" + strconv.Itoa(int(p))
					if seen[key] {
						return false
					}
					seen[key] = true
					count++
				}
			}
			if count < partitions/n || count > (partitions+n-1)/n {
				return false
			}
		}
		return len(seen) == partitions
	}
}

// committedThrough says whether every partition of the topic has a commit
// at its high watermark.
func committedThrough(topic string, partitions int) func(GroupState) bool {
	return func(gs GroupState) bool {
		n := 0
		for _, o := range gs.Offsets {
			if o.Topic == topic {
				if o.Lag != 0 || o.HighWatermark < 0 {
					return false
				}
				n++
			}
		}
		return n == partitions
	}
}

func waitConsumed(t *testing.T, l *ledger, n int) {
	t.Helper()
	waitFor(t, 15*time.Second, fmt.Sprintf("%d records consumed", n), func() bool { return l.distinct() >= n })
}

// TestGroupConsumersShareAndHandOver runs franz-go group members with the
// cooperative-sticky and the range balancer: three members share 12
// partitions evenly; a fourth joins and one leaves; every record is
// consumed exactly once; the committed offsets cover everything; a
// consumer started afterwards resumes from them.
func TestGroupConsumersShareAndHandOver(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{{"cooperative-sticky", kgo.CooperativeStickyBalancer()}, {"range", kgo.RangeBalancer()}} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewTestCluster(t, groupConfig)
			if err := c.CreateTopic("work", 12, 3, nil); err != nil {
				t.Fatal(err)
			}
			ctx := testContext(t)
			p := newProducer(t, c, "work")
			l := newLedger()
			start := func(name string) *groupConsumer {
				return startGroupConsumer(t, c, "g", "work", name, l, kgo.Balancers(tc.balancer))
			}
			a, b, cc := start("a"), start("b"), start("c")
			gs := waitGroup(t, c, "g", "three members sharing 12 partitions", balanced(3, 12))
			if gs.Protocol != tc.name || gs.ProtocolType != "consumer" || gs.Type != "classic" {
				t.Fatalf("group %+v: want protocol %s", gs, tc.name)
			}
			p.produce(ctx, 300)
			waitConsumed(t, l, 300)

			d := start("d") // joins
			p.produce(ctx, 300)
			waitGroup(t, c, "g", "four members", balanced(4, 12))
			waitConsumed(t, l, 600)

			a.stop() // leaves
			p.produce(ctx, 300)
			before := waitGroup(t, c, "g", "three members after one left", balanced(3, 12)).Generation
			waitConsumed(t, l, 900)
			waitGroup(t, c, "g", "commits at the high watermark", committedThrough("work", 12))
			l.exactlyOnce(t, 900)
			if gs, _ := c.Group("g"); gs.Generation != before {
				t.Errorf("generation moved from %d to %d without a membership change", before, gs.Generation)
			}

			// Stop everybody; a new member starts from the commits.
			for _, m := range []*groupConsumer{b, cc, d} {
				m.stop()
			}
			waitGroup(t, c, "g", "empty", func(gs GroupState) bool { return gs.State == "Empty" })
			e := start("e")
			p.produce(ctx, 100)
			waitConsumed(t, l, 1000)
			waitGroup(t, c, "g", "commits at the high watermark after the restart", committedThrough("work", 12))
			l.exactlyOnce(t, 1000)
			e.stop()

			adm := kadm.NewClient(newClient(t, c))
			committed, err := adm.FetchOffsets(ctx, "g")
			if err != nil || committed.Error() != nil {
				t.Fatalf("fetch offsets: %v %v", err, committed.Error())
			}
			ends, err := adm.ListEndOffsets(ctx, "work")
			if err != nil {
				t.Fatal(err)
			}
			ends.Each(func(o kadm.ListedOffset) {
				if got, _ := committed.Lookup("work", o.Partition); got.At != o.Offset {
					t.Errorf("work/%d committed at %d, end offset %d", o.Partition, got.At, o.Offset)
				}
			})
		})
	}
}

// TestStaticMemberRestartsWithoutRebalance restarts static members within
// their session timeout: each comes back under a new member id with its
// old partitions, the generation does not move, and nothing is consumed
// twice. With the range balancer the leader restarts too. (A restarted
// cooperative-sticky leader recomputes the plan from the metadata members
// joined with, which no longer shows what they own, and franz-go then
// rejoins on purpose: KIP-814.)
func TestStaticMemberRestartsWithoutRebalance(t *testing.T) {
	for _, tc := range []struct {
		name          string
		balancer      kgo.GroupBalancer
		restartLeader bool
	}{{"range", kgo.RangeBalancer(), true}, {"cooperative-sticky", kgo.CooperativeStickyBalancer(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			testStaticRestart(t, tc.balancer, tc.restartLeader)
		})
	}
}

func testStaticRestart(t *testing.T, balancer kgo.GroupBalancer, restartLeader bool) {
	c := NewTestCluster(t, groupConfig)
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	p := newProducer(t, c, "work")
	l := newLedger()
	start := func(instance string) *groupConsumer {
		return startGroupConsumer(t, c, "g", "work", instance, l, kgo.InstanceID(instance), kgo.SessionTimeout(10*time.Second), kgo.Balancers(balancer))
	}
	members := map[string]*groupConsumer{"a": start("a"), "b": start("b"), "c": start("c")}
	gs := waitGroup(t, c, "g", "three static members sharing 12 partitions", balanced(3, 12))
	generation := gs.Generation
	p.produce(ctx, 300)
	waitConsumed(t, l, 300)

	var leader string
	for _, m := range gs.Members {
		if m.MemberID == gs.Leader {
			leader = *m.InstanceID
		}
	}
	restarts := []string{"a"}
	if leader == "a" {
		restarts[0] = "b"
	}
	if restartLeader {
		restarts = append(restarts, leader)
	}
	for i, instance := range restarts {
		before, _ := c.Group("g")
		var oldID string
		var oldAssignment map[string][]int32
		for _, m := range before.Members {
			if *m.InstanceID == instance {
				oldID, oldAssignment = m.MemberID, m.Assignment
			}
		}
		members[instance].stop()
		members[instance] = start(instance)
		after := waitGroup(t, c, "g", "instance "+instance+" back under a new member id", func(gs GroupState) bool {
			for _, m := range gs.Members {
				if *m.InstanceID == instance && m.MemberID != oldID {
					return gs.State == "Stable"
				}
			}
			return false
		})
		if after.Generation != generation {
			t.Fatalf("restart of %s: generation %d, want %d (no rebalance)", instance, after.Generation, generation)
		}
		for _, m := range after.Members {
			if *m.InstanceID == instance && !equalAssignment(m.Assignment, oldAssignment) {
				t.Errorf("restarted %s got %v, had %v", instance, m.Assignment, oldAssignment)
			}
		}
		p.produce(ctx, 300)
		waitConsumed(t, l, 600+300*i)
	}
	n := 300 * (len(restarts) + 1)
	waitGroup(t, c, "g", "commits at the high watermark", committedThrough("work", 12))
	l.exactlyOnce(t, n)
	if gs, _ := c.Group("g"); gs.Generation != generation {
		t.Fatalf("generation %d, want %d", gs.Generation, generation)
	}
}

func equalAssignment(a, b map[string][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		if !slices.Equal(ps, b[t]) {
			return false
		}
	}
	return true
}

// TestGroupSurvivesCoordinatorCrash crashes the group's coordinator while
// three members consume: the group moves to the new leader of its
// __consumer_offsets partition, which restores it from the log, so the
// members carry on in the same generation; no committed offset is lost and
// consumption resumes from the last commit.
func TestGroupSurvivesCoordinatorCrash(t *testing.T) {
	c := NewTestCluster(t, groupConfig)
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	p := newProducer(t, c, "work")
	l := newLedger()
	for _, name := range []string{"a", "b", "c"} {
		startGroupConsumer(t, c, "g", "work", name, l)
	}
	gs := waitGroup(t, c, "g", "three members", balanced(3, 12))
	p.produce(ctx, 300)
	waitConsumed(t, l, 300)
	committed := waitGroup(t, c, "g", "commits at the high watermark", committedThrough("work", 12))

	first := gs.Coordinator
	if err := c.StopBroker(first, StopCrash); err != nil {
		t.Fatal(err)
	}
	p.produce(ctx, 300) // while the group moves
	moved := waitGroup(t, c, "g", "a new coordinator", func(gs GroupState) bool { return gs.Coordinator != first })
	for _, o := range committed.Offsets {
		i := slices.IndexFunc(moved.Offsets, func(m GroupOffsetState) bool { return m.Topic == o.Topic && m.Partition == o.Partition })
		if i < 0 || moved.Offsets[i].Offset < o.Offset {
			t.Fatalf("%s/%d was committed at %d before the crash; the new coordinator has %+v", o.Topic, o.Partition, o.Offset, moved.Offsets)
		}
	}
	waitConsumed(t, l, 600)
	p.produce(ctx, 300)
	waitConsumed(t, l, 900)
	after := waitGroup(t, c, "g", "commits at the high watermark after the move", committedThrough("work", 12))
	if after.Generation != gs.Generation || len(after.Members) != 3 {
		t.Errorf("after the move: generation %d with %d members, want generation %d with 3 (restored, no rebalance)", after.Generation, len(after.Members), gs.Generation)
	}
	// Records committed before the crash are never consumed again; later
	// ones may be (at least once), but none is missing.
	l.mu.Lock()
	for i := range 300 {
		if n := l.seen["v"+strconv.Itoa(i)]; n != 1 {
			t.Errorf("v%d consumed %d times; it was committed before the crash", i, n)
		}
	}
	l.mu.Unlock()
	waitConsumed(t, l, 900)
}

// TestSilentMemberExpires has a member join and sync by hand, then fall
// silent: when the clock passes its session timeout (not before) it is
// removed, the franz-go members rebalance and take over its partitions,
// and its next heartbeat is refused. The clock is manual: the franz-go
// members heartbeat in wall time, which does not move it, so they are given
// a session longer than the advance.
func TestSilentMemberExpires(t *testing.T) {
	const session = 10 * time.Second
	cfg := groupConfig
	cfg.Clock = clock.NewManual(clockStart)
	c := NewTestCluster(t, cfg)
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	p := newProducer(t, c, "work")
	l := newLedger()
	for _, name := range []string{"a", "b"} {
		startGroupConsumer(t, c, "g", "work", name, l, kgo.Balancers(kgo.RangeBalancer()), kgo.SessionTimeout(45*time.Second))
	}
	waitGroup(t, c, "g", "two members", balanced(2, 12))

	raw := newClient(t, c)
	silent := joinAndSync(t, ctx, raw, "g", session, "range", "work")
	gs := waitGroup(t, c, "g", "three members", balanced(3, 12))
	var silentPartitions []int32
	for _, m := range gs.Members {
		if m.MemberID == silent.id {
			silentPartitions = m.Assignment["work"]
		}
	}
	if len(silentPartitions) != 4 {
		t.Fatalf("silent member has %v, want 4 partitions", silentPartitions)
	}
	p.produce(ctx, 300) // some land on the silent member's partitions
	c.AdvanceClock(session - time.Millisecond)
	if gs, _ := c.Group("g"); len(gs.Members) != 3 || gs.State != "Stable" {
		t.Fatalf("before the session timeout: %s with %d members, want Stable with 3", gs.State, len(gs.Members))
	}
	c.AdvanceClock(time.Millisecond)
	// Gone when the advance returns (the franz-go members may already be
	// rejoining, so the state is not pinned).
	gs, _ = c.Group("g")
	if len(gs.Members) != 2 || slices.ContainsFunc(gs.Members, func(m GroupMemberState) bool { return m.MemberID == silent.id }) {
		t.Fatalf("once the session timeout passed: %s with members %+v, want the silent one gone", gs.State, gs.Members)
	}
	waitGroup(t, c, "g", "the silent member gone", balanced(2, 12))
	waitConsumed(t, l, 300)
	l.exactlyOnce(t, 300)
	if code := silent.heartbeat(t, ctx); code != kerr.UnknownMemberID.Code {
		t.Errorf("heartbeat of the expired member: %v, want UNKNOWN_MEMBER_ID", errorName(code))
	}
}

// TestHeartbeatFaultsHandledByClient injects REBALANCE_IN_PROGRESS and
// NOT_COORDINATOR into heartbeats: franz-go rejoins and rediscovers the
// coordinator, and keeps consuming every record once.
func TestHeartbeatFaultsHandledByClient(t *testing.T) {
	c := NewTestCluster(t, groupConfig)
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	p := newProducer(t, c, "work")
	l := newLedger()
	for _, name := range []string{"a", "b", "c"} {
		startGroupConsumer(t, c, "g", "work", name, l)
	}
	waitGroup(t, c, "g", "three members", balanced(3, 12))
	p.produce(ctx, 300)
	for i, fault := range []string{"REBALANCE_IN_PROGRESS", "NOT_COORDINATOR"} {
		r, err := c.InjectFault(Fault{API: "Heartbeat", Error: fault, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WaitHits(ctx, 3); err != nil {
			t.Fatal(err)
		}
		p.produce(ctx, 300)
		waitGroup(t, c, "g", "three members after "+fault, balanced(3, 12))
		waitConsumed(t, l, 600+300*i)
	}
	waitGroup(t, c, "g", "commits at the high watermark", committedThrough("work", 12))
	l.exactlyOnce(t, 900)
}
