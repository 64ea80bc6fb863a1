package replication

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// batch returns a plain (non-idempotent) batch of n records as a producer
// sends it: base offset 0, last offset delta n-1.
func batch(n int32) *Batch {
	return &Batch{Raw: make([]byte, 61), LastOffset: int64(n - 1), NumRecords: n, ProducerID: -1, BaseSequence: -1}
}

func idemBatch(pid int64, epoch int16, seq, n int32) *Batch {
	b := batch(n)
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, seq
	return b
}

func newPartition(t *testing.T, minISR int) *Partition {
	t.Helper()
	return NewPartition([]int32{1, 2, 3}, Config{MinInsyncReplicas: minISR, ReplicaLagTimeMax: 30 * time.Second}, t0)
}

// crash takes a broker down the way the controller sees it: offline and
// fenced out of the ISR.
func crash(p *Partition, id int32) {
	p.SetOnline(id, false, t0)
	p.RemoveFromISR(id, t0)
}

func mustAppend(t *testing.T, p *Partition, b *Batch, acks int16) AppendResult {
	t.Helper()
	res, code := p.Append(b, acks, t0)
	if code != 0 {
		t.Fatalf("append: %v", kerr.ErrorForCode(code))
	}
	return res
}

func fetch(t *testing.T, p *Partition, id int32, now time.Time) FetchResult {
	t.Helper()
	res, code := p.ReplicaFetch(id, 1<<20, now)
	if code != 0 {
		t.Fatalf("fetch by %d: %v", id, kerr.ErrorForCode(code))
	}
	return res
}

type offsets struct{ leo, hw int64 }

func checkReplicas(t *testing.T, p *Partition, want map[int32]offsets) {
	t.Helper()
	for id, w := range want {
		r := p.Replica(id)
		if got := (offsets{r.LEO(), r.HW()}); got != w {
			t.Errorf("replica %d: LEO/HW = %v, want %v", id, got, w)
		}
	}
}

func TestHWAdvancesOnlyWhenEveryISRMemberHasTheData(t *testing.T) {
	p := newPartition(t, 1)
	res := mustAppend(t, p, batch(3), 1)
	if res.BaseOffset != 0 || res.Required != 3 {
		t.Fatalf("append result %+v", res)
	}
	checkReplicas(t, p, map[int32]offsets{1: {3, 0}, 2: {0, 0}, 3: {0, 0}})

	// Each follower's first fetch carries the data; the leader learns
	// nothing yet because a follower's LEO travels in its next fetch.
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	checkReplicas(t, p, map[int32]offsets{1: {3, 0}, 2: {3, 0}, 3: {3, 0}})

	// Follower 2 reports LEO 3; follower 3 has not yet: HW stays at 0.
	fetch(t, p, 2, t0)
	checkReplicas(t, p, map[int32]offsets{1: {3, 0}})

	// Follower 3 reports LEO 3: the HW moves to 3 on the leader. The
	// response carried the HW read before the update, so 3 still sees 0.
	r := fetch(t, p, 3, t0)
	if r.HW != 0 {
		t.Fatalf("fetch response HW = %d, want 0 (read before the update)", r.HW)
	}
	checkReplicas(t, p, map[int32]offsets{1: {3, 3}, 2: {3, 0}, 3: {3, 0}})

	// The next fetch of each follower brings them the new HW.
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	checkReplicas(t, p, map[int32]offsets{1: {3, 3}, 2: {3, 3}, 3: {3, 3}})
}

func TestAcksAllWaitsWhileOneFollowerLags(t *testing.T) {
	p := newPartition(t, 2)
	res := mustAppend(t, p, batch(5), -1)
	epoch := p.LeaderEpoch()
	for range 3 {
		fetch(t, p, 2, t0)
	}
	if done, _ := p.AppendStatus(1, epoch, res.Required); done {
		t.Fatal("acks=all completed while follower 3 (in the ISR) has not fetched")
	}
	checkReplicas(t, p, map[int32]offsets{1: {5, 0}})

	fetch(t, p, 3, t0) // data
	if done, _ := p.AppendStatus(1, epoch, res.Required); done {
		t.Fatal("completed before the leader learnt follower 3's LEO")
	}
	fetch(t, p, 3, t0) // LEO 5 reported
	done, code := p.AppendStatus(1, epoch, res.Required)
	if !done || code != 0 {
		t.Fatalf("status = %v %v, want done NONE", done, kerr.ErrorForCode(code))
	}
	checkReplicas(t, p, map[int32]offsets{1: {5, 5}})
}

func TestNotEnoughReplicasAppendsNothing(t *testing.T) {
	p := newPartition(t, 2)
	p.SetISR([]int32{1}, t0)
	if _, code := p.Append(batch(1), -1, t0); code != kerr.NotEnoughReplicas.Code {
		t.Fatalf("code = %d, want NOT_ENOUGH_REPLICAS", code)
	}
	checkReplicas(t, p, map[int32]offsets{1: {0, 0}})
	// acks=1 is not checked against min.insync.replicas, but the HW
	// freezes while the ISR is below the minimum (3.7+): alone in the ISR,
	// the leader would otherwise commit at once.
	mustAppend(t, p, batch(2), 1)
	checkReplicas(t, p, map[int32]offsets{1: {2, 0}})
	// Follower 2's first fetch (LEO 0 >= HW 0) brings it back into the ISR;
	// its next fetch reports LEO 2 and the HW moves.
	fetch(t, p, 2, t0)
	if !slices.Equal(p.ISR(), []int32{1, 2}) {
		t.Fatalf("ISR = %v, want follower 2 back in", p.ISR())
	}
	checkReplicas(t, p, map[int32]offsets{1: {2, 0}, 2: {2, 0}})
	fetch(t, p, 2, t0)
	checkReplicas(t, p, map[int32]offsets{1: {2, 2}})
}

func TestHWFreezesBelowMinISRUnlessLegacy(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		p := NewPartition([]int32{1, 2, 3}, Config{MinInsyncReplicas: 2, LegacyMinISR: legacy}, t0)
		res := mustAppend(t, p, batch(1), -1)
		epoch := p.LeaderEpoch()
		// Both followers fall out after the append, as in a shrink during the wait.
		p.SetISR([]int32{1}, t0)
		done, code := p.AppendStatus(1, epoch, res.Required)
		switch {
		case !legacy && (done || p.HW() != 0):
			t.Fatalf("strict: done=%v HW=%d, want a frozen HW and a pending request (REQUEST_TIMED_OUT at expiry)", done, p.HW())
		case legacy && (!done || code != kerr.NotEnoughReplicasAfterAppend.Code || p.HW() != 1):
			t.Fatalf("legacy: done=%v code=%d HW=%d, want NOT_ENOUGH_REPLICAS_AFTER_APPEND with HW 1", done, code, p.HW())
		}
		// The record stays in the leader's log either way.
		checkReplicas(t, p, map[int32]offsets{1: {1, p.HW()}})
	}
}

func TestISRShrinksAndExpandsByTime(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(4), 1)
	lag := 30 * time.Second
	// Follower 2 keeps up; follower 3 never fetches.
	fetch(t, p, 2, t0.Add(time.Second))
	fetch(t, p, 2, t0.Add(2*time.Second))
	if out := p.MaybeShrinkISR(t0.Add(lag)); len(out) != 0 {
		t.Fatalf("shrank %v at exactly replica.lag.time.max.ms", out)
	}
	checkReplicas(t, p, map[int32]offsets{1: {4, 0}})
	out := p.MaybeShrinkISR(t0.Add(lag + time.Millisecond))
	if !slices.Equal(out, []int32{3}) || !slices.Equal(p.ISR(), []int32{1, 2}) {
		t.Fatalf("removed %v, ISR %v; want 3 removed", out, p.ISR())
	}
	// With 3 gone the HW is the minimum over {1, 2}.
	checkReplicas(t, p, map[int32]offsets{1: {4, 4}})

	// Follower 3 fetches: first the data (LEO 0 reported, below HW 4: not
	// yet in sync), then LEO 4 reported: back in the ISR.
	now := t0.Add(lag + time.Second)
	fetch(t, p, 3, now)
	if p.InISR(3) {
		t.Fatal("follower 3 rejoined before its LEO reached the HW")
	}
	fetch(t, p, 3, now)
	if !p.InISR(3) {
		t.Fatalf("ISR %v, want follower 3 back", p.ISR())
	}
}

func TestShrinkUsesLastCaughtUpTime(t *testing.T) {
	// A follower that keeps fetching but never reaches the leader's LEO at
	// fetch time stays in sync as long as it reaches the LEO of its previous
	// fetch (Kafka's lastCaughtUpTimeMs rule).
	p := newPartition(t, 1)
	p.SetISR([]int32{1, 2}, t0) // leave 3 out of this story
	lag := 30 * time.Second
	for i := range 10 {
		now := t0.Add(time.Duration(i) * 20 * time.Second)
		mustAppend(t, p, batch(1), 1)
		// It fetches before it has the newest record, so it counts as
		// caught up as of its previous fetch, 20 s ago.
		fetch(t, p, 2, now)
		if out := p.MaybeShrinkISR(now.Add(lag - 20*time.Second)); len(out) != 0 {
			t.Fatalf("round %d: removed %v though it reached the previous fetch's LEO", i, out)
		}
	}
	// Now it stops fetching altogether.
	if out := p.MaybeShrinkISR(t0.Add(8*20*time.Second + lag + time.Millisecond)); !slices.Equal(out, []int32{2}) {
		t.Fatalf("removed %v, want [2]", out)
	}
}

func TestCrashedLeaderDoesNotShrinkISR(t *testing.T) {
	// Followers stop fetching, acks=1 records reach the leader only, and
	// the leader crashes before the lag runs out. The crashed leader sends
	// no AlterPartition, so when the controller fences it the ISR still
	// holds the followers and one of them is elected, losing offsets 4-5
	// (what Apache Kafka 4.x does; see compat/reference).
	p := newPartition(t, 1)
	lag := 30 * time.Second
	mustAppend(t, p, batch(4), -1)
	for range 3 { // the data, then the HW, then the HW learnt
		fetch(t, p, 2, t0)
		fetch(t, p, 3, t0)
	}
	mustAppend(t, p, batch(2), 1)
	p.SetOnline(1, false, t0)
	if out := p.MaybeShrinkISR(t0.Add(2 * lag)); len(out) != 0 || !slices.Equal(p.ISR(), []int32{1, 2, 3}) {
		t.Fatalf("crashed leader removed %v, ISR %v", out, p.ISR())
	}
	checkReplicas(t, p, map[int32]offsets{1: {6, 4}, 2: {4, 4}, 3: {4, 4}})
	p.RemoveFromISR(1, t0.Add(2*lag))
	if id, unclean := p.ChooseLeader(1); id != 2 || unclean {
		t.Fatalf("after fencing the controller would choose %d (unclean %v), want 2 cleanly", id, unclean)
	}
}

func TestOffsetForLeaderEpochMatchesKafka(t *testing.T) {
	l := newLog()
	for _, e := range []EpochEntry{{1, 0}, {3, 10}, {4, 20}} {
		b := &Batch{Raw: make([]byte, 61), BaseOffset: e.StartOffset, LastOffset: e.StartOffset + 9, Epoch: e.Epoch}
		l.append(b, SegmentConfig{})
	}
	for _, c := range []struct {
		req       int32
		epoch     int32
		endOffset int64
	}{
		{4, 4, 30},   // latest: the LEO
		{3, 3, 20},   // known: start of the next epoch
		{2, 1, 10},   // unknown in between: the floor epoch, next start
		{0, 0, 0},    // below every epoch: requested epoch, first start
		{5, -1, -1},  // above every epoch
		{-1, -1, -1}, // undefined
	} {
		e, off := l.EndOffsetForEpoch(c.req)
		if e != c.epoch || off != c.endOffset {
			t.Errorf("epoch %d: got (%d, %d), want (%d, %d)", c.req, e, off, c.epoch, c.endOffset)
		}
	}
}

func TestIdempotentProducerDedupesAcrossLeaderChange(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, idemBatch(7, 0, 0, 2), 1) // offsets 0-1
	mustAppend(t, p, idemBatch(7, 0, 2, 3), 1) // offsets 2-4

	// A retry of the first batch is a duplicate with its original offset.
	res := mustAppend(t, p, idemBatch(7, 0, 0, 2), 1)
	if !res.Duplicate || res.BaseOffset != 0 {
		t.Fatalf("retry = %+v, want duplicate at 0", res)
	}
	if _, code := p.Append(idemBatch(7, 0, 9, 1), 1, t0); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap: code %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
	mustAppend(t, p, idemBatch(7, 1, 0, 1), 1) // epoch bump at seq 0: offset 5
	if _, code := p.Append(idemBatch(7, 0, 5, 1), 1, t0); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch: code %d, want INVALID_PRODUCER_EPOCH", code)
	}
	if _, code := p.Append(idemBatch(7, 2, 3, 1), 1, t0); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("new epoch not at 0: code %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
	// Replicate to 2, fail over to it: the state came with the log.
	fetch(t, p, 2, t0)
	p.SetOnline(1, false, t0)
	if code := p.Elect(2, false, t0); code != 0 {
		t.Fatalf("elect: %d", code)
	}
	res = mustAppend(t, p, idemBatch(7, 1, 0, 1), 1)
	if !res.Duplicate || res.BaseOffset != 5 {
		t.Fatalf("retry on the new leader = %+v, want duplicate at 5", res)
	}
	res = mustAppend(t, p, idemBatch(7, 1, 1, 1), 1)
	if res.Duplicate || res.BaseOffset != 6 {
		t.Fatalf("next batch = %+v, want fresh at 6", res)
	}
}

func TestOnlyFiveBatchesAreRemembered(t *testing.T) {
	p := newPartition(t, 1)
	for i := range int32(6) {
		mustAppend(t, p, idemBatch(1, 0, i, 1), 1)
	}
	if _, code := p.Append(idemBatch(1, 0, 0, 1), 1, t0); code != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("retry of the 6th-newest batch: code %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", code)
	}
	if res := mustAppend(t, p, idemBatch(1, 0, 1, 1), 1); !res.Duplicate || res.BaseOffset != 1 {
		t.Fatalf("retry of the 5th-newest = %+v, want duplicate at 1", res)
	}
}

func TestSequenceWraps(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, idemBatch(1, 0, 1<<31-2, 2), 1) // seqs MaxInt32-1, MaxInt32
	if res := mustAppend(t, p, idemBatch(1, 0, 0, 1), 1); res.Duplicate || res.BaseOffset != 2 {
		t.Fatalf("wrapped batch = %+v", res)
	}
}

// The seed's example: follower 2 has records up to offset 5, follower 3
// only up to 4; the leader dies and 3 wins. Follower 2 must drop 5.
func TestNewLeaderWithShorterLogTruncatesFollower(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(4), 1) // 0-3, everybody gets these
	for range 2 {
		fetch(t, p, 2, t0)
		fetch(t, p, 3, t0)
	}
	mustAppend(t, p, batch(1), 1) // 4
	fetch(t, p, 3, t0)
	fetch(t, p, 2, t0)
	mustAppend(t, p, batch(1), 1) // 5
	fetch(t, p, 2, t0)
	checkReplicas(t, p, map[int32]offsets{1: {6, 4}, 2: {6, 4}, 3: {5, 4}})

	crash(p, 1)
	if code := p.Elect(3, false, t0); code != 0 {
		t.Fatalf("elect 3: %d", code)
	}
	if p.LeaderEpoch() != 1 || p.EpochStartOffset() != 5 {
		t.Fatalf("epoch %d start %d, want 1 at 5", p.LeaderEpoch(), p.EpochStartOffset())
	}
	res := fetch(t, p, 2, t0)
	if res.Truncated != 1 {
		t.Fatalf("follower 2 truncated %d records, want 1", res.Truncated)
	}
	mustAppend(t, p, batch(1), 1) // new record at offset 5 on the new leader
	fetch(t, p, 2, t0)
	fetch(t, p, 2, t0)
	for _, id := range []int32{2, 3} {
		bs := p.Replica(id).Log().Batches()
		if last := bs[len(bs)-1]; last.BaseOffset != 5 || last.Epoch != 1 {
			t.Fatalf("replica %d offset 5 has epoch %d, want the new leader's 1", id, last.Epoch)
		}
	}
	checkReplicas(t, p, map[int32]offsets{3: {6, 6}, 2: {6, 5}})
}

func TestConsumerReadStopsAtHW(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(2), 1)
	mustAppend(t, p, batch(2), 1)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0) // HW 4
	mustAppend(t, p, batch(3), 1)

	res, code := p.Read(1, 0, 1<<20)
	if code != 0 || len(res.Batches) != 2 || res.HW != 4 {
		t.Fatalf("read = %d batches, HW %d, code %d; want 2 batches below HW 4", len(res.Batches), res.HW, code)
	}
	if res, code = p.Read(1, 5, 1<<20); code != 0 || len(res.Batches) != 0 {
		t.Fatalf("read in (HW, LEO] = %d batches, code %d; want none, no error", len(res.Batches), code)
	}
	if _, code = p.Read(1, 8, 1<<20); code != kerr.OffsetOutOfRange.Code {
		t.Fatalf("read past LEO: code %d, want OFFSET_OUT_OF_RANGE", code)
	}
	// Follower 2 serves up to its own HW, which is still 0.
	if res, _ = p.Read(2, 0, 1<<20); len(res.Batches) != 0 || res.HW != 0 {
		t.Fatalf("follower read = %d batches, HW %d; want its own HW 0", len(res.Batches), res.HW)
	}
	// max bytes is honoured but one batch always comes back.
	if res, _ = p.Read(1, 0, 1); len(res.Batches) != 1 {
		t.Fatalf("read with max 1 byte = %d batches, want 1", len(res.Batches))
	}
}

func TestNewLeaderListsOffsetsOnlyAfterHWReachesEpochStart(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(3), 1)
	fetch(t, p, 2, t0)
	fetch(t, p, 3, t0) // both followers LEO 3; leader HW still 0
	crash(p, 1)
	if code := p.Elect(2, false, t0); code != 0 {
		t.Fatal(code)
	}
	if p.HW() != 0 || p.EpochStartOffset() != 3 {
		t.Fatalf("new leader HW %d epoch start %d, want 0 and 3", p.HW(), p.EpochStartOffset())
	}
	fetch(t, p, 3, t0) // reports LEO 3 to the new leader
	if p.HW() != 3 {
		t.Fatalf("HW %d after follower 3 reported, want 3", p.HW())
	}
}

func TestUncleanElection(t *testing.T) {
	p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1}, t0)
	mustAppend(t, p, batch(2), 1)
	p.SetISR([]int32{1}, t0)
	p.SetOnline(1, false, t0)
	if id, _ := p.ChooseLeader(-1); id != -1 {
		t.Fatalf("clean choice %d, want none", id)
	}
	cfg := p.Config()
	cfg.UncleanLeaderElection = true
	p.SetConfig(cfg, t0)
	id, unclean := p.ChooseLeader(-1)
	if id != 2 || !unclean {
		t.Fatalf("choice %d unclean=%v", id, unclean)
	}
	if code := p.Elect(2, true, t0); code != 0 {
		t.Fatal(code)
	}
	if !slices.Equal(p.ISR(), []int32{2}) || p.Replica(2).LEO() != 0 {
		t.Fatalf("ISR %v LEO %d", p.ISR(), p.Replica(2).LEO())
	}
	// The old leader comes back and loses its two records.
	mustAppend(t, p, batch(1), 1)
	p.SetOnline(1, true, t0)
	res := fetch(t, p, 1, t0)
	if res.Truncated != 2 || p.Replica(1).LEO() != 1 {
		t.Fatalf("old leader truncated %d, LEO %d; want 2 and 1", res.Truncated, p.Replica(1).LEO())
	}
}

func TestReplicaFetchUpTo(t *testing.T) {
	p := newPartition(t, 1)
	for range 4 {
		mustAppend(t, p, batch(2), 1) // batches end at 2, 4, 6, 8
	}
	if _, code := p.ReplicaFetchUpTo(2, 1<<20, 5, t0); code != 0 {
		t.Fatal(code)
	}
	checkReplicas(t, p, map[int32]offsets{2: {4, 0}}) // a batch is never split
	if _, code := p.ReplicaFetchUpTo(2, 1<<20, 6, t0); code != 0 {
		t.Fatal(code)
	}
	checkReplicas(t, p, map[int32]offsets{2: {6, 0}})
}
