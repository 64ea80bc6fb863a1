package replication

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// What consumers and admin requests read: fetches bounded by the HW or the
// LSO, OffsetForLeaderEpoch and DeleteRecords.

// ReadResult is what a consumer fetch from one replica returns.
type ReadResult struct {
	Batches          []*Batch
	HW               int64
	LastStableOffset int64
	LogStartOffset   int64
	// Aborted lists the aborted transactions overlapping the batches, by
	// first offset; read_committed reads only.
	Aborted []AbortedTxn
}

// Read serves a read_uncommitted consumer fetch from replica id: records
// up to that replica's HW (consumers never see past it), or
// OFFSET_OUT_OF_RANGE when the offset is below its log start or past its
// LEO. An offset in [HW, LEO] returns no records and no error. The caller
// has already checked that the replica may serve.
func (p *Partition) Read(id int32, offset int64, maxBytes int32) (ReadResult, int16) {
	return p.read(id, offset, maxBytes, false)
}

// ReadCommitted serves a read_committed fetch: as Read, but bounded by the
// replica's last stable offset, with the aborted transactions of the range
// so the consumer can drop their records.
func (p *Partition) ReadCommitted(id int32, offset int64, maxBytes int32) (ReadResult, int16) {
	return p.read(id, offset, maxBytes, true)
}

func (p *Partition) read(id int32, offset int64, maxBytes int32, committed bool) (ReadResult, int16) {
	r := p.Replica(id)
	if r == nil {
		return ReadResult{}, kerr.NotLeaderForPartition.Code
	}
	res := ReadResult{HW: r.log.hw, LastStableOffset: r.LSO(), LogStartOffset: r.log.start}
	if offset < r.log.start || offset > r.log.end {
		return res, kerr.OffsetOutOfRange.Code
	}
	bound := r.log.hw
	if committed {
		bound = res.LastStableOffset
	}
	res.Batches = r.log.Read(offset, bound, maxBytes)
	if committed && len(res.Batches) > 0 {
		res.Aborted = r.log.prod.transactions().abortedIn(offset, res.Batches[len(res.Batches)-1].EndOffset())
	}
	return res, 0
}

// OffsetForLeaderEpoch answers an OffsetForLeaderEpoch request served by
// replica id: the end offset of the requested epoch in its log.
func (p *Partition) OffsetForLeaderEpoch(id int32, epoch int32) (int32, int64) {
	r := p.Replica(id)
	if r == nil {
		return -1, -1
	}
	return r.log.EndOffsetForEpoch(epoch)
}

// DeleteRecords advances the log start offset on every replica up to
// offset (clamped to the leader's HW, as Kafka requires) and returns the
// new low watermark.
func (p *Partition) DeleteRecords(offset int64) (int64, int16) {
	l := p.LeaderReplica()
	if l == nil {
		return -1, kerr.NotLeaderForPartition.Code
	}
	if offset == -1 {
		offset = l.log.hw
	}
	if offset > l.log.hw || offset < 0 {
		return -1, kerr.OffsetOutOfRange.Code
	}
	for _, r := range p.replicas {
		from := r.log.start
		r.log.deleteRecordsTo(min(offset, r.log.end))
		r.setHW(r.log.hw)
		if r.log.start != from {
			p.note(Change{Kind: LogStartMoved, Broker: r.Broker, From: from, To: r.log.start, Reason: ReasonDeleteRecords})
		}
	}
	return l.log.start, 0
}
