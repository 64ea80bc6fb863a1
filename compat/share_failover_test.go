package compat

// Share consumers through a crash mid-flight: Kafka's KafkaShareConsumer
// (stopped with records acquired, so what it holds is exact) and franz-go's
// kgo.ShareGroup (consuming throughout) while the broker leading the
// group's __share_group_state partition, or the share partition's leader,
// crashes and restarts. Every delivery is recorded with its delivery count
// and compared whole.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// franzShare is a franz-go share consumer that acknowledges each record
// as it polls it: ACCEPT, or RELEASE once for the offsets in release.
type franzShare struct {
	t       *testing.T
	cl      *kgo.Client
	got     []string // "offset/count", in delivery order
	release map[int64]bool
}

func newFranzShare(t *testing.T, c *server.Cluster, group string) *franzShare {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ShareGroup(group), kgo.ConsumeTopics("q"),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &franzShare{t: t, cl: cl, release: map[int64]bool{}}
}

func (f *franzShare) poll() {
	ctx, cancel := context.WithTimeout(f.t.Context(), 200*time.Millisecond)
	defer cancel()
	for _, r := range f.cl.PollFetches(ctx).Records() {
		f.got = append(f.got, fmt.Sprintf("%d/%d", r.Offset, r.DeliveryCount()))
		if f.release[r.Offset] {
			delete(f.release, r.Offset)
			r.Ack(kgo.AckRelease)
		} else {
			r.Ack(kgo.AckAccept)
		}
	}
	fctx, fcancel := context.WithTimeout(f.t.Context(), 5*time.Second)
	defer fcancel()
	f.cl.FlushAcks(fctx) // an error (a leader gone) leaves the records to the broker's rules
}

// pollUntil polls until the share partition satisfies cond.
func (f *franzShare) pollUntil(c *server.Cluster, group, what string, cond func(api.SharePartitionState) bool) {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		f.poll()
		if gs, ok := c.Group(group); ok && len(gs.SharePartitions) > 0 && cond(gs.SharePartitions[0]) {
			return
		}
		if time.Now().After(deadline) {
			gs, _ := c.Group(group)
			f.t.Fatalf("%s: franz-go got %v; %+v", what, f.got, gs.SharePartitions)
		}
	}
}

func runOf(first, last int64, count int) []string {
	var out []string
	for o := first; o <= last; o++ {
		out = append(out, fmt.Sprintf("%d/%d", o, count))
	}
	return out
}

// states are the share partition's in-flight states by offset.
func states(sp api.SharePartitionState) map[int64]string {
	out := map[int64]string{}
	for _, r := range sp.InFlight {
		out[r.Offset] = fmt.Sprintf("%s/%d", r.State, r.DeliveryCount)
	}
	return out
}

// stopJava stops a Java consumer's process (SIGSTOP) once it acquired
// records, and waits until its last long poll ended: from then on it
// holds what it holds and does nothing.
func stopJava(t *testing.T, c *server.Cluster, js *javaShare, group string) {
	t.Helper()
	if err := js.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("/proc/%d/stat", js.cmd.Process.Pid)
	waitFor(t, 30*time.Second, "the Java consumer stopped", func() bool {
		b, err := os.ReadFile(stat)
		i := bytes.LastIndexByte(b, ')')
		return err == nil && i > 0 && i+2 < len(b) && b[i+2] == 'T'
	})
	waitShare(t, c, group, "its fetch to end", func(sp api.SharePartitionState) bool { return sp.WaitingFetches == 0 })
}

// startHolding starts a Java consumer (explicit acknowledgement) that
// takes records 0-9, accepts 0-4 and is stopped holding 5-9. ready runs
// once the share partition exists, before anything is produced.
func startHolding(t *testing.T, c *server.Cluster, group string, ready func()) *javaShare {
	t.Helper()
	js := startShare(t, c, group, "q", "explicit", map[string]string{"fetch.max.wait.ms": "200"})
	shareReady(t, c, js, group, 1)
	ready()
	var vals []string
	for i := range 10 {
		vals = append(vals, fmt.Sprint(i))
	}
	produceValues(t, c, 0, vals...)
	rs := js.pollUntil("0-9", func(rs []shareRec) bool { return len(rs) > 0 })
	if got := offsetsOf(rs); !slices.Equal(got, runOf(0, 9, 1)) {
		t.Fatalf("the Java consumer's first poll: %v", got)
	}
	for o := range int64(5) {
		js.ack(o, "ACCEPT")
	}
	if errs := js.commit(); len(errs) != 0 {
		t.Fatalf("commit: %v", errs)
	}
	stopJava(t, c, js, group)
	return js
}

func stateOf(c *server.Cluster, group string) server.ShareState {
	for _, s := range c.ShareStates() {
		if s.Group == group && s.Topic == "q" && s.Partition == 0 {
			return s
		}
	}
	return server.ShareState{Coordinator: -1}
}

func leaderOfQ(c *server.Cluster) int32 {
	p, _ := c.Partition("q", 0)
	return p.Leader
}

// The share coordinator (the leader of the group's __share_group_state
// partition) crashes while a Java consumer holds 5-9 and franz-go consumes:
// the share partition's leader keeps every acquisition (it did not move),
// its writes go to the new coordinator, the Java consumer's late ACCEPT
// and RELEASE hold, the released records come again at delivery 2, and
// nothing accepted comes again, not even after the partition's leader
// moves and reads the state back.
func TestShareConsumerJavaCoordinatorCrash(t *testing.T) {
	c, _ := shareCluster(t, 1)
	const group = "sg-coord-crash"
	var coord, leader int32
	js := startHolding(t, c, group, func() {
		// The share coordinator and the partition's leader on different
		// brokers: this crash moves only the coordinator.
		if coord = stateOf(c, group).Coordinator; coord < 0 {
			t.Fatal("no share state for q-0")
		}
		if leaderOfQ(c) == coord {
			if _, err := c.ElectLeader("q", 0, coord%3+1, false); err != nil {
				t.Fatal(err)
			}
		}
		leader = leaderOfQ(c)
	})
	f := newFranzShare(t, c, group)
	f.pollUntil(c, group, "franz-go joined", func(api.SharePartitionState) bool {
		gs, _ := c.Group(group)
		return len(gs.Members) == 2
	})
	t.Logf("share coordinator %d, q-0 leader %d", coord, leader)
	produceValues(t, c, 0, "10", "11", "12", "13", "14")
	f.pollUntil(c, group, "10-14 accepted", func(sp api.SharePartitionState) bool { return states(sp)[14] == "ACKNOWLEDGED/1" })

	if err := c.StopBroker(coord, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	produceValues(t, c, 0, "15", "16", "17", "18", "19")
	f.pollUntil(c, group, "15-19 accepted through the new coordinator", func(sp api.SharePartitionState) bool {
		return states(sp)[19] == "ACKNOWLEDGED/1"
	})
	if now := stateOf(c, group).Coordinator; now == coord || now < 0 {
		t.Fatalf("share coordinator %d after crashing %d", now, coord)
	}
	// The Java consumer wakes: its acquisitions survived on the leader.
	if err := js.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	js.ack(5, "ACCEPT")
	js.ack(6, "ACCEPT")
	if errs := js.commit(); len(errs) != 0 {
		t.Fatalf("the held records' acknowledgement after the coordinator crash: %v", errs)
	}
	// The Java consumer fetches in the background from its first poll on,
	// so a record released while it runs may come to it rather than to
	// franz-go: it releases 7-9 as it leaves (close sends the pending
	// acknowledgements with the leave) and takes nothing after.
	for _, o := range []int64{7, 8, 9} {
		js.ack(o, "RELEASE")
	}
	js.close()
	if err := c.StartBroker(coord); err != nil {
		t.Fatal(err)
	}
	f.pollUntil(c, group, "7-9 again, accepted", func(sp api.SharePartitionState) bool {
		return sp.StartOffset == 20 && len(sp.InFlight) == 0
	})
	// Another leader reads the state the crash's successor wrote: nothing
	// comes again.
	if _, err := c.ElectLeader("q", 0, leader%3+1, false); err != nil {
		t.Fatal(err)
	}
	produceValues(t, c, 0, "20")
	f.pollUntil(c, group, "20 on the next leader", func(sp api.SharePartitionState) bool {
		return sp.Leader == leader%3+1 && sp.StartOffset == 21 && len(sp.InFlight) == 0
	})
	want := append(append(runOf(10, 19, 1), runOf(7, 9, 2)...), "20/1")
	if !slices.Equal(f.got, want) {
		t.Fatalf("franz-go deliveries %v, want %v", f.got, want)
	}
	if s := stateOf(c, group); s.StartOffset != 21 {
		t.Fatalf("written state %+v, want start 21", s.Offset)
	}
}

// The share partition's leader crashes while a Java consumer holds 5-9
// and franz-go consumes: the new leader reads the written state, so 0-4
// and what franz-go accepted stay done, 5-9 (acquired, never written) come
// to franz-go at the same delivery count, and the Java consumer's late
// acknowledgement is refused.
func TestShareConsumerJavaLeaderCrash(t *testing.T) {
	c, _ := shareCluster(t, 1)
	const group = "sg-leader-crash"
	js := startHolding(t, c, group, func() {})
	f := newFranzShare(t, c, group)
	f.release[11] = true
	f.pollUntil(c, group, "franz-go joined", func(api.SharePartitionState) bool {
		gs, _ := c.Group(group)
		return len(gs.Members) == 2
	})
	produceValues(t, c, 0, "10", "11", "12", "13", "14")
	f.pollUntil(c, group, "10-14 done, 11 twice", func(sp api.SharePartitionState) bool {
		st := states(sp)
		return st[10] == "ACKNOWLEDGED/1" && st[11] == "ACKNOWLEDGED/2" && st[14] == "ACKNOWLEDGED/1"
	})
	if st := states(mustShare(t, c, group)); st[5] != "ACQUIRED/1" || st[9] != "ACQUIRED/1" {
		t.Fatalf("5-9 not held by the Java consumer: %v", st)
	}

	leader := leaderOfQ(c)
	if err := c.StopBroker(leader, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	next := leaderOfQ(c)
	if next == leader || next < 0 {
		t.Fatalf("q-0 leader %d after crashing %d", next, leader)
	}
	f.pollUntil(c, group, "5-9 accepted on the new leader", func(sp api.SharePartitionState) bool {
		return sp.Leader == next && sp.StartOffset == 15 && len(sp.InFlight) == 0
	})
	// The crashed broker restarts, a follower now; the Java consumer wakes
	// and acknowledges 5-9 where it got them: refused, they are done.
	if err := c.StartBroker(leader); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the restarted broker back in the ISR", func() bool {
		p, _ := c.Partition("q", 0)
		return slices.Contains(p.ISR, leader)
	})
	if err := js.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for o := int64(5); o <= 9; o++ {
		js.ack(o, "ACCEPT")
	}
	// The client fails acknowledgements whose share session's connection
	// broke (NetworkException, or UnknownServerException, without sending
	// them); one that reaches a broker is refused (NOT_LEADER_OR_FOLLOWER,
	// INVALID_RECORD_STATE). Either way nothing changes.
	errs := js.commit()
	if errs["q-0"] == "" {
		t.Fatalf("the Java consumer's late acknowledgement succeeded: %v", errs)
	}
	t.Logf("the Java consumer's late acknowledgement: %v", errs)
	if st := mustShare(t, c, group); st.StartOffset != 15 || len(st.InFlight) != 0 {
		t.Fatalf("after the late acknowledgement: %+v", st)
	}
	js.close() // it fetches in the background: 15 must go to franz-go
	if _, err := c.ElectLeader("q", 0, leader, false); err != nil {
		t.Fatal(err)
	}
	produceValues(t, c, 0, "15")
	f.pollUntil(c, group, "15 on the restarted leader", func(sp api.SharePartitionState) bool {
		return sp.Leader == leader && sp.StartOffset == 16 && len(sp.InFlight) == 0
	})
	want := append(append([]string{"10/1", "11/1", "12/1", "13/1", "14/1", "11/2"}, runOf(5, 9, 1)...), "15/1")
	if !slices.Equal(f.got, want) {
		t.Fatalf("franz-go deliveries %v, want %v; events:\n%s", f.got, want, shareEvents(c, group))
	}
}

// shareEvents lists group's share-record events, for a failure's message.
func shareEvents(c *server.Cluster, group string) string {
	var b bytes.Buffer
	for _, e := range c.Events(0) {
		if e.Group == group && (e.Type == server.EventShareRecordsReleased || e.Type == server.EventShareRecordsArchived) {
			fmt.Fprintf(&b, "%s %d-%d %s\n", e.Type, e.From, e.To, e.Reason)
		}
	}
	return b.String()
}

func mustShare(t *testing.T, c *server.Cluster, group string) api.SharePartitionState {
	t.Helper()
	gs, ok := c.Group(group)
	if !ok || len(gs.SharePartitions) == 0 {
		t.Fatalf("group %s has no share partition", group)
	}
	return gs.SharePartitions[0]
}
