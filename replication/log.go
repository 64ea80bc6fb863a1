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
	Commit           bool
	CoordinatorEpoch int32
}

// EndOffset is the offset after the batch's last record.
func (b *Batch) EndOffset() int64 { return b.LastOffset + 1 }

// lastSequence is the sequence number of the batch's last record, with
// Kafka's wrap from MaxInt32 to 0.
func (b *Batch) lastSequence() int32 {
	return incrementSequence(b.BaseSequence, b.NumRecords-1)
}

// EpochEntry is one leader-epoch-checkpoint entry: the first offset written
// under Epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// Log is one replica's log: batches in offset order, its log start offset,
// its log end offset (LEO) and its leader epoch cache. It is not safe for
// concurrent use; Partition serialises access.
type Log struct {
	batches []*Batch
	start   int64 // log start offset
	end     int64 // log end offset
	epochs  []EpochEntry
	bytes   int64
}

// StartOffset is the log start offset.
func (l *Log) StartOffset() int64 { return l.start }

// EndOffset is the log end offset (LEO).
func (l *Log) EndOffset() int64 { return l.end }

// Size is the number of stored batch bytes.
func (l *Log) Size() int64 { return l.bytes }

// Batches returns the stored batches; the slice must not be modified.
func (l *Log) Batches() []*Batch { return l.batches }

// Epochs returns a copy of the leader epoch cache.
func (l *Log) Epochs() []EpochEntry { return append([]EpochEntry(nil), l.epochs...) }

// LatestEpoch is the newest epoch in the cache, or -1.
func (l *Log) LatestEpoch() int32 {
	if len(l.epochs) == 0 {
		return -1
	}
	return l.epochs[len(l.epochs)-1].Epoch
}

// append adds a batch whose BaseOffset must equal the LEO.
func (l *Log) append(b *Batch) {
	l.assignEpoch(b.Epoch, b.BaseOffset)
	l.batches = append(l.batches, b)
	l.end = b.EndOffset()
	l.bytes += int64(len(b.Raw))
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
	l.epochs = append(l.epochs, EpochEntry{epoch, offset})
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

// find returns the index of the first batch whose last offset is >= offset.
func (l *Log) find(offset int64) int {
	return sort.Search(len(l.batches), func(i int) bool { return l.batches[i].LastOffset >= offset })
}

// Read returns the batches from the one holding offset up to (not past)
// bound, at most maxBytes in total but always at least one batch if any fits
// below bound, as Kafka does so a consumer never stalls on a large batch.
func (l *Log) Read(offset, bound int64, maxBytes int32) []*Batch {
	i := l.find(offset)
	j, size := i, int64(0)
	for ; j < len(l.batches); j++ {
		b := l.batches[j]
		if b.LastOffset >= bound {
			break
		}
		size += int64(len(b.Raw))
		if size > int64(maxBytes) && j > i {
			break
		}
	}
	return l.batches[i:j]
}

// truncateTo removes every batch at or past offset; the LEO becomes the end
// of the last batch kept (batches are never split), and the epoch cache
// forgets epochs that started at or after the new LEO.
func (l *Log) truncateTo(offset int64) {
	if offset >= l.end {
		return
	}
	i := l.find(offset)
	for _, b := range l.batches[i:] {
		l.bytes -= int64(len(b.Raw))
	}
	clear(l.batches[i:])
	l.batches = l.batches[:i]
	l.end = l.start
	if i > 0 {
		l.end = l.batches[i-1].EndOffset()
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
	clear(l.batches)
	l.batches = l.batches[:0]
	l.bytes = 0
	l.start, l.end = offset, offset
	l.epochs = l.epochs[:0]
}

// advanceStart moves the log start offset forward (DeleteRecords,
// retention), dropping whole batches that end before it.
func (l *Log) advanceStart(offset int64) {
	if offset <= l.start {
		return
	}
	if offset > l.end {
		offset = l.end
	}
	i := sort.Search(len(l.batches), func(i int) bool { return l.batches[i].LastOffset >= offset })
	for _, b := range l.batches[:i] {
		l.bytes -= int64(len(b.Raw))
	}
	l.batches = append(l.batches[:0:0], l.batches[i:]...)
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
	for _, b := range l.batches {
		if b.LastOffset >= bound {
			break
		}
		if b.MaxTimestamp >= ts {
			off := b.BaseOffset
			if off < l.start {
				off = l.start
			}
			return off, b.MaxTimestamp
		}
	}
	return -1, -1
}

// MaxTimestamp returns the offset and timestamp of the batch with the largest
// max timestamp below bound (ListOffsets MAX_TIMESTAMP, KIP-734).
func (l *Log) MaxTimestamp(bound int64) (int64, int64) {
	off, ts := int64(-1), int64(-1)
	for _, b := range l.batches {
		if b.LastOffset >= bound {
			break
		}
		if b.MaxTimestamp > ts {
			off, ts = b.LastOffset, b.MaxTimestamp
		}
	}
	return off, ts
}
