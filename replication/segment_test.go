package replication

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// sized is a batch of n records whose raw bytes are size long and whose max
// timestamp is ts (ms).
func sized(n int32, size int, ts int64) *Batch {
	b := batch(n)
	b.Raw = make([]byte, size)
	b.MaxTimestamp = ts
	return b
}

func segBases(l *Log) []int64 {
	var out []int64
	for _, s := range l.Segments() {
		out = append(out, s.BaseOffset)
	}
	return out
}

func checkSegs(t *testing.T, l *Log, want ...int64) {
	t.Helper()
	if got := segBases(l); !slices.Equal(got, want) {
		t.Fatalf("segment base offsets %v, want %v", got, want)
	}
}

func TestSegmentsRollBySize(t *testing.T) {
	p := NewPartition([]int32{1, 2}, Config{Segment: SegmentConfig{Bytes: 250}}, t0)
	for range 5 {
		mustAppend(t, p, sized(2, 100, 1), 1) // offsets 0-1, 2-3, ...
	}
	l := p.Replica(1).Log()
	// 100+100 fits 250; a third would make 300: roll at 4 and 8.
	checkSegs(t, l, 0, 4, 8)
	if s := l.Segments(); s[0].Bytes != 200 || s[2].Bytes != 100 || l.Size() != 500 {
		t.Fatalf("segments %+v, size %d", s, l.Size())
	}
	// Followers roll at the same offsets.
	replicateAll(t, p)
	checkSegs(t, p.Replica(2).Log(), 0, 4, 8)
	// A read stops at the end of the segment holding its offset.
	if bs := l.Read(2, 10, 1<<20); len(bs) != 1 || bs[0].BaseOffset != 2 {
		t.Fatalf("read from 2: %d batches", len(bs))
	}
	if bs := l.Read(4, 10, 1<<20); len(bs) != 2 || bs[1].LastOffset != 7 {
		t.Fatalf("read from 4: %d batches", len(bs))
	}
	// A batch larger than segment.bytes still goes in, alone.
	mustAppend(t, p, sized(1, 400, 1), 1) // offset 10
	mustAppend(t, p, sized(1, 70, 1), 1)  // offset 11
	checkSegs(t, l, 0, 4, 8, 10, 11)
}

func TestSegmentsRollByTimestamp(t *testing.T) {
	p := NewPartition([]int32{1}, Config{Segment: SegmentConfig{Ms: 1000}}, t0)
	for _, ts := range []int64{5000, 5500, 6000, 6001, 6100, 9000} {
		mustAppend(t, p, sized(1, 70, ts), 1)
	}
	// 6001 is 1001 ms past the segment's first batch (5000): roll at 3; 9000
	// is 2999 past 6001: roll at 5.
	checkSegs(t, p.Replica(1).Log(), 0, 3, 5)
}

func TestTruncationAcrossSegments(t *testing.T) {
	p := NewPartition([]int32{1}, Config{Segment: SegmentConfig{Bytes: 100}}, t0)
	for range 4 {
		mustAppend(t, p, sized(2, 100, 1), 1) // one batch per segment: 0, 2, 4, 6
	}
	r := p.Replica(1)
	r.truncateTo(3) // the batch 2-3 cannot be split: cut at 2
	checkSegs(t, r.Log(), 0, 2)
	if r.LEO() != 2 || r.Log().Size() != 100 {
		t.Fatalf("LEO %d size %d, want 2 and 100", r.LEO(), r.Log().Size())
	}
	mustAppend(t, p, sized(1, 50, 1), 1) // the empty segment at 2 is the active one
	checkSegs(t, r.Log(), 0, 2)
	if r.LEO() != 3 {
		t.Fatalf("LEO %d, want 3", r.LEO())
	}
}

func retentionPartition(t *testing.T, rc RetentionConfig) *Partition {
	t.Helper()
	p := NewPartition([]int32{1, 2}, Config{Segment: SegmentConfig{Bytes: 200}, Retention: rc}, t0)
	// Segments [0,4) ts<=1000, [4,8) ts<=2000, [8,10) active ts 3000.
	for _, ts := range []int64{900, 1000, 1900, 2000, 3000} {
		mustAppend(t, p, sized(2, 100, ts), 1)
	}
	replicateAll(t, p)
	checkSegs(t, p.Replica(1).Log(), 0, 4, 8)
	p.TakeChanges()
	return p
}

func TestRetentionByTimeDeletesWholeSegments(t *testing.T) {
	p := retentionPartition(t, RetentionConfig{Delete: true, Ms: 1500, Bytes: -1})
	// At 3400 only the first segment is more than 1500 ms old (1000).
	res := p.ApplyRetention(time.UnixMilli(3400))
	if res != (RetentionResult{Segments: 1, Bytes: 200, LogStartOffset: 4}) {
		t.Fatalf("retention: %+v", res)
	}
	l := p.Replica(1).Log()
	checkSegs(t, l, 4, 8)
	if l.StartOffset() != 4 || l.Size() != 300 {
		t.Fatalf("log start %d size %d", l.StartOffset(), l.Size())
	}
	// Below the log start: OFFSET_OUT_OF_RANGE; the log start is reported.
	if res, code := p.Read(1, 2, 1<<20); code != kerr.OffsetOutOfRange.Code || res.LogStartOffset != 4 {
		t.Fatalf("read at 2: code %d log start %d", code, res.LogStartOffset)
	}
	checkChanges(t, p, got{LogStartMoved, 1, 0, 4, ReasonRetention})
	// The follower follows on its next fetch.
	if p.Replica(2).LogStartOffset() != 0 {
		t.Fatal("the follower moved before fetching")
	}
	fetch(t, p, 2, t0)
	if f := p.Replica(2).Log(); f.StartOffset() != 4 || f.Size() != 300 {
		t.Fatalf("follower log start %d size %d", f.StartOffset(), f.Size())
	}
	checkChanges(t, p, got{LogStartMoved, 2, 0, 4, ReasonLeaderLogStart})
	// Nothing more is due at the same time.
	if res := p.ApplyRetention(time.UnixMilli(3400)); res.Segments != 0 {
		t.Fatalf("second check deleted %d", res.Segments)
	}
}

func TestRetentionNeverPassesTheHW(t *testing.T) {
	p := NewPartition([]int32{1, 2}, Config{Segment: SegmentConfig{Bytes: 100}, Retention: RetentionConfig{Delete: true, Ms: 0, Bytes: -1}}, t0)
	mustAppend(t, p, sized(1, 100, 1), 1) // segment 0
	mustAppend(t, p, sized(1, 100, 1), 1) // segment 1
	replicateAll(t, p)                    // HW 2 (a fetch reads one segment)
	mustAppend(t, p, sized(1, 100, 1), 1) // segment 2, above the HW
	if res := p.ApplyRetention(time.UnixMilli(10_000)); res.LogStartOffset != 2 || res.Segments != 2 {
		t.Fatalf("retention: %+v", res)
	}
	checkSegs(t, p.Replica(1).Log(), 2)
}

func TestRetentionOfEverythingRollsFirst(t *testing.T) {
	p := retentionPartition(t, RetentionConfig{Delete: true, Ms: 100, Bytes: -1})
	res := p.ApplyRetention(time.UnixMilli(5000))
	if res != (RetentionResult{Segments: 3, Bytes: 500, LogStartOffset: 10}) {
		t.Fatalf("retention: %+v", res)
	}
	l := p.Replica(1).Log()
	checkSegs(t, l, 10)
	if l.StartOffset() != 10 || l.EndOffset() != 10 || l.Size() != 0 || p.HW() != 10 {
		t.Fatalf("log start %d LEO %d size %d HW %d", l.StartOffset(), l.EndOffset(), l.Size(), p.HW())
	}
	// The empty active segment is never deleted; appends go on at 10.
	if res := p.ApplyRetention(time.UnixMilli(9000)); res.Segments != 0 {
		t.Fatalf("deleted the empty active segment: %+v", res)
	}
	if r := mustAppend(t, p, sized(1, 70, 9000), 1); r.BaseOffset != 10 || r.LogStartOffset != 10 {
		t.Fatalf("append after retention: %+v", r)
	}
}

func TestRetentionBySize(t *testing.T) {
	// 500 bytes in segments of 200, 200 and 100 (active). Kafka deletes a
	// segment only if the partition stays at or above retention.bytes
	// without it: limit 250 deletes [0,4) (300 left) but not [4,8) (100
	// would be left); limit 100 deletes both; limit 301 neither.
	for _, c := range []struct {
		limit    int64
		segments int
		start    int64
	}{{250, 1, 4}, {100, 2, 8}, {301, 0, 0}} {
		p := retentionPartition(t, RetentionConfig{Delete: true, Ms: -1, Bytes: c.limit})
		if res := p.ApplyRetention(t0); res.LogStartOffset != c.start || res.Segments != c.segments {
			t.Fatalf("retention.bytes %d: %+v", c.limit, res)
		}
	}
	var p *Partition
	// cleanup.policy without delete keeps everything.
	p = retentionPartition(t, RetentionConfig{Ms: 1, Bytes: 1})
	if res := p.ApplyRetention(time.UnixMilli(1 << 40)); res.Segments != 0 || res.LogStartOffset != 0 {
		t.Fatalf("compact only: %+v", res)
	}
}

// DeleteRecords moves the log start only: Kafka's segment files keep the
// bytes below it, counted in the size, until the next retention check
// deletes the segments wholly below the log start (whatever the cleanup
// policy); the segment holding the log start keeps them until it goes.
func TestDeleteRecordsReleasesSegments(t *testing.T) {
	p := retentionPartition(t, RetentionConfig{}) // 200 + 200 + 100 (active)
	if lw, code := p.DeleteRecords(6); code != 0 || lw != 6 {
		t.Fatalf("DeleteRecords: %d %d", lw, code)
	}
	l, f := p.Replica(1).Log(), p.Replica(2).Log()
	checkSegs(t, l, 4, 8) // readable from 6 only
	for _, lg := range []*Log{l, f} {
		if lg.StartOffset() != 6 || lg.Size() != 500 {
			t.Fatalf("after DeleteRecords: log start %d size %d, want 6 and 500", lg.StartOffset(), lg.Size())
		}
	}
	p.ApplyRetention(t0) // [0,4) goes; [4,8) keeps 4-5 in its file
	for _, lg := range []*Log{l, f} {
		if lg.StartOffset() != 6 || lg.Size() != 300 {
			t.Fatalf("after the retention check: log start %d size %d, want 6 and 300", lg.StartOffset(), lg.Size())
		}
	}
	// To the HW: [4,8) is wholly below, the active [8,10) keeps its bytes.
	if lw, code := p.DeleteRecords(-1); code != 0 || lw != 10 {
		t.Fatalf("DeleteRecords to the HW: %d %d", lw, code)
	}
	checkSegs(t, l, 8)
	if l.Size() != 300 {
		t.Fatalf("after DeleteRecords to the HW: size %d, want 300", l.Size())
	}
	p.ApplyRetention(t0)
	if l.Size() != 100 {
		t.Fatalf("after the second check: size %d, want 100 (the active segment)", l.Size())
	}
	// The active segment's file is 100 bytes: a 150-byte batch rolls
	// (segment.bytes 200), a new segment at 10.
	mustAppend(t, p, sized(1, 150, 4000), 1)
	checkSegs(t, l, 8, 10)
	if l.Size() != 250 {
		t.Fatalf("after the append: size %d, want 250", l.Size())
	}
	replicateAll(t, p)   // HW 11
	p.ApplyRetention(t0) // [8,10) is wholly below the log start 10: gone
	checkSegs(t, l, 10)
	if l.Size() != 150 || l.StartOffset() != 10 {
		t.Fatalf("after the third check: size %d log start %d, want 150 and 10", l.Size(), l.StartOffset())
	}
}

// A follower that restarts its log (its fetch fell below the leader's log
// start) deletes every segment, those DeleteRecords left below included.
func TestTruncateFullyForgetsBytesBelowTheStart(t *testing.T) {
	p := retentionPartition(t, RetentionConfig{})
	if _, code := p.DeleteRecords(6); code != 0 {
		t.Fatalf("DeleteRecords: %d", code)
	}
	r := p.Replica(2)
	if r.Log().Size() != 500 {
		t.Fatalf("size %d, want 500", r.Log().Size())
	}
	r.log.truncateFully(10)
	if r.Log().Size() != 0 || r.Log().StartOffset() != 10 {
		t.Fatalf("after the restart: size %d log start %d", r.Log().Size(), r.Log().StartOffset())
	}
}

// retention.ms judges a segment by every timestamp its file holds, those
// below the log start included: the active segment DeleteRecords emptied
// goes (rolling first) once its newest record is old enough.
func TestRetentionOfSegmentBelowTheStart(t *testing.T) {
	p := retentionPartition(t, RetentionConfig{Delete: true, Ms: 1500, Bytes: -1})
	if lw, code := p.DeleteRecords(-1); code != 0 || lw != 10 {
		t.Fatalf("DeleteRecords: %d %d", lw, code)
	}
	l := p.Replica(1).Log()
	if l.Size() != 500 {
		t.Fatalf("after DeleteRecords: size %d, want 500", l.Size())
	}
	// At 3400 [0,4) and [4,8) are wholly below the log start; the active
	// [8,10) (newest 3000) is 400 ms old.
	if res := p.ApplyRetention(time.UnixMilli(3400)); res.Segments != 0 || l.Size() != 100 {
		t.Fatalf("at 3400: %+v, size %d, want 100", res, l.Size())
	}
	checkSegs(t, l, 8)
	if res := p.ApplyRetention(time.UnixMilli(4501)); res.Segments != 1 || res.Bytes != 100 || res.LogStartOffset != 10 {
		t.Fatalf("at 4501: %+v", res)
	}
	checkSegs(t, l, 10)
	if l.Size() != 0 {
		t.Fatalf("at 4501: size %d, want 0", l.Size())
	}
}
