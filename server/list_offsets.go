package server

// ListOffsets, versions 1-11 (special timestamps by version:
// list_offsets_versions.go).
//
// ReplicaID -1 (a consumer) and any follower ID must reach the leader:
// FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH against CurrentLeaderEpoch
// (v4+), then NOT_LEADER_OR_FOLLOWER. ReplicaID -2 (debugging) may reach any
// replica and reads that replica's log. A partition listed twice gets
// INVALID_REQUEST; an unknown one UNKNOWN_TOPIC_OR_PARTITION.
//
// As Kafka's Partition.fetchOffsetForTimestamp, a consumer may see offsets
// below the HW only (the last stable offset with isolation_level
// read_committed, v2+); other callers may see up to the LEO.
//
//   - EARLIEST (-2) and EARLIEST_LOCAL (-4): the log start offset.
//   - LATEST (-1): the HW (consumers) or LEO (others).
//   - MAX_TIMESTAMP (-3): the first record carrying the largest timestamp,
//     if it is below that bound.
//   - LATEST_TIERED (-5), EARLIEST_PENDING_UPLOAD (-6): nothing (no tiered
//     storage).
//   - any other timestamp >= 0: the first record whose timestamp is >= it,
//     if it is below that bound; other negative timestamps are refused
//     (UNSUPPORTED_VERSION).
//
// Nothing found answers offset and timestamp -1 with no error. A leader
// whose HW has not yet reached the start of its epoch (it was just elected)
// answers consumers OFFSET_NOT_AVAILABLE for LATEST and for any timestamp
// search that finds nothing below the HW (Kafka's KAFKA-7395 guard).
//
// With the authorizer a topic needs DESCRIBE (TOPIC_AUTHORIZATION_FAILED,
// checked first).
//
// LeaderEpoch (v4+) is the epoch of the batch holding the offset, or the
// current leader epoch for LATEST, as Kafka reports it; -1 when unknown.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/protocol"

	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Special ListOffsets timestamps and replica IDs.
const (
	listLatest        = -1
	listEarliest      = -2
	listMaxTimestamp  = -3
	listEarliestLocal = -4

	replicaConsumer = -1
	replicaDebug    = -2
)

func (cn *conn) handleListOffsets(req *kmsg.ListOffsetsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)

	type tp struct {
		topic     string
		partition int32
	}
	seen := map[tp]int{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			seen[tp{rt.Topic, rp.Partition}]++
		}
	}

	resp.Topics = make([]kmsg.ListOffsetsResponseTopic, len(req.Topics))
	for i, rt := range req.Topics {
		st := &resp.Topics[i]
		*st = kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(rt.Partitions))
		denied := !cn.allowedTopic(authorizer.OpDescribe, rt.Topic)
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			if denied {
				sp.ErrorCode = errTopicAuth
				continue
			}
			if seen[tp{rt.Topic, rp.Partition}] > 1 {
				sp.ErrorCode = kerr.InvalidRequest.Code
				continue
			}
			if listTimestampUnsupported(rp.Timestamp, req.Version) {
				sp.ErrorCode = kerr.UnsupportedVersion.Code
				continue
			}
			p := c.partition(rt.Topic, rp.Partition)
			if p == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			p.mu.Lock()
			cn.listOffset(p.st, req.ReplicaID, req.IsolationLevel, rp, sp)
			p.mu.Unlock()
		}
	}
	return resp, nil
}

// listOffset answers one partition; the caller holds the partition's lock.
func (cn *conn) listOffset(st *replication.Partition, replicaID int32, isolation int8, rp kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	me := cn.b.id
	if replicaID == replicaDebug {
		if code := checkLeaderEpoch(st, rp.CurrentLeaderEpoch); code != 0 {
			sp.ErrorCode = code
			return
		}
	} else if code := checkLeader(st, me, rp.CurrentLeaderEpoch); code != 0 {
		sp.ErrorCode = code
		return
	}
	r := st.Replica(me)
	if r == nil {
		sp.ErrorCode = kerr.NotLeaderForPartition.Code
		return
	}

	client := replicaID == replicaConsumer
	bound := r.LEO()
	if client {
		bound = r.HW()
		if isolation == 1 {
			bound = r.LSO()
		}
	}
	// A new leader's HW may trail offsets committed under the old one
	// until its followers fetch again; consumers must not see that gap.
	lagging := client && st.Leader() == me && st.EpochStartOffset() > r.HW()

	log := r.Log()
	var off, ts int64 = -1, -1
	switch rp.Timestamp {
	case listLatest:
		if lagging {
			sp.ErrorCode = kerr.OffsetNotAvailable.Code
			return
		}
		sp.Offset, sp.Timestamp, sp.LeaderEpoch = bound, -1, st.LeaderEpoch()
		return
	case listEarliest, listEarliestLocal:
		sp.Offset, sp.Timestamp, sp.LeaderEpoch = r.LogStartOffset(), -1, firstEpoch(log)
		return
	case listLatestTiered, listEarliestPendingUpload:
		return // nothing is tiered: -1/-1, epoch -1 (list_offsets_versions.go)
	case listMaxTimestamp:
		off, ts = log.MaxTimestamp(log.EndOffset())
		off = recordAt(log, off, func(_, t int64) bool { return t == ts })
	default:
		off, _ = log.OffsetForTimestamp(rp.Timestamp, log.EndOffset())
		off = recordAt(log, off, func(_, t int64) bool { return t >= rp.Timestamp })
		if off >= 0 {
			ts = recordTimestamp(log, off)
		}
	}
	if off < 0 || off >= bound {
		if lagging {
			sp.ErrorCode = kerr.OffsetNotAvailable.Code
		}
		return // -1/-1: nothing visible matches
	}
	sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, ts, epochAt(log, off)
}

// firstEpoch is the epoch at the log start offset, as Kafka reports it for
// EARLIEST: the first cached epoch if it starts at or before the log start.
func firstEpoch(l *replication.Log) int32 {
	es := l.Epochs()
	if len(es) == 0 || es[0].StartOffset > l.StartOffset() {
		return -1
	}
	return es[0].Epoch
}

// epochAt is the leader epoch stamped on the batch holding offset, or -1.
func epochAt(l *replication.Log, offset int64) int32 {
	b := l.BatchAt(offset)
	if b == nil {
		return -1
	}
	return b.Epoch
}

// recordAt narrows a timestamp search from the batch holding offset to its
// first record whose timestamp matches, as Kafka answers at record
// granularity (KAFKA-16310); offset itself when the records cannot be read.
func recordAt(log *replication.Log, offset int64, match func(off, ts int64) bool) int64 {
	if offset < 0 {
		return offset
	}
	off, _ := scanRecords(log, offset, match)
	return off
}

// recordTimestamp is the timestamp of the record at offset.
func recordTimestamp(log *replication.Log, offset int64) int64 {
	_, ts := scanRecords(log, offset, func(o, _ int64) bool { return o == offset })
	return ts
}

// scanRecords returns the first record of the batch holding offset (and
// not below the log start) whose timestamp matches, and that timestamp; offset and
// the batch's max timestamp when none does or the batch cannot be read.
func scanRecords(log *replication.Log, offset int64, match func(off, ts int64) bool) (int64, int64) {
	bs := log.Read(offset, log.EndOffset(), 1)
	if len(bs) == 0 {
		return offset, -1
	}
	b := bs[0]
	h, err := protocol.ParseBatchHeader(b.Raw)
	if err != nil {
		return offset, b.MaxTimestamp
	}
	if h.LogAppendTime() {
		return offset, b.MaxTimestamp // every record has the append time
	}
	recs, err := protocol.Records(b.Raw)
	if err != nil {
		return offset, b.MaxTimestamp
	}
	for _, r := range recs {
		o, ts := b.BaseOffset+int64(r.OffsetDelta), h.BaseTimestamp+r.TimestampDelta
		if o >= log.StartOffset() && match(o, ts) {
			return o, ts
		}
	}
	return offset, b.MaxTimestamp
}
