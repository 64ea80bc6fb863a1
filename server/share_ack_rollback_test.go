package server

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
)

// failingWrites is a persister whose writes fail while fail is set.
type failingWrites struct {
	share.Persister
	fail atomic.Bool
}

func (f *failingWrites) Write(k share.Key, st share.PartitionState) int16 {
	if f.fail.Load() {
		return kerr.CoordinatorNotAvailable.Code
	}
	return f.Persister.Write(k, st)
}

// An acknowledgement whose state write fails is undone, as Kafka's share
// partition rolls it back: the member still holds the records and can
// acknowledge them again; nothing was delivered twice in between.
func TestShareAcknowledgeRolledBackWhenWriteFails(t *testing.T) {
	c, _ := newShareCluster(t)
	fw := &failingWrites{Persister: c.sharePersister}
	c.sharePersister = fw // before any share request
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "the opening fetch", m.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 3)
	wantAcquired(t, "offsets 0-2", m.fetch("q", time.Second), "0-2/1")
	fw.fail.Store(true)
	r := m.fetch("q", 10*time.Millisecond, ack{0, 1, []int8{1, 3}})
	if ackCode(r) != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("ack while writes fail: %v", kerr.ErrorForCode(ackCode(r)))
	}
	wantAcquired(t, "nothing while the member holds 0-2", r)
	gs, _ := c.Group("sg")
	if sp := gs.SharePartitions[0]; sp.StartOffset != 0 || len(sp.InFlight) != 3 || sp.InFlight[0].State != "ACQUIRED" || sp.InFlight[1].State != "ACQUIRED" {
		t.Fatalf("after the failed write: %+v", sp)
	}
	fw.fail.Store(false)
	r = m.fetch("q", 10*time.Millisecond, ack{0, 2, []int8{1, 3, 1}})
	if ackCode(r) != 0 {
		t.Fatalf("ack again: %v", kerr.ErrorForCode(ackCode(r)))
	}
	gs, _ = c.Group("sg")
	if sp := gs.SharePartitions[0]; sp.StartOffset != 3 || len(sp.InFlight) != 0 {
		t.Fatalf("after the second ack: %+v", sp)
	}
}
