package replication

import (
	"slices"
	"time"
)

// Retention (cleanup.policy=delete): whole segments deleted from the front
// of the leader's log by age and by size, as Kafka's
// UnifiedLog.deleteOldSegments does; followers move their log start up to
// the leader's when their next fetch answer carries it.

// Reasons of LogStartMoved added by retention.
const (
	ReasonRetention      = "retention"        // retention.ms or retention.bytes deleted segments
	ReasonLeaderLogStart = "leader_log_start" // a follower followed the leader's log start
)

// Kafka's retention.ms default (log.retention.hours = 168).
const DefaultRetentionMs = 7 * 24 * 60 * 60 * 1000

// RetentionConfig is cleanup.policy=delete's limits. The zero value keeps
// everything.
type RetentionConfig struct {
	// Delete is whether cleanup.policy includes delete.
	Delete bool
	// Ms is retention.ms: a segment whose largest timestamp is more than
	// this before now is deleted. Negative: no limit.
	Ms int64
	// Bytes is retention.bytes: the oldest segments are deleted while the
	// partition stays above it without them. Negative: no limit.
	Bytes int64
}

// RetentionResult says what one retention check did on the leader.
type RetentionResult struct {
	Segments       int   // segments deleted
	Bytes          int64 // batch bytes released
	LogStartOffset int64 // the leader's log start after the check
}

// ApplyRetention runs one retention check on the leader at now. A segment
// is deletable only if everything in it is below the HW (consumers may not
// have read the rest) and it is not the empty active segment; when every
// segment goes, the log rolls a new empty active segment at its LEO first,
// as Kafka does. The log start offset moves to the first kept segment's
// base offset.
func (p *Partition) ApplyRetention(now time.Time) RetentionResult {
	// Every replica's broker runs the check on its own log.
	for _, r := range p.replicas {
		r.log.releaseBreached()
	}
	l := p.LeaderReplica()
	if l == nil {
		return RetentionResult{LogStartOffset: -1}
	}
	rc := p.cfg.Retention
	res := RetentionResult{LogStartOffset: l.log.start}
	if !rc.Delete {
		return res
	}
	log := &l.log
	nowMs := now.UnixMilli()
	if rc.Ms >= 0 {
		n := log.deletable(l.log.hw, func(s *segment) bool { return nowMs-s.maxTimestamp > rc.Ms })
		res.add(p.deleteSegments(l, n))
	}
	if rc.Bytes >= 0 {
		diff := log.Size() - rc.Bytes
		n := log.deletable(l.log.hw, func(s *segment) bool {
			if diff-s.size() < 0 {
				return false
			}
			diff -= s.size()
			return true
		})
		res.add(p.deleteSegments(l, n))
	}
	res.LogStartOffset = log.start
	return res
}

func (r *RetentionResult) add(o RetentionResult) {
	r.Segments += o.Segments
	r.Bytes += o.Bytes
}

// deletable counts the segments from the front that pred accepts, stopping
// at the first that is not wholly below hw or is the empty active segment.
func (l *Log) deletable(hw int64, pred func(*segment) bool) int {
	n := 0
	for i, s := range l.segs {
		upper := l.end
		if i+1 < len(l.segs) {
			upper = l.segs[i+1].base
		}
		if upper > hw || (i == len(l.segs)-1 && s.size() == 0) || !pred(s) {
			break
		}
		n++
	}
	return n
}

// deleteSegments deletes r's first n segments and records the move.
func (p *Partition) deleteSegments(r *Replica, n int) RetentionResult {
	if n == 0 {
		return RetentionResult{}
	}
	log := &r.log
	if n == len(log.segs) {
		log.rollAt(log.end)
	}
	before, from, kept := log.Size(), log.start, log.segs[n]
	log.advanceStart(max(log.start, kept.base))
	if log.segs[0] != kept {
		// The log start was past them already (DeleteRecords): they go
		// without moving it.
		i := slices.Index(log.segs, kept)
		log.own().segs = append(log.segs[:0:0], log.segs[i:]...)
	}
	r.setHW(r.log.hw)
	if log.start != from {
		p.note(Change{Kind: LogStartMoved, Broker: r.Broker, From: from, To: log.start, Reason: ReasonRetention})
	}
	return RetentionResult{Segments: n, Bytes: before - log.Size()}
}

// followLeaderStart moves follower f's log start up to the leader's, as a
// Kafka follower does with the log start offset in each fetch response,
// bounded by its own HW.
func (p *Partition) followLeaderStart(f *Replica, leaderStart int64) {
	to := min(leaderStart, f.log.hw, f.log.end)
	if to <= f.log.start {
		return
	}
	from := f.log.start
	f.log.advanceStart(to)
	p.note(Change{Kind: LogStartMoved, Broker: f.Broker, From: from, To: f.log.start, Reason: ReasonLeaderLogStart})
}

// deleteRecordsTo moves the log start up to offset for DeleteRecords. Kafka
// only moves its log start offset then: the bytes below stay in its
// segment files, counted in the log's size, until its next retention
// check deletes the segments wholly below the log start (releaseBreached);
// the segment holding the new log start keeps them until it goes whole.
func (l *Log) deleteRecordsTo(offset int64) {
	if offset <= l.start || len(l.segs) == 0 {
		l.advanceStart(offset)
		return
	}
	offset = min(offset, l.end)
	si, bi := l.locate(offset)
	if si == len(l.segs) {
		si, bi = len(l.segs)-1, len(l.segs[len(l.segs)-1].batches)
	}
	var whole, front int64
	for _, s := range l.segs[:si] {
		whole += s.size()
	}
	keep := l.segs[si]
	for _, b := range keep.batches[:bi] {
		front += int64(len(b.Raw))
	}
	// The file keeps its timestamps too: segment.ms and retention.ms go on
	// judging it by them.
	firstTs, maxTs := keep.firstTimestamp, keep.maxTimestamp
	l.advanceStart(offset)
	keep.below += front
	if front > 0 {
		keep.firstTimestamp, keep.maxTimestamp = firstTs, maxTs
	}
	if whole > 0 {
		l.own().breached += whole
	}
}

// releaseBreached deletes the segments wholly below the log start, as
// Kafka's retention check does whatever the cleanup policy
// (deleteLogStartOffsetBreachedSegments).
func (l *Log) releaseBreached() {
	if l.breached != 0 {
		l.own().breached = 0
	}
	// A segment left holding only bytes below the log start (the active
	// one when DeleteRecords went to its end) goes once a later one
	// starts at or below the log start.
	n := 0
	for n+1 < len(l.segs) && len(l.segs[n].batches) == 0 && l.segs[n+1].base <= min(l.start, l.hw) {
		n++
	}
	if n > 0 {
		l.own().segs = append(l.segs[:0:0], l.segs[n:]...)
	}
}
