package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitForAfterSeesOnlyNewEvents: dropping a live follower from the
// ISR twice gives two isr_expanded events. WaitFor finds the first one
// both times (the pitfall); WaitForAfter from the sequence taken before
// each drop finds each drop's own rejoin.
func TestWaitForAfterSeesOnlyNewEvents(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	scMust(t, c.CreateTopic("w", 1, 3, nil))

	var evs [2]Event
	for i := range evs {
		seq := c.LastEventSeq()
		scMust(t, c.SetISR("w", 0, []int32{1, 2}))
		e, err := c.WaitForAfter(ctx, seq, ISRExpanded("w", 0))
		if err != nil || e.Seq <= seq || e.Broker != 3 {
			t.Fatalf("drop %d: WaitForAfter(%d) = %+v, %v", i+1, seq, e, err)
		}
		evs[i] = e
	}
	if evs[1].Seq <= evs[0].Seq {
		t.Fatalf("the second rejoin %d is not after the first %d", evs[1].Seq, evs[0].Seq)
	}
	if e, err := c.WaitFor(ctx, ISRExpanded("w", 0)); err != nil || e.Seq != evs[0].Seq {
		t.Fatalf("WaitFor = %+v, %v; want the first rejoin, past events count", e, err)
	}

	// Nothing after the last one: the wait ends with the context.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.WaitForAfter(short, evs[1].Seq, ISRExpanded("w", 0)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForAfter with nothing new: %v, want DeadlineExceeded", err)
	}
}

// TestInt32ForFaultPartition: docs/failures.md's fault example compiles as
// written and the rule is scoped to partition 0.
func TestInt32ForFaultPartition(t *testing.T) {
	c := NewTestCluster(t, Config{})
	r, err := c.InjectFault(Fault{API: "Produce", Topic: "orders", Partition: Int32(0), Error: "NOT_ENOUGH_REPLICAS", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st := r.State(); st.Partition == nil || *st.Partition != 0 {
		t.Fatalf("rule partition %v, want 0", st.Partition)
	}
}
