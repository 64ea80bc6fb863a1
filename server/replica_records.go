package server

import (
	"encoding/base64"
	"fmt"
	"unicode/utf8"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
)

type (
	ReplicaRecords = api.ReplicaRecords
	LogRecord      = api.LogRecord
	RecordHeader   = api.RecordHeader
)

// MaxReplicaRecords caps one ReplicaRecords page.
const MaxReplicaRecords = 1000

// ReplicaRecords reads up to max records (1 to MaxReplicaRecords) of
// broker's replica of topic/partition from offset on: that replica's own
// log, whatever the leader holds, decoded from the stored batches, with
// transaction markers, aborted and open transactions, and the records at
// or past the partition's HW marked. An offset below the replica's log
// start reads from its start. Whole batches are returned until max is
// reached, so a page may end inside a batch; NextOffset continues it.
func (c *Cluster) ReplicaRecords(topic string, partition, broker int32, offset int64, max int) (ReplicaRecords, error) {
	p, err := c.mustPartition(topic, partition)
	if err != nil {
		return ReplicaRecords{}, err
	}
	if max < 1 || max > MaxReplicaRecords {
		return ReplicaRecords{}, fmt.Errorf("max %d must be between 1 and %d", max, MaxReplicaRecords)
	}
	out := ReplicaRecords{Topic: topic, Partition: partition, Broker: broker, Records: []LogRecord{}}
	var (
		batches []*replication.Batch
		aborted []replication.AbortedTxn
		open    []replication.OpenTransaction
	)
	p.mu.Lock()
	r := p.st.Replica(broker)
	if r == nil {
		p.mu.Unlock()
		return ReplicaRecords{}, fmt.Errorf("%w: broker %d has no replica of %s/%d", errUnknownPartition, broker, topic, partition)
	}
	out.LogStartOffset, out.LogEndOffset, out.HighWatermark, out.LastStableOffset = r.LogStartOffset(), r.LEO(), r.HW(), r.LSO()
	out.PartitionHighWatermark = -1
	if p.st.Leader() >= 0 {
		out.PartitionHighWatermark = p.st.HW()
	}
	aborted, open = r.AbortedTransactions(), r.OpenTransactions()
	// Batches hold immutable bytes shared by the replicas: collect them
	// under the lock, decode them after. Read stops at a segment's end,
	// so go on from where it stopped until max records are covered.
	next, count := max64(offset, out.LogStartOffset), 0
	for count < max && next < out.LogEndOffset {
		bs := r.Log().Read(next, out.LogEndOffset, 1<<20)
		if len(bs) == 0 {
			break
		}
		for _, b := range bs {
			if count >= max {
				break
			}
			batches = append(batches, b)
			count += int(b.LastOffset - max64(next, b.BaseOffset) + 1)
			next = b.LastOffset + 1
		}
	}
	p.mu.Unlock()

	out.NextOffset = max64(offset, out.LogStartOffset)
	for _, b := range batches {
		recs, err := replicaBatchRecords(b, aborted, open, out.PartitionHighWatermark)
		if err != nil {
			return ReplicaRecords{}, fmt.Errorf("batch at offset %d of broker %d's replica of %s/%d: %w", b.BaseOffset, broker, topic, partition, err)
		}
		for _, rec := range recs {
			if rec.Offset < offset || len(out.Records) >= max {
				continue
			}
			out.Records = append(out.Records, rec)
			out.NextOffset = rec.Offset + 1
		}
		if len(out.Records) < max {
			out.NextOffset = max64(out.NextOffset, b.LastOffset+1)
		}
	}
	if len(batches) == 0 {
		out.NextOffset = min(out.LogEndOffset, out.NextOffset)
	}
	return out, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// replicaBatchRecords decodes one stored batch.
func replicaBatchRecords(b *replication.Batch, aborted []replication.AbortedTxn, open []replication.OpenTransaction, hw int64) ([]LogRecord, error) {
	h, err := protocol.ParseBatchHeader(b.Raw)
	if err != nil {
		return nil, err
	}
	recs, err := protocol.Records(b.Raw)
	if err != nil {
		return nil, err
	}
	inAborted := func(off int64) bool {
		for _, a := range aborted {
			if a.ProducerID == b.ProducerID && a.FirstOffset <= off && off < a.LastOffset {
				return true
			}
		}
		return false
	}
	inOpen := func(off int64) bool {
		for _, o := range open {
			if o.ProducerID == b.ProducerID && o.FirstOffset <= off {
				return true
			}
		}
		return false
	}
	out := make([]LogRecord, 0, len(recs))
	for _, r := range recs {
		off := h.BaseOffset + int64(r.OffsetDelta)
		lr := LogRecord{Offset: off, Timestamp: h.BaseTimestamp + r.TimestampDelta, LeaderEpoch: h.PartitionLeaderEpoch,
			ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, Sequence: -1, Transactional: h.IsTransactional(),
			AboveHW: hw < 0 || off >= hw}
		if h.LogAppendTime() {
			lr.Timestamp, lr.LogAppendTime = h.MaxTimestamp, true
		}
		if h.BaseSequence >= 0 {
			lr.Sequence = h.BaseSequence + r.OffsetDelta
		}
		lr.Key, lr.KeyEncoding = recordText(r.Key)
		lr.Value, lr.ValueEncoding = recordText(r.Value)
		for _, hd := range r.Headers {
			v, enc := recordText(hd.Value)
			lr.Headers = append(lr.Headers, RecordHeader{Key: hd.Key, Value: v, ValueEncoding: enc})
		}
		switch {
		case h.IsControl():
			lr.Control, lr.CoordinatorEpoch = "ABORT", b.CoordinatorEpoch
			if b.Commit {
				lr.Control = "COMMIT"
			}
		case h.IsTransactional():
			lr.Aborted = inAborted(off)
			lr.Open = !lr.Aborted && inOpen(off)
		}
		out = append(out, lr)
	}
	return out, nil
}

// recordText is b as text, or as base64 when it is not UTF-8; nil stays
// nil.
func recordText(b []byte) (*string, string) {
	if b == nil {
		return nil, ""
	}
	if utf8.Valid(b) {
		s := string(b)
		return &s, ""
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s, "base64"
}
