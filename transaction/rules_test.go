package transaction

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ids hands out producer ids from 2000 up.
type ids struct{ next int64 }

func (g *ids) id() int64 { g.next++; return 2000 + g.next }

func code(c int16) string {
	if c == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(c).Error()
}

func mustWrite(t *testing.T, d Decision, wantCode int16) Metadata {
	t.Helper()
	if d.Code != wantCode {
		t.Fatalf("code %s, want %s", code(d.Code), code(wantCode))
	}
	if d.Next == nil {
		t.Fatalf("no transition to write")
	}
	return *d.Next
}

func mustAnswer(t *testing.T, d Decision, wantCode int16) {
	t.Helper()
	if d.Code != wantCode || d.Next != nil {
		t.Fatalf("got %s (write %v), want %s without a write", code(d.Code), d.Next != nil, code(wantCode))
	}
}

func check(t *testing.T, m Metadata, state State, pid int64, epoch, last int16) {
	t.Helper()
	if m.State != state || m.ProducerID != pid || m.ProducerEpoch != epoch || m.LastProducerEpoch != last {
		t.Fatalf("got %v pid %d epoch %d last %d, want %v pid %d epoch %d last %d",
			m.State, m.ProducerID, m.ProducerEpoch, m.LastProducerEpoch, state, pid, epoch, last)
	}
}

var tp0, tp1 = Partition{Topic: "t", Partition: 0}, Partition{Topic: "t", Partition: 1}

// initFresh runs a first InitProducerId for a new id (epoch -1 -> 0).
func initFresh(t *testing.T, tv2 bool) Metadata {
	t.Helper()
	m := New("tx", 1001, 60000, 0)
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 60000, ProducerID: -1, ProducerEpoch: -1, TV2: tv2}, nil, 1), 0)
	check(t, m, Empty, 1001, 0, -1)
	return m
}

func TestTransitions(t *testing.T) {
	for _, c := range []struct {
		from, to State
		tv2, ok  bool
	}{
		{Empty, Ongoing, false, true},
		{Ongoing, PrepareCommit, false, true},
		{Empty, PrepareCommit, false, false},
		{PrepareCommit, CompleteCommit, false, true},
		{PrepareCommit, CompleteAbort, false, false},
		{PrepareEpochFence, PrepareAbort, false, true},
		{Empty, PrepareAbort, false, false},
		{Empty, PrepareAbort, true, true},
		{CompleteCommit, PrepareAbort, true, true},
		{CompleteCommit, Dead, false, true},
		{Ongoing, Dead, false, false},
		{CompleteAbort, Ongoing, false, true},
	} {
		if got := CanTransition(c.from, c.to, c.tv2); got != c.ok {
			t.Errorf("%v -> %v (tv2 %v): %v, want %v", c.from, c.to, c.tv2, got, c.ok)
		}
	}
	if s, ok := ParseState("preparecommit"); !ok || s != PrepareCommit || s.String() != "PrepareCommit" {
		t.Fatalf("ParseState: %v %v", s, ok)
	}
}

func TestInitProducerIDEpochs(t *testing.T) {
	g := &ids{}
	m := initFresh(t, false)
	// No producer id sent: plain bump, nothing remembered.
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, g.id, 2), 0)
	check(t, m, Empty, 1001, 1, -1)
	if m.TimeoutMs != 1000 {
		t.Fatalf("timeout %d", m.TimeoutMs)
	}
	// v3+ with the current epoch: bump, remember the old one.
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 1}, g.id, 3), 0)
	check(t, m, Empty, 1001, 2, 1)
	// The same request again (its answer was lost): same epoch again.
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 1}, g.id, 4), 0)
	check(t, m, Empty, 1001, 2, 1)
	// An older epoch is a zombie.
	mustAnswer(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 0}, g.id, 5), kerr.ProducerFenced.Code)
	// Another producer id is fenced too.
	mustAnswer(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 7, ProducerEpoch: 2}, g.id, 5), kerr.ProducerFenced.Code)
	// A transition still being written.
	mustAnswer(t, InitProducerID(m, true, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, g.id, 5), kerr.ConcurrentTransactions.Code)
}

func TestInitProducerIDRotatesExhaustedEpoch(t *testing.T) {
	g := &ids{}
	m := initFresh(t, false)
	m.ProducerEpoch = 32766
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32766}, g.id, 2), 0)
	check(t, m, Empty, 2001, 0, 32766)
	if m.PrevProducerID != 1001 {
		t.Fatalf("prev producer id %d", m.PrevProducerID)
	}
	// A retry with the old id and exhausted epoch is still valid: it is
	// answered from the new id (current epoch bump rules).
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: 1001, ProducerEpoch: 32766}, g.id, 3), 0)
	check(t, m, Empty, 2001, 0, 32766)
}

func TestInitProducerIDFencesOngoing(t *testing.T) {
	g := &ids{}
	m := initFresh(t, false)
	m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp0}, 10), 0)
	check(t, m, Ongoing, 1001, 0, -1)
	// A second instance with the same id: fence and abort, answer
	// CONCURRENT_TRANSACTIONS; the abort markers carry epoch 1.
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, g.id, 11), kerr.ConcurrentTransactions.Code)
	check(t, m, PrepareAbort, 1001, 1, -1)
	mustAnswer(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, g.id, 12), kerr.ConcurrentTransactions.Code)
	// The zombie cannot commit.
	if r := EndTxn(m, false, EndRequest{1001, 0, true}, g.id, 12); r.Code != kerr.ProducerFenced.Code {
		t.Fatalf("zombie EndTxn: %s", code(r.Code))
	}
	m, _ = Complete(m, 13)
	check(t, m, CompleteAbort, 1001, 1, -1)
	if len(m.Partitions) != 0 || m.TxnStartMs != 10 {
		t.Fatalf("completed with %v start %d", m.Partitions, m.TxnStartMs)
	}
	m = mustWrite(t, InitProducerID(m, false, InitRequest{TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1}, g.id, 14), 0)
	check(t, m, Empty, 1001, 2, -1)
	mustAnswer(t, AddPartitions(m, false, 1001, 0, []Partition{tp0}, 15), kerr.ProducerFenced.Code)
}

func TestAddPartitions(t *testing.T) {
	m := initFresh(t, false)
	mustAnswer(t, AddPartitions(m, false, 99, 0, []Partition{tp0}, 10), kerr.InvalidProducerIDMapping.Code)
	mustAnswer(t, AddPartitions(m, false, 1001, 1, []Partition{tp0}, 10), kerr.ProducerFenced.Code)
	mustAnswer(t, AddPartitions(m, true, 1001, 0, []Partition{tp0}, 10), kerr.ConcurrentTransactions.Code)
	m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp1}, 10), 0)
	m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp0, tp1}, 20), 0)
	if len(m.Partitions) != 2 || m.Partitions[0] != tp0 || m.TxnStartMs != 10 || m.LastUpdateMs != 20 {
		t.Fatalf("partitions %v start %d update %d", m.Partitions, m.TxnStartMs, m.LastUpdateMs)
	}
	// Already in: no write.
	mustAnswer(t, AddPartitions(m, false, 1001, 0, []Partition{tp1}, 30), 0)
	codes := VerifyPartitions(m, false, 1001, 0, []Partition{tp0, {Topic: "u", Partition: 0}})
	if codes[0] != 0 || codes[1] != kerr.InvalidTxnState.Code {
		t.Fatalf("verify: %v", codes)
	}
	p := mustWrite(t, EndTxn(m, false, EndRequest{1001, 0, true}, nil, 40).Decision, 0)
	check(t, p, PrepareCommit, 1001, 0, -1)
	mustAnswer(t, AddPartitions(p, false, 1001, 0, []Partition{tp0}, 41), kerr.ConcurrentTransactions.Code)
}

func TestEndTxnV1(t *testing.T) {
	m := initFresh(t, false)
	// Nothing open.
	for _, commit := range []bool{true, false} {
		if r := EndTxn(m, false, EndRequest{1001, 0, commit}, nil, 5); r.Code != kerr.InvalidTxnState.Code || r.Next != nil {
			t.Fatalf("EndTxn from Empty: %s", code(r.Code))
		}
	}
	m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp0}, 10), 0)
	if r := EndTxn(m, false, EndRequest{1001, 1, true}, nil, 11); r.Code != kerr.ProducerFenced.Code {
		t.Fatalf("wrong epoch: %s", code(r.Code))
	}
	r := EndTxn(m, false, EndRequest{1001, 0, true}, nil, 11)
	m = mustWrite(t, r.Decision, 0)
	check(t, m, PrepareCommit, 1001, 0, -1)
	// While markers are out either outcome is CONCURRENT_TRANSACTIONS (the
	// Complete transition is pending); a stale epoch is still fenced.
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 0, true}, nil, 12).Decision, kerr.ConcurrentTransactions.Code)
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 0, false}, nil, 12).Decision, kerr.ConcurrentTransactions.Code)
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 7, false}, nil, 12).Decision, kerr.ProducerFenced.Code)
	m, ok := Complete(m, 13)
	if !ok {
		t.Fatal("not completed")
	}
	check(t, m, CompleteCommit, 1001, 0, -1)
	// A retry after the answer was lost succeeds; the opposite fails.
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 0, true}, nil, 14).Decision, 0)
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 0, false}, nil, 14).Decision, kerr.InvalidTxnState.Code)
	// Next transaction at the same epoch (version 1 does not bump).
	m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp1}, 20), 0)
	m = mustWrite(t, EndTxn(m, false, EndRequest{1001, 0, false}, nil, 21).Decision, 0)
	check(t, m, PrepareAbort, 1001, 0, -1)
	m, _ = Complete(m, 22)
	check(t, m, CompleteAbort, 1001, 0, -1)
}

func TestEndTxnV2BumpsEpoch(t *testing.T) {
	g := &ids{}
	m := initFresh(t, true)
	m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp0}, 10), 0)
	r := EndTxn(m, false, EndRequest{1001, 0, true}, g.id, 11)
	m = mustWrite(t, r.Decision, 0)
	check(t, m, PrepareCommit, 1001, 1, 0)
	if r.ProducerID != 1001 || r.ProducerEpoch != 1 {
		t.Fatalf("answer pid %d epoch %d", r.ProducerID, r.ProducerEpoch)
	}
	// The retry at epoch 0 while markers are out.
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 0, true}, g.id, 12).Decision, kerr.ConcurrentTransactions.Code)
	m, _ = Complete(m, 13)
	check(t, m, CompleteCommit, 1001, 1, 0)
	// The retry after completion is a retry: NONE with the new epoch.
	r = EndTxn(m, false, EndRequest{1001, 0, true}, g.id, 14)
	mustAnswer(t, r.Decision, 0)
	if r.ProducerEpoch != 1 {
		t.Fatalf("retry answered epoch %d", r.ProducerEpoch)
	}
	// A retry of the other outcome is not.
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 0, false}, g.id, 14).Decision, kerr.InvalidTxnState.Code)
	// At the current epoch a commit with nothing open is invalid, an
	// abort is allowed and bumps.
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 1, true}, g.id, 15).Decision, kerr.InvalidTxnState.Code)
	m = mustWrite(t, EndTxn(m, false, EndRequest{1001, 1, false}, g.id, 15).Decision, 0)
	check(t, m, PrepareAbort, 1001, 2, 1)
	m, _ = Complete(m, 16)
	// Two epochs back is fenced.
	mustAnswer(t, EndTxn(m, false, EndRequest{1001, 0, false}, g.id, 17).Decision, kerr.ProducerFenced.Code)
}

func TestEndTxnV2RotatesExhaustedEpoch(t *testing.T) {
	g := &ids{}
	m := initFresh(t, true)
	m.ProducerEpoch = 32766
	m = mustWrite(t, AddPartitions(m, false, 1001, 32766, []Partition{tp0}, 10), 0)
	r := EndTxn(m, false, EndRequest{1001, 32766, true}, g.id, 11)
	m = mustWrite(t, r.Decision, 0)
	if r.ProducerID != 2001 || r.ProducerEpoch != 0 || m.NextProducerID != 2001 {
		t.Fatalf("answer %d/%d next %d", r.ProducerID, r.ProducerEpoch, m.NextProducerID)
	}
	check(t, m, PrepareCommit, 1001, 32767, 32766) // markers go out under the old id at 32767
	m, _ = Complete(m, 12)
	check(t, m, CompleteCommit, 2001, 0, 32766)
	// A retry with the old id is recognised.
	r = EndTxn(m, false, EndRequest{1001, 32766, true}, g.id, 13)
	mustAnswer(t, r.Decision, 0)
	if r.ProducerID != 2001 || r.ProducerEpoch != 0 {
		t.Fatalf("retry answered %d/%d", r.ProducerID, r.ProducerEpoch)
	}
}

func TestTimeoutAborts(t *testing.T) {
	// The client's transaction version, and the cluster's finalized one
	// (Kafka aborts on the cluster's path).
	for _, v := range []struct{ tv2, clusterTV2 bool }{{false, false}, {false, true}, {true, true}} {
		tv2 := v.tv2
		m := initFresh(t, tv2)
		m.TimeoutMs = 100
		m = mustWrite(t, AddPartitions(m, false, 1001, 0, []Partition{tp0}, 1000), 0)
		if TimedOut(m, 1100) || !TimedOut(m, 1101) {
			t.Fatalf("timed out at 1100 %v / 1101 %v", TimedOut(m, 1100), TimedOut(m, 1101))
		}
		m = mustWrite(t, Abort(m, 1101, v.clusterTV2), 0)
		last := int16(-1)
		if v.clusterTV2 {
			last = 0
		}
		check(t, m, PrepareAbort, 1001, 1, last)
		m, _ = Complete(m, 1102)
		// The producer ends its transaction at the old epoch: version 1
		// is fenced, version 2 sees its abort answered as a retry.
		r := EndTxn(m, false, EndRequest{1001, 0, false}, nil, 1103)
		want := kerr.ProducerFenced.Code
		if tv2 {
			want = 0
		}
		if r.Code != want {
			t.Fatalf("%+v: EndTxn after timeout %s", v, code(r.Code))
		}
		// Its KIP-360 InitProducerId at the old epoch: a retry (the new
		// epoch, no bump) where the abort remembered it.
		d := InitProducerID(m, false, InitRequest{TimeoutMs: 100, ProducerID: 1001, ProducerEpoch: 0, ClusterTV2: v.clusterTV2}, nil, 1103)
		if v.clusterTV2 {
			check(t, mustWrite(t, d, 0), Empty, 1001, 1, 0)
		} else {
			mustAnswer(t, d, kerr.ProducerFenced.Code)
		}
		if !Expired(m, 1102+5000, 5000) || Expired(m, 1102+4999, 5000) {
			t.Fatal("expiration")
		}
	}
}
