package server

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestEventsLogStartMoved: a DeleteRecords through franz-go's admin client
// moves every replica's log start (log_start_moved, delete_records); a
// follower that was out of the ISR and ends below the new log start finds
// its next fetch out of range and restarts its log at the leader's log
// start (follower_reset), then catches up.
func TestEventsLogStartMoved(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopic("d", 1, 3, nil))
	ctx := testContext(t)
	cl := newClient(t, c, kgo.DefaultProduceTopic("d"), kgo.RequiredAcks(kgo.AllISRAcks()))
	produce := func(n int) {
		t.Helper()
		for range n {
			scMust(t, cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr())
		}
	}
	produce(2)
	waitFor(t, 10*time.Second, "follower 3 at 2", func() bool {
		ps, _ := c.Partition("d", 0)
		return ps.Replicas[2].LogEndOffset == 2
	})
	scMust(t, c.PauseReplica("d", 0, 3))
	scMust(t, c.SetISR("d", 0, []int32{1, 2}))
	produce(3) // offsets 2-4 on 1 and 2 only
	since := evLastSeq(c)

	adm := kadm.NewClient(cl)
	rs, err := adm.DeleteRecords(ctx, kadm.Offsets{"d": {0: {Topic: "d", Partition: 0, At: 4}}})
	scMust(t, err)
	if r, _ := rs.Lookup("d", 0); r.Err != nil || r.LowWatermark != 4 {
		t.Fatalf("DeleteRecords: %+v", r)
	}
	// Follower 3 ends at 2: its log start stops there.
	evCheckStory(t, c, since, "d",
		"log_start_moved d/0 1 (delete_records)",
		"log_start_moved d/0 2 (delete_records)",
		"log_start_moved d/0 3 (delete_records)")
	var moved [][3]int64
	for _, e := range c.Events(since) {
		moved = append(moved, [3]int64{int64(e.Broker), e.From, e.To})
	}
	if want := [][3]int64{{1, 0, 4}, {2, 0, 4}, {3, 0, 2}}; !slices.Equal(moved, want) {
		t.Fatalf("log starts moved %v, want %v", moved, want)
	}

	since = evLastSeq(c)
	scMust(t, c.ResumeReplica("d", 0, 3))
	after := func(m EventMatcher) EventMatcher { return func(e Event) bool { return e.Seq > since && m(e) } }
	e, err := c.WaitFor(ctx, after(LogStartMoved("d", 0)))
	scMust(t, err)
	if e.Broker != 3 || e.From != 2 || e.To != 4 || e.Reason != "follower_reset" {
		t.Fatalf("follower reset %+v, want broker 3 from 2 to 4 (follower_reset)", e)
	}
	if _, err := c.WaitFor(ctx, after(ISRExpanded("d", 0))); err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Partition("d", 0)
	if r := ps.Replicas[2]; r.LogStartOffset != 4 || r.LogEndOffset != 5 {
		t.Fatalf("follower 3 after the reset: %+v, want log 4-5", r)
	}
}
