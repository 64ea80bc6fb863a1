package server

// What a chaos run records for its checker (package chaos): every batch a
// leader appends and whether its producer was told it succeeded, every
// range of records a consumer fetch served, every group commit. Entries
// are compact ranges (one per batch or per partition of a fetch), kept on
// the partition under the lock its request already holds, so recording
// adds no lock of its own to produce or fetch; with no run active the
// cost is one atomic load.

import (
	"encoding/binary"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxChaosEntries bounds what one run records (writes, reads and commits
// together); past it the report says it is truncated.
const maxChaosEntries = 1 << 20

// partitionRecord is one partition's recording for run, guarded by p.mu.
type partitionRecord struct {
	run    *chaosRun
	writes []chaos.Write
	reads  []chaos.Read
	// readEpoch is the leader epoch of the last read: within one epoch
	// the log only grows, so a read that continues the last one extends it.
	readEpoch int32
}

// chaosAck is an appended write waiting for its response to be sent.
type chaosAck struct {
	p   *partition
	run *chaosRun
	i   int
	sp  *kmsg.ProduceResponseTopicPartition
}

// recording returns p's record for run, starting it afresh for a new run.
// Callers hold p.mu.
func (p *partition) recording(run *chaosRun) *partitionRecord {
	if p.rec == nil || p.rec.run != run {
		p.extras().rec = &partitionRecord{run: run}
		run.touch(p)
	}
	return p.rec
}

// batchCRC is the CRC-32C stored in a v2 batch: it covers the contents but
// not the offsets or leader epoch, so it names the batch in every replica.
func batchCRC(raw []byte) uint32 {
	if len(raw) < 21 {
		return 0
	}
	return binary.BigEndian.Uint32(raw[17:21])
}

// produced notes batch b just appended to p for a produce with acks.
// An idempotent retry the leader deduplicated appends nothing: its answer
// acknowledges the original write. Callers hold p.mu.
func (run *chaosRun) produced(cn *conn, p *partition, b *replication.Batch, res replication.AppendResult, acks int16, sp *kmsg.ProduceResponseTopicPartition) {
	rec := p.recording(run)
	if res.Duplicate {
		// The original: same producer, epoch and sequence, at the offset
		// the leader reports if a truncation reused offsets since.
		orig := -1
		for i := len(rec.writes) - 1; i >= 0; i-- {
			w := &rec.writes[i]
			if w.ProducerID == b.ProducerID && w.ProducerEpoch == b.ProducerEpoch && w.Sequence == b.BaseSequence {
				if orig < 0 || w.Base == res.BaseOffset {
					orig = i
				}
				if w.Base == res.BaseOffset {
					break
				}
			}
		}
		if orig >= 0 {
			cn.chaosAcks = append(cn.chaosAcks, chaosAck{p: p, run: run, i: orig, sp: sp})
		}
		return
	}
	if !run.take() {
		return
	}
	rec.writes = append(rec.writes, chaos.Write{
		TP: chaos.TP{Topic: p.t.name, Partition: p.index}, Base: b.BaseOffset, End: b.EndOffset(), CRC: batchCRC(b.Raw),
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, Sequence: b.BaseSequence, Acks: acks,
		Acked: acks == 0, Seq: cn.b.c.events.seq.Load(),
	})
	if acks != 0 {
		cn.chaosAcks = append(cn.chaosAcks, chaosAck{p: p, run: run, i: len(rec.writes) - 1, sp: sp})
	}
}

// ackChaosWrites marks the writes of the response about to be sent as
// acknowledged where it tells the producer so: before it is sent, so that
// a report the client asks for once it has the answer sees the mark. A
// fault that failed the answer after the work (an error, a dropped
// connection) leaves them unacknowledged, which is what the producer saw.
func (cn *conn) ackChaosWrites(sent bool) {
	for _, a := range cn.chaosAcks {
		if sent && a.sp.ErrorCode == 0 {
			a.p.mu.Lock()
			if a.p.rec != nil && a.p.rec.run == a.run {
				a.p.rec.writes[a.i].Acked = true
			}
			a.p.mu.Unlock()
		}
	}
	clear(cn.chaosAcks)
	cn.chaosAcks = cn.chaosAcks[:0]
}

// recordRead notes what a consumer fetch of p served: a consumer reading
// on from where it left off, in the same leader epoch, extends its last
// range. Callers hold p.mu.
func (c *Cluster) recordRead(run *chaosRun, p *partition, from int64, res *replication.ReadResult, committed bool) {
	first, last := res.Batches[0], res.Batches[len(res.Batches)-1]
	from = max(from, first.BaseOffset)
	rec := p.recording(run)
	epoch := p.st.LeaderEpoch()
	if n := len(rec.reads); n > 0 && rec.readEpoch == epoch {
		if r := &rec.reads[n-1]; r.End == from && r.ReadCommitted == committed {
			r.End, r.LastBase, r.LastCRC, r.HW, r.LSO = last.EndOffset(), last.BaseOffset, batchCRC(last.Raw), res.HW, res.LastStableOffset
			return
		}
	}
	if !run.take() {
		return
	}
	rec.readEpoch = epoch
	rec.reads = append(rec.reads, chaos.Read{
		TP: chaos.TP{Topic: p.t.name, Partition: p.index}, From: from, End: last.EndOffset(),
		LastBase: last.BaseOffset, LastCRC: batchCRC(last.Raw), HW: res.HW, LSO: res.LastStableOffset,
		ReadCommitted: committed, Seq: c.events.seq.Load(),
	})
}

// recordCommits notes the group offsets a coordinator acknowledged.
func (c *Cluster) recordCommits(group string, recs []coordinatorRecord) {
	run := c.chaos.Load()
	if run == nil {
		return
	}
	seq := c.events.seq.Load()
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, r := range recs {
		o, ok := r.Value.(committedOffset)
		if !ok || !run.take() {
			continue
		}
		run.commits = append(run.commits, chaos.Commit{Group: group, TP: chaos.TP{Topic: r.Key.Topic, Partition: r.Key.Partition}, Offset: o.Offset, Seq: seq})
	}
}
