package replication

import "sort"

// Segments: a replica's log is a list of them, rolled as Kafka's
// UnifiedLog.maybeRoll does. Retention deletes whole segments and the
// cleaner rewrites closed ones; the last (active) segment is only appended
// to.

// Kafka's defaults for segment.bytes (log.segment.bytes) and segment.ms
// (log.roll.ms / log.roll.hours = 168).
const (
	DefaultSegmentBytes = 1 << 30
	DefaultSegmentMs    = 7 * 24 * 60 * 60 * 1000
)

// SegmentConfig is when the active segment rolls.
type SegmentConfig struct {
	// Bytes is segment.bytes: roll before an append would take the active
	// segment past it. 0 means the default.
	Bytes int64
	// Ms is segment.ms: roll when the new batch's max timestamp is more
	// than this past the max timestamp of the segment's first batch (Kafka
	// judges by record timestamps, so every replica rolls at the same
	// offsets). 0 means the default.
	Ms int64
}

func (c SegmentConfig) bytes() int64 {
	if c.Bytes <= 0 {
		return DefaultSegmentBytes
	}
	return c.Bytes
}

func (c SegmentConfig) ms() int64 {
	if c.Ms <= 0 {
		return DefaultSegmentMs
	}
	return c.Ms
}

// segment is one segment: its batches, its base offset (its file name in
// Kafka, kept when retention trims its front or the cleaner empties it),
// size and timestamps.
type segment struct {
	base    int64
	batches []*Batch
	bytes   int64
	// firstTimestamp is the max timestamp of the first batch appended,
	// which segment.ms counts from (Kafka's rollingBasedTimestamp); -1 none.
	firstTimestamp int64
	// maxTimestamp is the largest batch timestamp, which retention.ms
	// judges the segment by; -1 none.
	maxTimestamp int64
	// below is the bytes of batches DeleteRecords dropped from its front:
	// Kafka's segment file keeps them until the whole segment goes.
	below int64
}

// size is the segment's size as Kafka's file has it.
func (s *segment) size() int64 { return s.bytes + s.below }

func newSegment(base int64) *segment {
	return &segment{base: base, firstTimestamp: -1, maxTimestamp: -1}
}

// SegmentInfo describes one segment of a log.
type SegmentInfo struct {
	BaseOffset   int64
	Batches      int
	Bytes        int64
	MaxTimestamp int64
}

// Segments describes the log's segments, the active one last.
func (l *Log) Segments() []SegmentInfo {
	out := make([]SegmentInfo, 0, len(l.segs))
	for _, s := range l.segs {
		out = append(out, SegmentInfo{BaseOffset: s.base, Batches: len(s.batches), Bytes: s.bytes, MaxTimestamp: s.maxTimestamp})
	}
	return out
}

// SegmentBase is the base offset of the segment holding offset (the active
// segment's for the LEO).
func (l *Log) SegmentBase(offset int64) int64 {
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	if si < 0 {
		return l.end // the active segment, made at the LEO on first use
	}
	return l.segs[si].base
}

// EachSegment calls f with every segment's base offset and batches, in
// order; f must not modify the slice.
func (l *Log) EachSegment(f func(base int64, batches []*Batch)) {
	if len(l.segs) == 0 {
		f(l.end, nil) // the active segment, made at the LEO on first use
		return
	}
	for _, s := range l.segs {
		f(s.base, s.batches)
	}
}

// NumSegments is the number of segments, the active one included.
func (l *Log) NumSegments() int { return max(len(l.segs), 1) }

// active returns the active segment, creating the first one at the LEO.
func (l *Log) active() *segment {
	if len(l.segs) == 0 {
		d := l.own()
		d.segs = append(d.segs, newSegment(d.end))
	}
	return l.segs[len(l.segs)-1]
}

// rollAt starts a new active segment at base.
func (l *Log) rollAt(base int64) *segment {
	s := newSegment(base)
	d := l.own()
	d.segs = append(d.segs, s)
	return s
}

// shouldRoll is Kafka's LogSegment.shouldRoll for an append of b: the
// segment is not empty and either b would take it past segment.bytes or
// b's timestamp is segment.ms past the segment's first batch.
func (s *segment) shouldRoll(b *Batch, c SegmentConfig) bool {
	if s.size() == 0 {
		return false
	}
	if s.size() > c.bytes()-int64(len(b.Raw)) {
		return true
	}
	return s.firstTimestamp >= 0 && b.MaxTimestamp-s.firstTimestamp > c.ms()
}

func (s *segment) add(b *Batch) {
	if len(s.batches) == 0 {
		s.firstTimestamp = b.MaxTimestamp
	}
	s.batches = append(s.batches, b)
	s.bytes += int64(len(b.Raw))
	s.maxTimestamp = max(s.maxTimestamp, b.MaxTimestamp)
}

// cut removes the batches from index i on.
func (s *segment) cut(i int) {
	clear(s.batches[i:])
	s.batches = s.batches[:i]
	s.recount()
}

// dropFront removes the first n batches, copying the rest so the dropped
// ones can be freed.
func (s *segment) dropFront(n int) {
	if n == 0 {
		return
	}
	s.batches = append([]*Batch(nil), s.batches[n:]...)
	s.recount()
}

// recount recomputes size and timestamps from the batches.
func (s *segment) recount() {
	s.bytes, s.firstTimestamp, s.maxTimestamp = 0, -1, -1
	for i, b := range s.batches {
		if i == 0 {
			s.firstTimestamp = b.MaxTimestamp
		}
		s.bytes += int64(len(b.Raw))
		s.maxTimestamp = max(s.maxTimestamp, b.MaxTimestamp)
	}
}
