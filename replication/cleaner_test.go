package replication

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
)

// kv builds a batch of records "k=v" ("k=" is a tombstone, "=v" has no
// key) with max timestamp ts, as a producer sends it.
func kv(t *testing.T, ts int64, pid int64, seq int32, txn bool, pairs ...string) *Batch {
	t.Helper()
	var recs []protocol.Record
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		r := protocol.Record{}
		if k != "" {
			r.Key = []byte(k)
		}
		if v != "" {
			r.Value = []byte(v)
		}
		recs = append(recs, r)
	}
	h := protocol.BatchHeader{BaseTimestamp: ts, ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq, PartitionLeaderEpoch: -1}
	if pid < 0 {
		h.ProducerEpoch, h.BaseSequence = -1, -1
	}
	if txn {
		h.Attributes = 0x10
	}
	raw, err := protocol.BuildBatch(h, protocol.CodecNone, recs)
	if err != nil {
		t.Fatal(err)
	}
	return &Batch{Raw: raw, LastOffset: int64(len(recs) - 1), MaxTimestamp: ts, NumRecords: int32(len(recs)),
		ProducerID: pid, ProducerEpoch: h.ProducerEpoch, BaseSequence: h.BaseSequence, Transactional: txn}
}

// contents lists the log as "offset:key=value" (key=<nil> for a tombstone)
// and markers as "offset:COMMIT"/"offset:ABORT", batch by batch.
func contents(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for _, b := range l.Batches() {
		if b.Control {
			out = append(out, fmt.Sprintf("%d:%s", b.BaseOffset, map[bool]string{true: "COMMIT", false: "ABORT"}[b.Commit]))
			continue
		}
		recs, err := protocol.Records(b.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := protocol.VerifyCRC(b.Raw); err != nil {
			t.Fatalf("batch at %d: %v", b.BaseOffset, err)
		}
		if len(recs) == 0 {
			out = append(out, fmt.Sprintf("%d-%d:empty", b.BaseOffset, b.LastOffset))
		}
		for _, r := range recs {
			v := string(r.Value)
			if r.Value == nil {
				v = "<nil>"
			}
			out = append(out, fmt.Sprintf("%d:%s=%s", b.BaseOffset+int64(r.OffsetDelta), r.Key, v))
		}
	}
	return out
}

func checkContents(t *testing.T, l *Log, want ...string) {
	t.Helper()
	if got := contents(t, l); !slices.Equal(got, want) {
		t.Fatalf("log\n got %v\nwant %v", got, want)
	}
}

func compacted(cc CompactionConfig) *Partition {
	cc.Compact = true
	return NewPartition([]int32{1, 2}, Config{Segment: SegmentConfig{Ms: 1000}, Compaction: cc}, t0)
}

// appendAt appends b on the leader and replicates it.
func appendAt(t *testing.T, p *Partition, b *Batch) {
	t.Helper()
	mustAppend(t, p, b, 1)
	replicateAll(t, p)
}

func TestCleanerKeepsTheLatestRecordPerKey(t *testing.T) {
	p := compacted(CompactionConfig{MinCleanableDirtyRatio: 0.5, DeleteRetentionMs: 1000})
	appendAt(t, p, kv(t, 1000, -1, -1, false, "a=1", "b=1", "c=1")) // 0-2, segment 0
	appendAt(t, p, kv(t, 1500, -1, -1, false, "a=2", "b="))         // 3-4
	appendAt(t, p, kv(t, 3000, -1, -1, false, "c=2", "a=3"))        // 5-6, segment 5 (ts 2000 past 1000)
	appendAt(t, p, kv(t, 5000, -1, -1, false, "d=1"))               // 7, active segment 7
	checkSegs(t, p.Replica(1).Log(), 0, 5, 7)

	res := p.Clean(time.UnixMilli(6000), false)
	if !res.Cleaned || res.FirstDirty != 0 || res.End != 7 || res.DirtyRatio != 1 {
		t.Fatalf("clean: %+v", res)
	}
	// The active segment (d=1) is untouched; b's tombstone stays: its delete
	// horizon starts now.
	want := []string{"4:b=<nil>", "5:c=2", "6:a=3", "7:d=1"}
	for _, id := range []int32{1, 2} {
		checkContents(t, p.Replica(id).Log(), want...)
	}
	if res.RecordsRemoved != 4 || res.BatchesRemoved != 1 || res.BytesAfter >= res.BytesBefore {
		t.Fatalf("clean: %+v", res)
	}
	// Replicas share the rewritten batches.
	if p.Replica(1).Log().Batches()[0] != p.Replica(2).Log().Batches()[0] {
		t.Fatal("the replicas do not share the cleaned batch")
	}
	// Offsets are kept: a read at 0 starts at the batch holding 3-4.
	if bs := p.Replica(1).Log().Read(0, 10, 1<<20); len(bs) == 0 || bs[0].BaseOffset != 3 || bs[0].LastOffset != 4 {
		t.Fatalf("read at 0: %+v", bs)
	}
	// Nothing new is dirty: the next pass does nothing.
	if res := p.Clean(time.UnixMilli(6500), false); res.Cleaned {
		t.Fatalf("second pass: %+v", res)
	}
	// Past the horizon (6000+1000) a pass drops the tombstone, though
	// nothing is dirty.
	if res := p.Clean(time.UnixMilli(7000), false); !res.Cleaned || res.RecordsRemoved != 1 {
		t.Fatalf("pass after the horizon: %+v", res)
	}
	checkContents(t, p.Replica(1).Log(), "5:c=2", "6:a=3", "7:d=1")
	if l := p.Replica(1).Log(); l.StartOffset() != 0 || l.EndOffset() != 8 {
		t.Fatalf("log start %d end %d: compaction moved them", l.StartOffset(), l.EndOffset())
	}
}

func TestCleanerHonoursDirtyRatioAndLags(t *testing.T) {
	p := compacted(CompactionConfig{MinCleanableDirtyRatio: 0.5, MinLagMs: 2500})
	appendAt(t, p, kv(t, 1000, -1, -1, false, "a=1")) // segment 0
	appendAt(t, p, kv(t, 3000, -1, -1, false, "a=2")) // segment 1
	appendAt(t, p, kv(t, 5000, -1, -1, false, "a=3")) // segment 2
	appendAt(t, p, kv(t, 7000, -1, -1, false, "a=4")) // active segment 3
	// At 5000 only segment 0 (max ts 1000) is older than the 2500 ms lag;
	// segment 1 (3000) is not, so cleaning stops at 1 and removes nothing.
	if res := p.Clean(time.UnixMilli(5000), false); res.End != 1 || res.RecordsRemoved != 0 {
		t.Fatalf("with the min lag: %+v", res)
	}
	// At 9000 segments 0-2 are cleanable; a=3 at 2 supersedes 0 and 1.
	if res := p.Clean(time.UnixMilli(9000), false); res.End != 3 || res.RecordsRemoved != 2 {
		t.Fatalf("after the lag: %+v", res)
	}
	checkContents(t, p.Replica(1).Log(), "2:a=3", "3:a=4")

	// A dirty ratio below min.cleanable.dirty.ratio waits, unless
	// max.compaction.lag.ms is overdue.
	p = compacted(CompactionConfig{MinCleanableDirtyRatio: 0.9, MaxLagMs: 10_000})
	for i, ts := range []int64{1000, 3000, 5000} {
		appendAt(t, p, kv(t, ts, -1, -1, false, fmt.Sprintf("k%d=v", i)))
	}
	p.Clean(time.UnixMilli(6000), true) // all clean to 2
	appendAt(t, p, kv(t, 7000, -1, -1, false, "k0=w"))
	appendAt(t, p, kv(t, 9000, -1, -1, false, "z=1")) // closes segment at 3
	if res := p.Clean(time.UnixMilli(9500), false); res.Cleaned || res.DirtyRatio >= 0.9 || res.FirstDirty != 2 {
		t.Fatalf("below the dirty ratio: %+v", res)
	}
	if res := p.Clean(time.UnixMilli(16_000), false); !res.Cleaned {
		t.Fatalf("max.compaction.lag.ms overdue (oldest dirty 5000): %+v", res)
	}
	checkContents(t, p.Replica(1).Log(), "1:k1=v", "2:k2=v", "3:k0=w", "4:z=1")
}

func TestCleanerRemovesAbortedRecordsAndThenMarkers(t *testing.T) {
	p := compacted(CompactionConfig{DeleteRetentionMs: 1000})
	appendAt(t, p, kv(t, 1000, 7, 0, true, "a=1", "b=1")) // 0-1, aborted
	appendAt(t, p, marker(7, 0, false, 0))                // 2 ABORT
	appendAt(t, p, kv(t, 1100, 8, 0, true, "c=1"))        // 3, committed
	appendAt(t, p, marker(8, 0, true, 0))                 // 4 COMMIT
	appendAt(t, p, kv(t, 1200, 8, 1, true, "c=2"))        // 5, committed
	appendAt(t, p, marker(8, 0, true, 0))                 // 6 COMMIT
	appendAt(t, p, kv(t, 5000, -1, -1, false, "z=1"))     // 7: rolls
	checkSegs(t, p.Replica(1).Log(), 0, 7)

	p.Clean(time.UnixMilli(5000), true)
	// Aborted records go at once (producer 7's batch stays empty: it is
	// its last); the markers stay until their horizon (6000).
	checkContents(t, p.Replica(1).Log(), "0-1:empty", "2:ABORT", "4:COMMIT", "5:c=2", "6:COMMIT", "7:z=1")
	// After it, markers of transactions with nothing left go.
	p.Clean(time.UnixMilli(6000), true)
	checkContents(t, p.Replica(1).Log(), "0-1:empty", "5:c=2", "6:COMMIT", "7:z=1")
	// Producer 7's sequence state survives in the empty batch's header.
	bs := p.Replica(1).Log().Batches()
	if bs[0].ProducerID != 7 || bs[0].LastOffset != 1 || bs[0].lastSequence() != 1 {
		t.Fatalf("empty batch %+v", bs[0])
	}
	// Replaying the cleaned log (a restart) opens no transaction for the
	// empty batch whose marker is gone: the LSO is the HW.
	r := p.Replica(1)
	r.rebuildProducers()
	if r.LSO() != r.HW() || r.HW() != 8 {
		t.Fatalf("after replaying the cleaned log: LSO %d HW %d", r.LSO(), r.HW())
	}
}

// A follower that was down when the leader compacted keeps the batches it
// had, fetches the compacted ones after them, gaps and all, and its own
// cleaning pass (each replica cleans its own log, as in Kafka) brings it to
// the leader's contents once its segment is closed.
func TestFollowerCatchesUpAcrossCompactedGaps(t *testing.T) {
	p := NewPartition([]int32{1, 2, 3}, Config{Segment: SegmentConfig{Ms: 1000}, Compaction: CompactionConfig{Compact: true}}, t0)
	appendAt(t, p, kv(t, 1000, -1, -1, false, "a=1", "b=1")) // 0-1, on every replica
	crash(p, 3)
	appendAt(t, p, kv(t, 1100, -1, -1, false, "a=2")) // 2
	appendAt(t, p, kv(t, 3000, -1, -1, false, "b=2")) // 3, rolls
	appendAt(t, p, kv(t, 5000, -1, -1, false, "c=1")) // 4, rolls: the active segment
	if res := p.Clean(time.UnixMilli(6000), true); !res.Cleaned || res.End != 4 || res.RecordsRemoved != 2 {
		t.Fatalf("clean: %+v", res)
	}
	p.SetOnline(3, true, t0)
	replicateAll(t, p)
	checkContents(t, p.Replica(3).Log(), "0:a=1", "1:b=1", "2:a=2", "3:b=2", "4:c=1")
	if res := p.Clean(time.UnixMilli(6500), false); res.Cleaned {
		t.Fatalf("the leader had nothing dirty: %+v", res)
	}
	for _, id := range []int32{1, 2, 3} {
		checkContents(t, p.Replica(id).Log(), "2:a=2", "3:b=2", "4:c=1")
		if r := p.Replica(id); r.LEO() != 5 {
			t.Fatalf("replica %d LEO %d", id, r.LEO())
		}
	}
	if !p.InISR(3) {
		t.Fatal("the follower did not rejoin the ISR")
	}
}
