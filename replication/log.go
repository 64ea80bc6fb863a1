package replication

import "sort"

// Batch is one v2 record batch as a replica stores it. The leader fills it
// once at append time; after that it is immutable and every replica's log
// holds the same pointer, so replication costs no copies.
type Batch struct {
	Raw          []byte // the whole batch, base offset and leader epoch already rewritten
	BaseOffset   int64
	LastOffset   int64
	Epoch        int32 // partition leader epoch stamped by the leader
	MaxTimestamp int64

	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	NumRecords    int32
	Transactional bool
	Control       bool
	// Commit and CoordinatorEpoch describe a control batch: a commit (else
	// abort) marker written by the coordinator of that epoch.
	Commit bool
	// TxnVersion is the transaction version a marker is written under
	// (WriteTxnMarkers v2+); only the leader's append checks it.
	TxnVersion int8
	// EpochBumpVerified marks a transactional batch the leader verified
	// with its coordinator under transaction version 2 (Kafka's
	// verification entry that supports the epoch bump): with no sequence
	// history for its producer here it must start at sequence 0.
	EpochBumpVerified bool
	CoordinatorEpoch  int32
	// DeleteHorizon is when the log cleaner may drop this batch's
	// tombstones and, once its transaction has no data left, its marker
	// (Unix ms; 0 until a cleaning pass first sets it to that pass's time
	// plus delete.retention.ms, as KIP-534's delete horizon).
	DeleteHorizon int64
}

// EndOffset is the offset after the batch's last record.
func (b *Batch) EndOffset() int64 { return b.LastOffset + 1 }

// lastSequence is the sequence number of the batch's last record, with
// Kafka's wrap from MaxInt32 to 0. Like Kafka it counts by the last offset
// delta, which the log cleaner keeps when it removes records.
func (b *Batch) lastSequence() int32 {
	return incrementSequence(b.BaseSequence, int32(b.LastOffset-b.BaseOffset))
}

// EpochEntry is one leader-epoch-checkpoint entry: the first offset written
// under Epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// Log is one replica's log: a list of segments (segment.go) holding batches
// in offset order, its log start offset, its log end offset (LEO) and its
// leader epoch cache. The last segment is the active one, the only one
// appended to. It is not safe for concurrent use; Partition serialises
// access. Its state is shared with other idle logs until the first write
// (logdata.go). Logs are the replicas' (Replica.Log); the zero Log is not
// one.
type Log struct {
	*logData
}

// logRewrites is what a log knows of its rewrites: most logs are never
// truncated nor compacted, so it is kept apart and made on first use.
type logRewrites struct {
	// cleanedTo is the cleaner's checkpoint: below it the log was
	// compacted (Kafka's cleaner-offset-checkpoint).
	cleanedTo int64
	horizon   int64 // the earliest delete horizon the cleaner waits for; 0 none
	// n counts changes to the log's contents other than appends and a
	// moved log start (truncation, compaction), so a copy on disk knows
	// to rewrite itself.
	n uint64
}

// rewrites returns the log's rewrite state, making it.
func (l *Log) rewrites() *logRewrites {
	if l.rw == nil {
		l.own().rw = &logRewrites{}
	}
	return l.rw
}

// cleanedTo is the cleaner's checkpoint, 0 before the first pass.
func (l *Log) cleanedTo() int64 {
	if l.rw == nil {
		return 0
	}
	return l.rw.cleanedTo
}

// horizon is the earliest delete horizon the cleaner waits for; 0 none.
func (l *Log) horizon() int64 {
	if l.rw == nil {
		return 0
	}
	return l.rw.horizon
}

// Rewrites counts the changes to the log's contents other than appends
// and a moved log start.
func (l *Log) Rewrites() uint64 {
	if l.rw == nil {
		return 0
	}
	return l.rw.n
}

// StartOffset is the log start offset.
func (l *Log) StartOffset() int64 { return l.start }

// EndOffset is the log end offset (LEO).
func (l *Log) EndOffset() int64 { return l.end }

// Size is the log's size as Kafka counts it (DescribeLogDirs, and
// retention.bytes): its segments' bytes, with what DeleteRecords put below
// the log start and Kafka has not deleted yet (deleteRecordsTo).
// Each segment keeps its own count; a log rarely has more than a few.
func (l *Log) Size() int64 {
	n := l.breached
	for _, s := range l.segs {
		n += s.size()
	}
	return n
}

// Batches returns every stored batch in offset order, in a new slice (for
// loading coordinators and for tests; hot paths use Read).
func (l *Log) Batches() []*Batch {
	n := 0
	for _, s := range l.segs {
		n += len(s.batches)
	}
	out := make([]*Batch, 0, n)
	for _, s := range l.segs {
		out = append(out, s.batches...)
	}
	return out
}

// Epochs returns a copy of the leader epoch cache.
func (l *Log) Epochs() []EpochEntry { return append([]EpochEntry(nil), l.epochs...) }

// LatestEpoch is the newest epoch in the cache, or -1.
func (l *Log) LatestEpoch() int32 {
	if len(l.epochs) == 0 {
		return -1
	}
	return l.epochs[len(l.epochs)-1].Epoch
}

// append adds a batch whose BaseOffset must equal the LEO, rolling a new
// active segment first when segment.bytes or segment.ms (the partition's
// roll, not kept per replica) says so.
func (l *Log) append(b *Batch, roll SegmentConfig) {
	l.assignEpoch(b.Epoch, b.BaseOffset)
	s := l.active()
	if s.shouldRoll(b, roll) {
		s = l.rollAt(b.BaseOffset)
	}
	s.add(b)
	l.own().end = b.EndOffset()
}

// assignEpoch records that epoch starts at offset, if it is newer than the
// latest cached epoch (Kafka's LeaderEpochFileCache.assign).
func (l *Log) assignEpoch(epoch int32, offset int64) {
	if epoch < 0 {
		return
	}
	if n := len(l.epochs); n > 0 {
		last := l.epochs[n-1]
		if epoch <= last.Epoch {
			return
		}
	}
	if l.logData == &emptyLog && epoch == 0 && offset == 0 {
		l.logData = &firstLeaderLog // a new partition's first leader
		return
	}
	d := l.own()
	d.epochs = append(d.epochs, EpochEntry{epoch, offset})
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch from this log's epoch cache
// exactly as Kafka's LeaderEpochFileCache.endOffsetFor does: the requested
// epoch if it is the latest (with the LEO), otherwise the largest known epoch
// at or below it with the start offset of the next higher epoch; (-1, -1)
// when nothing fits.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	if epoch < 0 || len(l.epochs) == 0 {
		return -1, -1
	}
	if epoch == l.LatestEpoch() {
		return epoch, l.end
	}
	// First entry with Epoch > epoch.
	hi := sort.Search(len(l.epochs), func(i int) bool { return l.epochs[i].Epoch > epoch })
	if hi == len(l.epochs) {
		return -1, -1
	}
	if hi == 0 {
		return epoch, l.epochs[0].StartOffset
	}
	return l.epochs[hi-1].Epoch, l.epochs[hi].StartOffset
}

// locate returns the segment and batch index of the first batch whose last
// offset is >= offset, or (len(segs), 0) if there is none. Compaction can
// leave a segment without such a batch; the search moves on to the next.
func (l *Log) locate(offset int64) (int, int) {
	// Followers and caught-up consumers read at the tail: past the last
	// batch, or in it.
	if n := len(l.segs); n > 0 {
		if bs := l.segs[n-1].batches; len(bs) >= 2 {
			last := len(bs) - 1
			switch {
			case offset > bs[last].LastOffset:
				return n, 0
			case offset > bs[last-1].LastOffset:
				return n - 1, last
			}
		}
	}
	// The last segment whose base offset is <= offset.
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	si = max(si, 0)
	for ; si < len(l.segs); si++ {
		bs := l.segs[si].batches
		if bi := sort.Search(len(bs), func(i int) bool { return bs[i].LastOffset >= offset }); bi < len(bs) {
			return si, bi
		}
	}
	return len(l.segs), 0
}

// BatchAt returns the batch holding offset, or nil (a gap or out of range).
func (l *Log) BatchAt(offset int64) *Batch {
	si, bi := l.locate(offset)
	if si == len(l.segs) {
		return nil
	}
	if b := l.segs[si].batches[bi]; b.BaseOffset <= offset {
		return b
	}
	return nil
}

// Read returns the batches from the one holding offset up to (not past)
// bound, at most maxBytes in total but always at least one batch if any fits
// below bound, as Kafka does so a consumer never stalls on a large batch.
// Like Kafka it reads from one segment: the next read continues in the next.
// The result shares the log's backing array and must not be modified.
func (l *Log) Read(offset, bound int64, maxBytes int32) []*Batch {
	si, i := l.locate(offset)
	if si == len(l.segs) {
		return nil
	}
	bs := l.segs[si].batches
	j, size := i, int64(0)
	for ; j < len(bs); j++ {
		b := bs[j]
		if b.LastOffset >= bound {
			break
		}
		size += int64(len(b.Raw))
		if size > int64(maxBytes) && j > i {
			break
		}
	}
	return bs[i:j:j]
}

// truncateTo removes every batch at or past offset; the LEO becomes the end
// of the last batch kept (batches are never split), and the epoch cache
// forgets epochs that started at or after the new LEO. Segments that start
// past the cut go; the one holding it becomes the active segment.
func (l *Log) truncateTo(offset int64) {
	if offset >= l.end {
		return
	}
	l.rewrites().n++ // owns the log data
	si, bi := l.locate(offset)
	if si == len(l.segs) {
		si, bi = len(l.segs)-1, len(l.segs[len(l.segs)-1].batches)
	}
	clear(l.segs[si+1:])
	l.segs = l.segs[:si+1]
	l.segs[si].cut(bi)
	l.end = l.start
	for k := si; k >= 0; k-- {
		if bs := l.segs[k].batches; len(bs) > 0 {
			l.end = bs[len(bs)-1].EndOffset()
			break
		}
	}
	if offset < l.start {
		l.end = l.start
	}
	k := sort.Search(len(l.epochs), func(k int) bool { return l.epochs[k].StartOffset >= l.end })
	l.epochs = l.epochs[:k]
}

// truncateFully empties the log and restarts it at offset, the way a
// follower restarts when its fetch offset falls below the leader's log start.
func (l *Log) truncateFully(offset int64) {
	l.rewrites().n++ // owns the log data
	clear(l.segs)
	l.segs = append(l.segs[:0], newSegment(offset))
	l.start, l.end, l.breached = offset, offset, 0
	l.epochs = l.epochs[:0]
}

// advanceStart moves the log start offset forward (DeleteRecords,
// retention, a follower following its leader), dropping whole batches that
// end before it and the segments left empty, except the active one, so
// their memory is released.
func (l *Log) advanceStart(offset int64) {
	if offset <= l.start {
		return
	}
	if offset > l.end {
		offset = l.end
	}
	l.own()
	si, bi := l.locate(offset)
	if si == len(l.segs) { // everything is below: keep only the active segment
		si, bi = len(l.segs)-1, len(l.segs[len(l.segs)-1].batches)
	}
	l.segs = append(l.segs[:0:0], l.segs[si:]...)
	l.segs[0].dropFront(bi)
	l.start = offset
	// Keep the epoch in force at the new start, re-based to it.
	k := sort.Search(len(l.epochs), func(k int) bool { return l.epochs[k].StartOffset > offset })
	if k > 0 {
		l.epochs[k-1].StartOffset = offset
		l.epochs = append(l.epochs[:0:0], l.epochs[k-1:]...)
	}
}

// OffsetForTimestamp returns the first offset whose batch max timestamp is
// >= ts among batches below bound, or -1 (ListOffsets by timestamp works at
// batch granularity here; records inside a batch share its max timestamp).
func (l *Log) OffsetForTimestamp(ts, bound int64) (int64, int64) {
	for _, s := range l.segs {
		for _, b := range s.batches {
			if b.LastOffset >= bound {
				return -1, -1
			}
			if b.MaxTimestamp >= ts {
				return max(b.BaseOffset, l.start), b.MaxTimestamp
			}
		}
	}
	return -1, -1
}

// MaxTimestamp returns the offset and timestamp of the batch with the largest
// max timestamp below bound (ListOffsets MAX_TIMESTAMP, KIP-734).
func (l *Log) MaxTimestamp(bound int64) (int64, int64) {
	off, ts := int64(-1), int64(-1)
	for _, s := range l.segs {
		for _, b := range s.batches {
			if b.LastOffset >= bound {
				return off, ts
			}
			if b.MaxTimestamp > ts {
				off, ts = b.LastOffset, b.MaxTimestamp
			}
		}
	}
	return off, ts
}
