package share

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// MemPersister keeps the delivery complete count as the share
// coordinator does: 0 once initialized, -1 for state never initialized,
// what the leader wrote afterwards; and its epoch rules.
func TestMemPersisterDeliveryCompleteCount(t *testing.T) {
	m := NewMemPersister()
	k := Key{Group: "g", Partition: 0}
	if st, code := m.Read(k, 0); code != 0 || st.StartOffset != -1 || st.DeliveryCompleteCount != -1 {
		t.Fatalf("never initialized: %+v %d", st, code)
	}
	if code := m.Initialize(k, 1, 5); code != 0 {
		t.Fatal(code)
	}
	if st, code := m.ReadSummary(k, 2); code != 0 || st.StartOffset != 5 || st.DeliveryCompleteCount != 0 || st.LeaderEpoch != 2 {
		t.Fatalf("initialized: %+v %d", st, code)
	}
	p := NewPartition(5)
	p.Acquire("m", t0, []Range{{First: 5, Last: 9}}, 0, false, lim())
	ackP(p, "m", t0, []AckBatch{{6, 7, []AckType{AckAccept}}, {9, 9, []AckType{AckReject}}}, lim())
	w := p.Snapshot()
	w.StateEpoch, w.LeaderEpoch = 1, 2
	if code := m.Write(k, w); code != 0 {
		t.Fatal(code)
	}
	if st, _ := m.Read(k, 2); st.StartOffset != 5 || st.DeliveryCompleteCount != 3 || len(st.Batches) != 4 {
		t.Fatalf("after the write: %+v", st)
	}
	w.LeaderEpoch = 1
	if code := m.Write(k, w); code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("an older leader's write: %d", code)
	}
}
