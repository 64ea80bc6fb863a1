package share

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

var t0 = time.Unix(1000, 0)

func lim() Limits {
	return Limits{LockDuration: 30 * time.Second, DeliveryCountLimit: 3, MaxInFlight: 100}
}

func wantAcq(t *testing.T, got []AcquiredRange, want ...AcquiredRange) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("acquired %v, want %v", got, want)
	}
}

func wantWindow(t *testing.T, p *Partition, start, end int64) {
	t.Helper()
	if p.StartOffset() != start || p.EndOffset() != end {
		t.Fatalf("window [%d,%d), want [%d,%d)", p.StartOffset(), p.EndOffset(), start, end)
	}
}

func wantState(t *testing.T, p *Partition, off int64, st RecordState, count int16) {
	t.Helper()
	s, c, _ := p.State(off)
	if s != st || c != count {
		t.Fatalf("offset %d: %v count %d, want %v count %d", off, s, c, st, count)
	}
}

func TestAcquireNewRecords(t *testing.T) {
	p := NewPartition(10)
	if p.NextFetchOffset() != 10 {
		t.Fatalf("next fetch %d", p.NextFetchOffset())
	}
	got := p.Acquire("m1", t0, []Range{{First: 10, Last: 14}}, 0, false, lim())
	wantAcq(t, got, AcquiredRange{10, 14, 1})
	wantWindow(t, p, 10, 15)
	wantState(t, p, 12, Acquired, 1)
	if p.NextFetchOffset() != 15 {
		t.Fatalf("next fetch %d, want 15", p.NextFetchOffset())
	}
	if d, ok := p.NextDeadline(); !ok || !d.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("deadline %v %v", d, ok)
	}
	// Offsets below the start are not acquired again.
	wantAcq(t, p.Acquire("m2", t0, []Range{{First: 8, Last: 9}}, 0, false, lim()))
}

func TestAcquireStopsAtMaxRecordsOnBatchBoundary(t *testing.T) {
	p := NewPartition(0)
	got := p.Acquire("m1", t0, []Range{{First: 0, Last: 2}, {First: 3, Last: 5}, {First: 6, Last: 9}}, 4, false, lim())
	// 0-2 (3 records), then 3-5 whole: the batch is not split.
	wantAcq(t, got, AcquiredRange{0, 5, 1})
	wantWindow(t, p, 0, 6)
}

func TestAcquireRecordLimitStrict(t *testing.T) {
	p := NewPartition(0)
	got := p.Acquire("m1", t0, []Range{{First: 0, Last: 2}, {First: 3, Last: 5}}, 4, true, lim())
	wantAcq(t, got, AcquiredRange{0, 3, 1})
	wantWindow(t, p, 0, 4)
	got = p.Acquire("m2", t0, []Range{{First: 3, Last: 5}}, 1, true, lim())
	wantAcq(t, got, AcquiredRange{4, 4, 1})
}

func TestAcceptAdvancesStart(t *testing.T) {
	p := NewPartition(0)
	p.Acquire("m1", t0, []Range{{First: 0, Last: 4}}, 0, false, lim())
	if code := ackP(p, "m1", t0, []AckBatch{{First: 2, Last: 3, Types: []AckType{AckAccept}}}, lim()); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	wantWindow(t, p, 0, 5) // 0 and 1 still acquired
	wantState(t, p, 2, Acknowledged, 1)
	ackP(p, "m1", t0, []AckBatch{{First: 0, Last: 1, Types: []AckType{AckAccept}}}, lim())
	wantWindow(t, p, 4, 5) // 0-3 done; 4 acquired
	ackP(p, "m1", t0, []AckBatch{{First: 4, Last: 4, Types: []AckType{AckAccept}}}, lim())
	wantWindow(t, p, 5, 5)
	if p.InFlight() != 0 {
		t.Fatalf("in flight %d", p.InFlight())
	}
}

func TestAcknowledgeTypesPerOffset(t *testing.T) {
	p := NewPartition(0)
	p.Acquire("m1", t0, []Range{{First: 0, Last: 4}}, 0, false, lim())
	code := ackP(p, "m1", t0.Add(time.Second), []AckBatch{{First: 0, Last: 4,
		Types: []AckType{AckAccept, AckRelease, AckReject, AckGap, AckRenew}}}, lim())
	if code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	wantWindow(t, p, 1, 5)
	wantState(t, p, 1, Available, 1)
	wantState(t, p, 2, Archived, 1)
	wantState(t, p, 3, Archived, 1)
	wantState(t, p, 4, Acquired, 1)
	// Renew moved 4's lock to 1s+30s.
	if d, _ := p.NextDeadline(); !d.Equal(t0.Add(31 * time.Second)) {
		t.Fatalf("deadline %v", d)
	}
	// The released record is acquired again, with delivery count 2.
	if p.NextFetchOffset() != 1 {
		t.Fatalf("next fetch %d", p.NextFetchOffset())
	}
	got := p.Acquire("m2", t0, []Range{{First: 1, Last: 4}, {First: 5, Last: 5}}, 0, false, lim())
	wantAcq(t, got, AcquiredRange{1, 1, 2}, AcquiredRange{5, 5, 1})
}

func TestAcknowledgeRefusals(t *testing.T) {
	p := NewPartition(0)
	p.Acquire("m1", t0, []Range{{First: 0, Last: 4}}, 0, false, lim())
	cases := []struct {
		name   string
		member string
		b      AckBatch
		want   int16
	}{
		{"other member", "m2", AckBatch{0, 0, []AckType{AckAccept}}, kerr.InvalidRecordState.Code},
		{"past the end", "m1", AckBatch{4, 5, []AckType{AckAccept}}, kerr.InvalidRecordState.Code},
		{"types count", "m1", AckBatch{0, 2, []AckType{AckAccept, AckAccept}}, kerr.InvalidRequest.Code},
		{"no types", "m1", AckBatch{0, 2, nil}, kerr.InvalidRequest.Code},
		{"bad type", "m1", AckBatch{0, 0, []AckType{5}}, kerr.InvalidRequest.Code},
		{"reversed", "m1", AckBatch{3, 2, []AckType{AckAccept}}, kerr.InvalidRequest.Code},
	}
	for _, c := range cases {
		if got := ackP(p, c.member, t0, []AckBatch{c.b}, lim()); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}
	// All or nothing: a good batch with a bad one applies neither.
	code := ackP(p, "m1", t0, []AckBatch{{0, 0, []AckType{AckAccept}}, {7, 7, []AckType{AckAccept}}}, lim())
	if code != kerr.InvalidRecordState.Code {
		t.Fatalf("mixed: %v", kerr.ErrorForCode(code))
	}
	wantState(t, p, 0, Acquired, 1)
	// An accepted record inside the window cannot be acknowledged again.
	ackP(p, "m1", t0, []AckBatch{{1, 1, []AckType{AckAccept}}}, lim())
	if code := ackP(p, "m1", t0, []AckBatch{{1, 1, []AckType{AckRelease}}}, lim()); code != kerr.InvalidRecordState.Code {
		t.Fatalf("twice: %v", kerr.ErrorForCode(code))
	}
	// Below the start it is done: the acknowledgement is ignored (Kafka
	// 4.4 answers no error), and a batch reaching past the start applies
	// from the start on.
	ackP(p, "m1", t0, []AckBatch{{0, 0, []AckType{AckAccept}}}, lim())
	wantWindow(t, p, 2, 5)
	if code := ackP(p, "m1", t0, []AckBatch{{0, 1, []AckType{AckReject}}}, lim()); code != 0 {
		t.Fatalf("below the start: %v", kerr.ErrorForCode(code))
	}
	if code := ackP(p, "m1", t0, []AckBatch{{0, 2, []AckType{AckAccept, AckAccept, AckRelease}}}, lim()); code != 0 {
		t.Fatalf("reaching past the start: %v", kerr.ErrorForCode(code))
	}
	wantState(t, p, 2, Available, 1)
}

func TestLockExpiryReleases(t *testing.T) {
	p := NewPartition(0)
	p.Acquire("m1", t0, []Range{{First: 0, Last: 1}}, 0, false, lim())
	p.Acquire("m1", t0.Add(10*time.Second), []Range{{First: 2, Last: 2}}, 0, false, lim())
	if ch := p.ExpireLocks(t0.Add(30*time.Second-time.Millisecond), lim()); len(ch) != 0 {
		t.Fatalf("released early: %v", ch)
	}
	ch := p.ExpireLocks(t0.Add(30*time.Second), lim())
	if !slices.Equal(ch, []Change{{0, Available, 1}, {1, Available, 1}}) {
		t.Fatalf("changes %v", ch)
	}
	wantState(t, p, 2, Acquired, 1)
	// An acknowledgement after the lock expired is refused.
	if code := ackP(p, "m1", t0, []AckBatch{{0, 0, []AckType{AckAccept}}}, lim()); code != kerr.InvalidRecordState.Code {
		t.Fatalf("late ack: %v", kerr.ErrorForCode(code))
	}
	if d, _ := p.NextDeadline(); !d.Equal(t0.Add(40 * time.Second)) {
		t.Fatalf("next deadline %v", d)
	}
}

func TestDeliveryCountLimitArchives(t *testing.T) {
	p := NewPartition(0)
	l := lim() // limit 3
	now := t0
	for i := int16(1); i <= 3; i++ {
		got := p.Acquire("m1", now, []Range{{First: 0, Last: 0}, {First: 1, Last: 1}}, 1, false, l)
		wantAcq(t, got, AcquiredRange{0, 0, i})
		now = now.Add(30 * time.Second)
		ch := p.ExpireLocks(now, l)
		want := Available
		if i == 3 {
			want = Archived
		}
		if !slices.Equal(ch, []Change{{0, want, i}}) {
			t.Fatalf("delivery %d: %v", i, ch)
		}
	}
	// Archived at the limit: the start moved past it.
	wantWindow(t, p, 1, 1)
	// A RELEASE at the limit archives as well.
	p.Acquire("m1", now, []Range{{First: 1, Last: 1}}, 0, false, Limits{LockDuration: time.Second, DeliveryCountLimit: 1})
	ackP(p, "m1", now, []AckBatch{{1, 1, []AckType{AckRelease}}}, Limits{DeliveryCountLimit: 1})
	wantWindow(t, p, 2, 2)
}

func TestMaxInFlight(t *testing.T) {
	p := NewPartition(0)
	l := lim()
	l.MaxInFlight = 4
	got := p.Acquire("m1", t0, []Range{{First: 0, Last: 2}, {First: 3, Last: 9}}, 0, false, l)
	wantAcq(t, got, AcquiredRange{0, 3, 1})
	if p.Available(10, l) {
		t.Fatal("more available past the in-flight limit")
	}
	wantAcq(t, p.Acquire("m2", t0, []Range{{First: 4, Last: 9}}, 0, false, l))
	ackP(p, "m1", t0, []AckBatch{{0, 1, []AckType{AckAccept}}}, l)
	wantWindow(t, p, 2, 4)
	got = p.Acquire("m2", t0, []Range{{First: 4, Last: 9}}, 0, false, l)
	wantAcq(t, got, AcquiredRange{4, 5, 1})
}

func TestSkipAndHolesArchived(t *testing.T) {
	p := NewPartition(0)
	// 0-1 records, 2-3 aborted (read_committed), 4 a marker, 6-7 records
	// after a compacted hole at 5.
	got := p.Acquire("m1", t0, []Range{{First: 0, Last: 1}, {First: 2, Last: 3, Skip: true}, {First: 4, Last: 4, Skip: true}, {First: 6, Last: 7}}, 0, false, lim())
	wantAcq(t, got, AcquiredRange{0, 1, 1}, AcquiredRange{6, 7, 1})
	wantState(t, p, 3, Archived, 0)
	wantState(t, p, 5, Archived, 0)
	ackP(p, "m1", t0, []AckBatch{{0, 1, []AckType{AckAccept}}}, lim())
	wantWindow(t, p, 6, 8)
}

func TestReleaseMember(t *testing.T) {
	p := NewPartition(0)
	p.Acquire("m1", t0, []Range{{First: 0, Last: 1}}, 0, false, lim())
	p.Acquire("m2", t0, []Range{{First: 2, Last: 2}}, 0, false, lim())
	ch := p.ReleaseMember("m1", lim())
	if !slices.Equal(ch, []Change{{0, Available, 1}, {1, Available, 1}}) {
		t.Fatalf("changes %v", ch)
	}
	wantState(t, p, 2, Acquired, 1)
}

func TestSnapshotAndRestore(t *testing.T) {
	p := NewPartition(0)
	p.Acquire("m1", t0, []Range{{First: 0, Last: 5}}, 0, false, lim())
	ackP(p, "m1", t0, []AckBatch{{0, 0, []AckType{AckAccept}}, {2, 2, []AckType{AckRelease}}, {3, 3, []AckType{AckReject}}}, lim())
	p.Acquire("m2", t0, []Range{{First: 2, Last: 2}}, 0, false, lim()) // 2: count 2, acquired
	st := p.Snapshot()
	want := []StateBatch{
		{1, 1, Available, 0}, // acquired at count 1: persisted as before it
		{2, 2, Available, 1}, // acquired at count 2: the release was persisted
		{3, 3, Archived, 1},
		{4, 5, Available, 0},
	}
	if st.StartOffset != 1 || !slices.Equal(st.Batches, want) || st.DeliveryCompleteCount != 1 { // 3 archived; 0 is below the start
		t.Fatalf("snapshot %+v", st)
	}
	// A new leader: every acquired record is Available again, and its next
	// delivery has the count it had.
	q := Restore(st)
	wantWindow(t, q, 1, 6)
	got := q.Acquire("m3", t0, []Range{{First: 1, Last: 6}}, 0, false, lim())
	wantAcq(t, got, AcquiredRange{1, 1, 1}, AcquiredRange{2, 2, 2}, AcquiredRange{4, 6, 1})
}

// DeliveryCompleteCount counts the window's acknowledged and archived
// offsets, not acquired ones, and drops what the start moves past.
func TestSnapshotDeliveryCompleteCount(t *testing.T) {
	p := NewPartition(10)
	if st := p.Snapshot(); st.DeliveryCompleteCount != 0 || st.StartOffset != 10 {
		t.Fatalf("empty: %+v", st)
	}
	p.Acquire("m1", t0, []Range{{First: 10, Last: 15}, {First: 17, Last: 17}}, 0, false, lim()) // 16: a hole, archived
	ackP(p, "m1", t0, []AckBatch{{11, 12, []AckType{AckAccept}}, {13, 13, []AckType{AckReject}}, {14, 14, []AckType{AckRelease}}}, lim())
	// 10 acquired, 11-12 acknowledged, 13 archived, 14 available, 15 and
	// 17 acquired, 16 archived.
	if st := p.Snapshot(); st.StartOffset != 10 || st.DeliveryCompleteCount != 4 {
		t.Fatalf("window 10-17: %+v", st)
	}
	ackP(p, "m1", t0, []AckBatch{{10, 10, []AckType{AckAccept}}}, lim())           // the start moves to 14
	if st := p.Snapshot(); st.StartOffset != 14 || st.DeliveryCompleteCount != 1 { // 16
		t.Fatalf("start 14: %+v", st)
	}
	// A new leader computes the same from the persisted batches.
	if st := Restore(p.Snapshot()).Snapshot(); st.StartOffset != 14 || st.DeliveryCompleteCount != 1 {
		t.Fatalf("restored: %+v", st)
	}
}

func TestReset(t *testing.T) {
	p := NewPartition(0)
	p.Acquire("m1", t0, []Range{{First: 0, Last: 5}}, 0, false, lim())
	p.Reset(3)
	wantWindow(t, p, 3, 6)
	p.Reset(10)
	wantWindow(t, p, 10, 10)
}

// ackP is Acknowledge's error alone.
func ackP(p *Partition, member string, now time.Time, b []AckBatch, l Limits) int16 {
	code, _ := p.Acknowledge(member, now, b, l)
	return code
}

func TestReleaseAtLimitReportsArchived(t *testing.T) {
	p := NewPartition(0)
	l := Limits{LockDuration: time.Second, DeliveryCountLimit: 2}
	p.Acquire("m1", t0, []Range{{First: 0, Last: 1}}, 0, false, l)
	if code, ch := p.Acknowledge("m1", t0, []AckBatch{{0, 1, []AckType{AckRelease}}}, l); code != 0 || len(ch) != 0 {
		t.Fatalf("first release: %d %v", code, ch)
	}
	p.Acquire("m1", t0, []Range{{First: 0, Last: 1}}, 0, false, l)
	code, ch := p.Acknowledge("m1", t0, []AckBatch{{0, 1, []AckType{AckRelease, AckAccept}}}, l)
	if code != 0 || !slices.Equal(ch, []Change{{0, Archived, 2}}) {
		t.Fatalf("release at the limit: %d %v", code, ch)
	}
	wantWindow(t, p, 2, 2)
}
