package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCommittedOffsetsSurviveCoordinatorCrash commits offsets, crashes the
// coordinator's broker and reads them back from the new coordinator, which
// rebuilt the group from its replica of __consumer_offsets.
func TestCommittedOffsetsSurviveCoordinatorCrash(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("events", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c, kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond })))
	offsets := kadm.Offsets{}
	offsets.AddOffset("events", 0, 42, -1)
	offsets.AddOffset("events", 2, 7, -1)
	resp, err := adm.CommitOffsets(ctx, "g1", offsets)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	first, code := c.coordinatorOf("g1")
	if code != 0 {
		t.Fatal(code)
	}
	if err := c.StopBroker(first, StopCrash); err != nil {
		t.Fatal(err)
	}
	second, code := c.coordinatorOf("g1")
	if code != 0 || second == first {
		t.Fatalf("coordinator after crash %d (code %d), was %d", second, code, first)
	}
	// A fresh client seeded with the live brokers only, so the test does
	// not depend on how franz-go retries a broker it can no longer dial.
	var live []string
	for _, b := range c.State().Brokers {
		if b.Up {
			live = append(live, b.Address)
		}
	}
	adm = kadm.NewClient(newClient(t, c, kgo.SeedBrokers(live...)))
	got, err := adm.FetchOffsets(ctx, "g1")
	if err != nil || got.Error() != nil {
		t.Fatalf("fetch: %v %v", err, got.Error())
	}
	if o, _ := got.Lookup("events", 0); o.At != 42 {
		t.Errorf("events/0 at %d, want 42", o.At)
	}
	if o, _ := got.Lookup("events", 2); o.At != 7 {
		t.Errorf("events/2 at %d, want 7", o.At)
	}
	if _, ok := got.Lookup("events", 1); ok {
		t.Error("events/1 was never committed")
	}
}
