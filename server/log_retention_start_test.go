package server

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The first retention check runs log.initial.task.delay.ms (30 s) after
// the cluster starts, the next ones every log.retention.check.interval.ms
// from there, as Kafka's LogManager schedules its retention task: records
// older than retention.ms produced right after start are gone 30 s later,
// not 5 minutes later.
func TestRetentionFirstCheckAfterInitialDelay(t *testing.T) {
	c := NewTestCluster(t, Config{Clock: clock.NewManual(time.Unix(1_800_000_000, 0))})
	if err := c.CreateTopic("old", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	old := c.Now().Add(-30 * 24 * time.Hour) // beyond the default retention.ms of 7 days
	produceAt(t, cl, "old", 3, 10, old)
	steps := []struct {
		advance time.Duration
		start   int64
	}{
		{30*time.Second - time.Millisecond, 0},
		{time.Millisecond, 3}, // the first check, at 30 s
	}
	for _, s := range steps {
		if err := c.AdvanceClock(s.advance); err != nil {
			t.Fatal(err)
		}
		waitLogStarts(t, c, "old", s.start, c.Now().Sub(time.Unix(1_800_000_000, 0)))
	}
	produceAt(t, cl, "old", 2, 10, old)
	for _, s := range []struct {
		advance time.Duration
		start   int64
	}{
		{5*time.Minute - time.Millisecond, 3},
		{time.Millisecond, 5}, // the second, 5 minutes after the first
	} {
		if err := c.AdvanceClock(s.advance); err != nil {
			t.Fatal(err)
		}
		waitLogStarts(t, c, "old", s.start, c.Now().Sub(time.Unix(1_800_000_000, 0)))
	}
}

// log.initial.task.delay.ms set as a broker config (the reference
// cluster's server.properties sets it so) moves the first check.
func TestRetentionInitialDelayConfig(t *testing.T) {
	c := NewTestCluster(t, Config{Clock: clock.NewManual(time.Unix(1_800_000_000, 0)),
		BrokerConfigs: map[string]string{"log.initial.task.delay.ms": "3600000"}})
	if err := c.CreateTopic("old", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	produceAt(t, cl, "old", 3, 10, c.Now().Add(-30*24*time.Hour))
	if err := c.AdvanceClock(time.Hour - time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitLogStarts(t, c, "old", 0, time.Hour)
	if err := c.AdvanceClock(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitLogStarts(t, c, "old", 3, time.Hour)
}

// waitLogStarts waits until every replica of topic/0 has log start want
// (followers follow the leader's on their next fetch); want 0 is checked
// at once.
func waitLogStarts(t *testing.T, c *Cluster, topic string, want int64, at time.Duration) {
	t.Helper()
	if want == 0 {
		if got := logStarts(t, c, topic); got[0] != 0 || got[1] != 0 || got[2] != 0 {
			t.Fatalf("at %v: log starts %v, want 0", at, got)
		}
		return
	}
	waitFor(t, 10*time.Second, "every replica's log start at the retention check", func() bool {
		s := logStarts(t, c, topic)
		return s[0] == want && s[1] == want && s[2] == want
	})
}
