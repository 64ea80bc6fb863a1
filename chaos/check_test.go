package chaos

import (
	"slices"
	"strings"
	"testing"
)

var tp0 = TP{Topic: "orders", Partition: 0}

// logOf builds a final log of batches [base, end) with the given CRCs.
func logOf(start int64, batches ...LogBatch) Log {
	l := Log{Leader: 1, Start: start, Batches: batches}
	if n := len(batches); n > 0 {
		l.End = batches[n-1].End
	}
	return l
}

func write(base, end int64, crc uint32, acks int16, seq uint64) Write {
	return Write{TP: tp0, Base: base, End: end, CRC: crc, ProducerID: -1, Acks: acks, Acked: true, Seq: seq}
}

func only(t *testing.T, r Report) PartitionReport {
	t.Helper()
	if len(r.Partitions) != 1 {
		t.Fatalf("want one partition, got %+v", r.Partitions)
	}
	return r.Partitions[0]
}

// A leader crash after an acks=1 write: the new leader never had it. Kafka
// allows that; the report says so and names the election and the action.
func TestCheckAcks1LossOnLeaderCrashIsAllowed(t *testing.T) {
	in := Input{
		Writes: []Write{write(0, 5, 0xa, 1, 10), write(5, 8, 0xb, 1, 11), write(8, 10, 0xc, 1, 12)},
		Logs:   map[TP]Log{tp0: logOf(0, LogBatch{Base: 0, End: 5, CRC: 0xa}, LogBatch{Base: 5, End: 7, CRC: 0xd})},
		Decisions: []Decision{
			{Seq: 13, Kind: DecisionAction, Detail: "#1 at 1s: crash broker 1"},
			{Seq: 14, Kind: DecisionElection, TP: tp0, Broker: 2},
		},
	}
	r := Check(in)
	p := only(t, r)
	if p.AckedBatches != 3 || p.AckedRecords != 10 {
		t.Fatalf("acked %d batches, %d records", p.AckedBatches, p.AckedRecords)
	}
	if len(p.Lost) != 1 {
		t.Fatalf("lost %+v", p.Lost)
	}
	l := p.Lost[0]
	if l.From != 5 || l.To != 10 || l.Batches != 2 || l.Acks != 1 || !l.Allowed {
		t.Fatalf("loss %+v", l)
	}
	if l.Cause != "clean election of broker 2 after chaos #1 at 1s: crash broker 1" || !strings.Contains(l.Why, "acks=1") {
		t.Fatalf("cause %q, why %q", l.Cause, l.Why)
	}
	if v := r.Violations(); len(v) != 0 {
		t.Fatalf("violations %v", v)
	}
}

// The same loss of acks=all writes after a clean election is what Kafka
// promises never happens.
func TestCheckAcksAllLossAfterCleanElectionViolates(t *testing.T) {
	in := Input{
		Writes:    []Write{write(0, 5, 0xa, -1, 10), write(5, 8, 0xb, -1, 11)},
		Logs:      map[TP]Log{tp0: logOf(0, LogBatch{Base: 0, End: 5, CRC: 0xa})},
		Decisions: []Decision{{Seq: 14, Kind: DecisionElection, TP: tp0, Broker: 2}},
	}
	r := Check(in)
	v := r.Violations()
	if len(v) != 1 || v[0].Kind != "lost" || !strings.Contains(v[0].Detail, "acks=-1 offsets [5, 8) lost") {
		t.Fatalf("violations %v", v)
	}
}

// An unclean election's loss of acks=all writes is allowed, with its cause.
func TestCheckUncleanElectionLossIsAllowedWithCause(t *testing.T) {
	in := Input{
		Writes: []Write{write(0, 5, 0xa, -1, 10), write(5, 8, 0xb, -1, 11)},
		Logs:   map[TP]Log{tp0: logOf(0, LogBatch{Base: 0, End: 3, CRC: 0xe})},
		Decisions: []Decision{
			{Seq: 12, Kind: DecisionAction, Detail: "#4 at 2s: unclean_elect pick 9"},
			{Seq: 13, Kind: DecisionElection, TP: tp0, Broker: 3, Unclean: true},
		},
	}
	r := Check(in)
	p := only(t, r)
	if len(p.Lost) != 1 || p.Lost[0].From != 0 || p.Lost[0].To != 8 || !p.Lost[0].Allowed ||
		p.Lost[0].Cause != "unclean election of broker 3 after chaos #4 at 2s: unclean_elect pick 9" ||
		!strings.Contains(p.Lost[0].Why, "unclean election") {
		t.Fatalf("lost %+v", p.Lost)
	}
	if len(r.Violations()) != 0 {
		t.Fatal(r.Violations())
	}
	// A loss before the write does not explain it.
	in.Writes[0].Seq, in.Writes[1].Seq = 20, 21
	if v := Check(in).Violations(); len(v) != 1 {
		t.Fatalf("an election before the write excused its loss: %v", v)
	}
}

func TestCheckPowerLossWithoutFlush(t *testing.T) {
	in := Input{
		Writes:    []Write{write(0, 4, 0xa, -1, 10)},
		Logs:      map[TP]Log{tp0: logOf(0)},
		Decisions: []Decision{{Seq: 11, Kind: DecisionPowerLoss, Broker: 1}, {Seq: 12, Kind: DecisionTruncated, TP: tp0, Broker: 1, From: 4, To: 0, Detail: "power loss"}},
	}
	p := only(t, Check(in))
	if len(p.Lost) != 1 || !p.Lost[0].Allowed || p.Lost[0].Cause != "broker 1 truncated from 4 to 0 (power loss)" {
		t.Fatalf("lost %+v", p.Lost)
	}
	in.Flushed = true
	if v := Check(in).Violations(); len(v) != 1 {
		t.Fatalf("flushed writes lost without a violation: %v", v)
	}
}

func TestCheckNotLost(t *testing.T) {
	unacked := write(9, 12, 0xf, -1, 3)
	unacked.Acked = false
	in := Input{
		// Deleted by retention, still there, never acknowledged.
		Writes: []Write{write(0, 5, 0xa, -1, 1), write(5, 9, 0xb, -1, 2), unacked},
		Logs:   map[TP]Log{tp0: logOf(5, LogBatch{Base: 5, End: 9, CRC: 0xb})},
	}
	p := only(t, Check(in))
	if len(p.Lost) != 0 || p.AckedBatches != 2 {
		t.Fatalf("%+v", p)
	}
	// Without a leader nothing can be checked, and the report says so.
	in.Logs = nil
	if p := only(t, Check(in)); !p.Leaderless || len(p.Lost) != 0 {
		t.Fatalf("%+v", p)
	}
}

func TestCheckDuplicates(t *testing.T) {
	retried := write(3, 6, 0xa, 1, 2)
	retried.Acked = false
	idem := Write{TP: tp0, Base: 6, End: 7, CRC: 0xb, ProducerID: 7, Acks: -1, Acked: true}
	idem2 := idem
	idem2.Base, idem2.End = 7, 8
	in := Input{
		Writes: []Write{write(0, 3, 0xa, 1, 1), retried, idem, idem2},
		Logs: map[TP]Log{tp0: logOf(0, LogBatch{Base: 0, End: 3, CRC: 0xa}, LogBatch{Base: 3, End: 6, CRC: 0xa},
			LogBatch{Base: 6, End: 7, CRC: 0xb, ProducerID: 7}, LogBatch{Base: 7, End: 8, CRC: 0xb, ProducerID: 7})},
	}
	r := Check(in)
	p := only(t, r)
	if len(p.Duplicates) != 2 || !p.Duplicates[0].Allowed || p.Duplicates[0].Offsets[0] != 0 || p.Duplicates[0].Offsets[1] != 3 ||
		p.Duplicates[1].Allowed || p.Duplicates[1].ProducerID != 7 {
		t.Fatalf("duplicates %+v", p.Duplicates)
	}
	if v := r.Violations(); len(v) != 1 || v[0].Kind != "duplicate" {
		t.Fatalf("violations %v", v)
	}
}

// TestCheckDuplicatesNeedTheSameBatch: two batches of one idempotent
// producer with the same CRC but other sequences are not a duplicate (a
// run found such CRC collisions between consecutive single-record batches
// 5,000 offsets apart).
func TestCheckDuplicatesNeedTheSameBatch(t *testing.T) {
	a := Write{TP: tp0, Base: 0, End: 1, CRC: 0x67274a62, ProducerID: 7, Sequence: 0, Acks: -1, Acked: true}
	b := a
	b.Base, b.End, b.Sequence = 1, 2, 1
	c := a
	c.Base, c.End = 2, 3 // the same batch again: sequence 0
	in := Input{
		Writes: []Write{a, b, c},
		Logs: map[TP]Log{tp0: logOf(0, LogBatch{Base: 0, End: 1, CRC: a.CRC, ProducerID: 7}, LogBatch{Base: 1, End: 2, CRC: a.CRC, ProducerID: 7},
			LogBatch{Base: 2, End: 3, CRC: a.CRC, ProducerID: 7})},
	}
	p := only(t, Check(in))
	if len(p.Duplicates) != 1 || !slices.Equal(p.Duplicates[0].Offsets, []int64{0, 2}) || p.Duplicates[0].Allowed {
		t.Fatalf("duplicates %+v, want offsets 0 and 2 only", p.Duplicates)
	}
}

func TestCheckReads(t *testing.T) {
	in := Input{
		Reads: []Read{
			{TP: tp0, From: 0, End: 5, LastBase: 3, LastCRC: 0xb, HW: 5, LSO: 5, Seq: 5},  // still there
			{TP: tp0, From: 5, End: 8, LastBase: 5, LastCRC: 0xc, HW: 8, LSO: 8, Seq: 6},  // vanished
			{TP: tp0, From: 8, End: 10, LastBase: 8, LastCRC: 0xd, HW: 9, LSO: 9, Seq: 7}, // above the HW
		},
		Logs:      map[TP]Log{tp0: logOf(0, LogBatch{Base: 0, End: 3, CRC: 0xa}, LogBatch{Base: 3, End: 5, CRC: 0xb}, LogBatch{Base: 5, End: 6, CRC: 0xe})},
		Decisions: []Decision{{Seq: 9, Kind: DecisionElection, TP: tp0, Broker: 2}},
	}
	r := Check(in)
	p := only(t, r)
	if p.ServedRanges != 3 || len(p.ReadThenLost) != 2 || p.ReadThenLost[0].From != 5 || p.ReadThenLost[0].Allowed || len(p.ServedAboveHW) != 1 || p.ServedAboveHW[0].HW != 9 {
		t.Fatalf("%+v", p)
	}
	if v := r.Violations(); len(v) != 3 {
		t.Fatalf("violations %v", v)
	}
	in.Decisions[0].Unclean = true
	if v := Check(in).Violations(); len(v) != 1 || v[0].Kind != "served_above_hw" {
		t.Fatalf("after an unclean election: %v", v)
	}
}

func TestCheckAbortedVisible(t *testing.T) {
	log := logOf(0,
		LogBatch{Base: 0, End: 2, CRC: 1, ProducerID: 5, Transactional: true},
		LogBatch{Base: 2, End: 3, CRC: 2, ProducerID: 5, Control: true, Commit: false},
		LogBatch{Base: 3, End: 5, CRC: 3, ProducerID: 6, Transactional: true},
		LogBatch{Base: 5, End: 6, CRC: 4, ProducerID: 6, Control: true, Commit: true})
	in := Input{
		Reads: []Read{
			{TP: tp0, From: 0, End: 2, LastBase: 0, LastCRC: 1, HW: 2, LSO: 2, ReadCommitted: true}, // abort marker not yet stable
			{TP: tp0, From: 0, End: 3, LastBase: 2, LastCRC: 2, HW: 3, LSO: 3, ReadCommitted: true}, // abort known: filtered by the client
			{TP: tp0, From: 3, End: 5, LastBase: 3, LastCRC: 3, HW: 5, LSO: 5, ReadCommitted: true}, // committed later
		},
		Logs: map[TP]Log{tp0: log},
	}
	p := only(t, Check(in))
	if len(p.AbortedVisible) != 1 || p.AbortedVisible[0] != (AbortedVisible{ProducerID: 5, First: 0, Marker: 2, ServedFrom: 0, ServedTo: 2, LSO: 2}) {
		t.Fatalf("%+v", p.AbortedVisible)
	}
}

func TestCheckOffsets(t *testing.T) {
	g := func(o int64, seq uint64) Commit { return Commit{Group: "g", TP: tp0, Offset: o, Seq: seq} }
	in := Input{
		Commits: []Commit{g(10, 1), g(20, 2), g(15, 3), g(30, 4)},
		Offsets: map[GroupTP]int64{{Group: "g", TP: tp0}: 25},
	}
	r := Check(in)
	if len(r.Offsets) != 2 || !r.Offsets[0].Allowed || r.Offsets[0].From != 20 || r.Offsets[0].To != 15 ||
		!r.Offsets[1].Lost || r.Offsets[1].Allowed || r.Offsets[1].From != 30 || r.Offsets[1].To != 25 {
		t.Fatalf("%+v", r.Offsets)
	}
	if v := r.Violations(); len(v) != 1 || v[0].Kind != "offset_lost" || v[0].Group != "g" {
		t.Fatalf("%v", v)
	}
	in.Offsets[GroupTP{Group: "g", TP: tp0}] = 30
	if v := Check(in).Violations(); len(v) != 0 {
		t.Fatal(v)
	}
}
