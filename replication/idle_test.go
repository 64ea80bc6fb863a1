package replication

import (
	"slices"
	"testing"
	"time"
)

// An idle partition's followers keep fetching (Kafka's long polls return
// empty every replica.fetch.wait.max.ms), and each empty fetch at the
// leader's LEO refreshes the leader's view of them, so nothing leaves the
// ISR however long the partition stays idle; a follower that stops fetching
// leaves it one lag time after its last fetch.
func TestIdleFollowersStayInISR(t *testing.T) {
	p := newPartition(t, 2)
	if v, ok := p.FollowerView(2); !ok || v.LEO != -1 || !v.LastCaughtUp.Equal(t0) || !v.LastFetch.IsZero() {
		t.Fatalf("fresh partition: view of 2 = %+v, %v; want LEO -1, caught up at creation, never fetched", v, ok)
	}
	if _, ok := p.FollowerView(1); ok {
		t.Fatal("the leader has a follower view of itself")
	}
	wait := 500 * time.Millisecond
	var last time.Time
	// Ten minutes of nothing: both followers fetch empty every 500 ms while
	// the leader checks the ISR every 15 s; follower 3 stops after 2 minutes.
	for now := t0; now.Before(t0.Add(10 * time.Minute)); now = now.Add(wait) {
		fetch(t, p, 2, now)
		if now.Before(t0.Add(2 * time.Minute)) {
			fetch(t, p, 3, now)
			last = now
		}
		if now.Sub(t0)%(15*time.Second) == 0 {
			if out := p.MaybeShrinkISR(now); len(out) > 0 {
				t.Fatalf("at %v: removed %v from an idle, caught-up partition", now.Sub(t0), out)
			}
		}
	}
	if !slices.Equal(p.ISR(), []int32{1, 2, 3}) {
		t.Fatalf("ISR %v, want [1 2 3]: 3 stopped fetching but is at the LEO", p.ISR())
	}
	end := t0.Add(10*time.Minute - wait)
	if v, _ := p.FollowerView(2); v.LEO != 0 || !v.LastFetch.Equal(end) || !v.LastCaughtUp.Equal(end) {
		t.Fatalf("view of 2 = %+v, want LEO 0, fetched and caught up at %v", v, end)
	}
	if v, _ := p.FollowerView(3); !v.LastCaughtUp.Equal(last) {
		t.Fatalf("view of 3 = %+v, want last caught up at %v", v, last)
	}
	// A write leaves 3 behind: it is out one lag time after its last
	// caught-up fetch, which was long ago, so at the next check.
	mustAppend(t, p, batch(4), -1)
	fetch(t, p, 2, end.Add(wait))
	fetch(t, p, 2, end.Add(2*wait))
	checkReplicas(t, p, map[int32]offsets{1: {4, 0}, 2: {4, 0}, 3: {0, 0}})
	if out := p.MaybeShrinkISR(end.Add(2 * wait)); !slices.Equal(out, []int32{3}) {
		t.Fatalf("removed %v, want [3]", out)
	}
	// The HW moves with the one follower left (min ISR 2).
	checkReplicas(t, p, map[int32]offsets{1: {4, 4}, 2: {4, 0}, 3: {0, 0}})
}

// After a leader change the new leader knows nothing of its followers until
// they fetch, but counts the ISR members as caught up from the moment it
// took over: an idle follower that fetches within the lag stays.
func TestIdleFollowersStayAfterLeaderChange(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(2), 1)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	at := t0.Add(time.Minute)
	if code := p.Elect(2, false, at); code != 0 {
		t.Fatalf("elect 2: %d", code)
	}
	if v, _ := p.FollowerView(3); v.LEO != -1 || !v.LastCaughtUp.Equal(at) {
		t.Fatalf("view of 3 after the election = %+v, want LEO -1, caught up at %v", v, at)
	}
	for i := 1; i <= 200; i++ {
		now := at.Add(time.Duration(i) * 500 * time.Millisecond)
		fetch(t, p, 1, now)
		fetch(t, p, 3, now)
		if out := p.MaybeShrinkISR(now); len(out) > 0 {
			t.Fatalf("removed %v at +%v", out, now.Sub(at))
		}
	}
	if v, _ := p.FollowerView(1); v.LEO != 2 {
		t.Fatalf("view of 1 = %+v, want LEO 2", v)
	}
}
