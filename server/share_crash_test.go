package server

import (
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The share partition's leader crashes with records acquired: the crashed
// broker writes nothing (its connections closing release nothing), so the
// new leader reads the state as last written: a record released once and
// acquired again comes at the same count (2), a first delivery at 1, an
// accepted record never.
func TestShareLeaderCrashMidFlight(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "init", m.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 3)
	wantAcquired(t, "first", m.fetch("q", time.Second), "0-2/1")
	wantAcquired(t, "1 released", m.fetch("q", time.Second, ack{0, 0, []int8{1}}, ack{1, 1, []int8{2}}), "1-1/2")
	old := leaderOf(c, "q", 0)
	if err := c.StopBroker(old, StopCrash); err != nil {
		t.Fatal(err)
	}
	next := leaderOf(c, "q", 0)
	if next == old || next < 0 {
		t.Fatalf("leader %d after crashing %d", next, old)
	}
	for _, e := range c.Events(0) {
		if e.Type == EventShareRecordsReleased && e.Group == "sg" {
			t.Fatalf("the crashed broker released records: %+v", e)
		}
	}
	m2 := newShareMember(t, c, "sg", "m1")
	wantAcquired(t, "on the new leader", m2.fetchFrom(next, "q", 0, time.Second), "1-1/2", "2-2/1")
	if r := m2.fetchFrom(next, "q", 0, 10*time.Millisecond, ack{1, 2, []int8{1}}); ackCode(r) != 0 {
		t.Fatalf("ack on the new leader: %v", kerr.ErrorForCode(ackCode(r)))
	}
	if err := c.StartBroker(old); err != nil {
		t.Fatal(err)
	}
	gs, _ := c.Group("sg")
	if sp := gs.SharePartitions[0]; sp.StartOffset != 3 || len(sp.InFlight) != 0 {
		t.Fatalf("after the crash: %+v", sp)
	}
}

// The share coordinator (the leader of the group's __share_group_state
// partition) crashes with records acquired on another broker: the
// partition's leader keeps its acquisitions; acknowledgements after the
// crash are written to the new coordinator and hold; a leader change
// afterwards reads them back.
func TestShareCoordinatorCrashMidFlight(t *testing.T) {
	c, _ := newShareCluster(t)
	c.sharePersister = fastPersister(c)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "init", m.fetch("q", 10*time.Millisecond))
	k := share.Key{Group: "sg", TopicID: c.topic("q").id, Partition: 0}
	st, _ := c.Partition(shareStateTopic, stateIndex(c, k))
	coord := st.Leader
	if leaderOf(c, "q", 0) == coord {
		if _, err := c.ElectLeader("q", 0, coord%3+1, false); err != nil {
			t.Fatal(err)
		}
		m.epochs = map[int32]int32{}
		wantAcquired(t, "init on the new leader", m.fetch("q", 10*time.Millisecond))
	}
	leader := leaderOf(c, "q", 0)
	shareProduce(t, c, "q", 4)
	wantAcquired(t, "first", m.fetch("q", time.Second), "0-3/1")
	if err := c.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	// 0 accepted, 1 released: written through the new coordinator.
	r := m.fetchFrom(leader, "q", 0, time.Second, ack{0, 0, []int8{1}}, ack{1, 1, []int8{2}})
	if ackCode(r) != 0 {
		t.Fatalf("ack after the coordinator crash: %v", kerr.ErrorForCode(ackCode(r)))
	}
	wantAcquired(t, "1 again", r, "1-1/2")
	if err := c.StartBroker(coord); err != nil {
		t.Fatal(err)
	}
	if r := m.fetchFrom(leader, "q", 0, 10*time.Millisecond, ack{1, 2, []int8{1}}); ackCode(r) != 0 {
		t.Fatalf("ack after the restart: %v", kerr.ErrorForCode(ackCode(r)))
	}
	// 3 still acquired (count 1, never written). A new leader reads the
	// state: 0-2 done, 3 again at 1.
	next := leader%3 + 1
	if _, err := c.ElectLeader("q", 0, next, false); err != nil {
		t.Fatal(err)
	}
	m2 := newShareMember(t, c, "sg", "m1")
	wantAcquired(t, "on the next leader", m2.fetchFrom(next, "q", 0, time.Second), "3-3/1")
	for _, e := range c.Events(0) {
		if e.Type == EventShareRecordsReleased && e.Group == "sg" && !strings.Contains(e.Reason, "left") {
			t.Fatalf("unexpected release: %+v", e)
		}
	}
}
