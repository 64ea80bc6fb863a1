package share

// One share partition's state as its leader keeps it (Kafka's
// SharePartition): the share-partition start offset (SPSO), the end of the
// in-flight window (SPEO, the next offset never acquired), and per
// in-flight offset its state, delivery count, owner and acquisition-lock
// deadline. No clock, no I/O: the caller passes `now`, reads the log and
// writes the Snapshot through a Persister.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AckType is an acknowledgement's type as ShareFetch/ShareAcknowledge
// carry it (0 Gap, 1 Accept, 2 Release, 3 Reject, 4 Renew).
type AckType int8

const (
	AckGap     AckType = 0
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4
)

// Limits are a share partition's group settings.
type Limits struct {
	LockDuration       time.Duration // share.record.lock.duration.ms
	DeliveryCountLimit int16         // share.delivery.count.limit
	MaxInFlight        int64         // group.share.partition.max.record.locks
}

// Range is a run of log offsets [First, Last] the caller found in the log.
// Skip marks offsets never to be delivered (control batches, aborted
// transactions under read_committed): they are archived when reached.
type Range struct {
	First, Last int64
	Skip        bool
}

// AcquiredRange is a run of offsets acquired by one fetch, with the delivery
// count they were acquired at (ShareFetch's AcquiredRecords).
type AcquiredRange struct {
	First, Last   int64
	DeliveryCount int16
}

// AckBatch is one acknowledgement batch: one type for all offsets, or one
// per offset.
type AckBatch struct {
	First, Last int64
	Types       []AckType
}

// Change is an offset whose state a release (lock expiry, a member
// leaving) moved: back to Available, or Archived at the delivery limit.
type Change struct {
	Offset        int64
	State         RecordState
	DeliveryCount int16
}

type inflight struct {
	state    RecordState
	count    int16
	member   string
	deadline time.Time
}

// Partition is one share partition's state. Not safe for concurrent use.
type Partition struct {
	start int64      // SPSO: every offset below is done
	recs  []inflight // offsets start .. start+len(recs)-1 (SPEO = start+len)
}

// NewPartition is a share partition whose first offset to deliver is start.
func NewPartition(start int64) *Partition { return &Partition{start: start} }

// Restore rebuilds a partition from the persisted state, as a new leader
// does: offsets inside the window the batches leave out are Available with
// no deliveries; nothing is acquired.
func Restore(st PartitionState) *Partition {
	p := &Partition{start: st.StartOffset}
	for _, b := range st.Batches {
		if b.LastOffset < p.start {
			continue
		}
		for off := max(b.FirstOffset, p.start); off <= b.LastOffset; off++ {
			for p.end() <= off {
				p.recs = append(p.recs, inflight{state: Available})
			}
			r := &p.recs[off-p.start]
			r.state, r.count = b.DeliveryState, b.DeliveryCount
			if r.state == Acquired { // not written so, but never trust it
				r.state = Available
			}
		}
	}
	p.advance()
	return p
}

// Clone is an independent copy, to roll back to when a change could not
// be persisted.
func (p *Partition) Clone() *Partition {
	return &Partition{start: p.start, recs: append([]inflight(nil), p.recs...)}
}

// StartOffset is the SPSO.
func (p *Partition) StartOffset() int64 { return p.start }

// EndOffset is the SPEO: the next offset never acquired.
func (p *Partition) EndOffset() int64 { return p.start + int64(len(p.recs)) }

func (p *Partition) end() int64 { return p.EndOffset() }

// InFlight is the number of offsets in the window.
func (p *Partition) InFlight() int { return len(p.recs) }

// State returns an offset's state and delivery count; offsets below the
// start are Archived or Acknowledged (reported Archived), offsets at or past
// the end Available with no deliveries.
func (p *Partition) State(off int64) (RecordState, int16, string) {
	switch {
	case off < p.start:
		return Archived, 0, ""
	case off >= p.end():
		return Available, 0, ""
	}
	r := p.recs[off-p.start]
	return r.state, r.count, r.member
}

// NextFetchOffset is where the next acquisition reads the log from: the
// first Available offset in the window, or the end of the window.
func (p *Partition) NextFetchOffset() int64 {
	for i, r := range p.recs {
		if r.state == Available {
			return p.start + int64(i)
		}
	}
	return p.end()
}

// Available says whether an acquisition could take anything below limit
// (the high watermark or LSO).
func (p *Partition) Available(limit int64, lim Limits) bool {
	next := p.NextFetchOffset()
	if next < p.end() {
		return true
	}
	return next < limit && (lim.MaxInFlight <= 0 || int64(len(p.recs)) < lim.MaxInFlight)
}

// Acquire acquires for member the Available offsets of the window and new
// offsets past it, among the ranges the caller read from the log (in order,
// from NextFetchOffset on), until maxRecords are acquired (whole ranges:
// the last one may go past it, as Kafka's batch-aligned acquisition does;
// with strict, share.acquire.mode=record_limit, exactly maxRecords).
// New offsets stop at MaxInFlight in-flight records. Skipped ranges and
// holes between ranges past the window are archived. Each acquired offset's
// delivery count goes up by one and its lock runs until now+LockDuration.
func (p *Partition) Acquire(member string, now time.Time, ranges []Range, maxRecords int, strict bool, lim Limits) []AcquiredRange {
	var out []AcquiredRange
	deadline := now.Add(lim.LockDuration)
	taken := 0
	full := func() bool { return strict && maxRecords > 0 && taken >= maxRecords }
	add := func(off int64, count int16) {
		if n := len(out); n > 0 && out[n-1].Last == off-1 && out[n-1].DeliveryCount == count {
			out[n-1].Last = off
		} else {
			out = append(out, AcquiredRange{First: off, Last: off, DeliveryCount: count})
		}
		taken++
	}
	for _, rg := range ranges {
		if maxRecords > 0 && taken >= maxRecords {
			break
		}
		first := max(rg.First, p.start)
		if first < p.end() { // inside the window: re-acquire what is Available
			for off := first; off <= rg.Last && off < p.end(); off++ {
				r := &p.recs[off-p.start]
				if full() {
					break
				}
				if r.state != Available || rg.Skip {
					continue
				}
				r.state, r.member, r.deadline = Acquired, member, deadline
				r.count++
				add(off, r.count)
			}
			first = p.end()
		}
		if first > rg.Last || full() {
			continue
		}
		if lim.MaxInFlight > 0 && int64(len(p.recs)) >= lim.MaxInFlight {
			break
		}
		for p.end() < first { // a hole in the log: nothing to deliver
			p.recs = append(p.recs, inflight{state: Archived})
		}
		for off := first; off <= rg.Last; off++ {
			if rg.Skip {
				p.recs = append(p.recs, inflight{state: Archived})
				continue
			}
			if lim.MaxInFlight > 0 && int64(len(p.recs)) >= lim.MaxInFlight || full() {
				break
			}
			p.recs = append(p.recs, inflight{state: Acquired, count: 1, member: member, deadline: deadline})
			add(off, 1)
		}
	}
	p.advance()
	return out
}

// Acknowledge applies member's acknowledgements. Every offset from the
// start on must be acquired by member (INVALID_RECORD_STATE otherwise;
// offsets below the start are ignored, as Kafka does); the batches apply
// all or nothing: the answer is the error, 0 when they applied, and the
// records a RELEASE archived at the delivery limit.
func (p *Partition) Acknowledge(member string, now time.Time, batches []AckBatch, lim Limits) (int16, []Change) {
	for _, b := range batches {
		n := b.Last - b.First + 1
		if n <= 0 || len(b.Types) == 0 || len(b.Types) != 1 && int64(len(b.Types)) != n {
			return kerr.InvalidRequest.Code, nil
		}
		for _, t := range b.Types {
			if t < AckGap || t > AckRenew {
				return kerr.InvalidRequest.Code, nil
			}
		}
		// Offsets below the start are done: Kafka 4.4 ignores their
		// acknowledgement (no error).
		for off := max(b.First, p.start); off <= b.Last; off++ {
			if off >= p.end() {
				return kerr.InvalidRecordState.Code, nil
			}
			if r := p.recs[off-p.start]; r.state != Acquired || r.member != member {
				return kerr.InvalidRecordState.Code, nil
			}
		}
	}
	var archived []Change
	for _, b := range batches {
		for off := max(b.First, p.start); off <= b.Last; off++ {
			t := b.Types[0]
			if len(b.Types) > 1 {
				t = b.Types[off-b.First]
			}
			r := &p.recs[off-p.start]
			switch t {
			case AckAccept:
				r.state, r.member = Acknowledged, ""
			case AckGap, AckReject:
				r.state, r.member = Archived, ""
			case AckRelease:
				if p.release(r, lim); r.state == Archived {
					archived = append(archived, Change{Offset: off, State: Archived, DeliveryCount: r.count})
				}
			case AckRenew:
				r.deadline = now.Add(lim.LockDuration)
			}
		}
	}
	p.advance()
	return 0, archived
}

// release ends an acquisition: the record is Available again, or Archived
// once its deliveries reached the limit.
func (p *Partition) release(r *inflight, lim Limits) {
	r.member, r.deadline = "", time.Time{}
	if lim.DeliveryCountLimit > 0 && r.count >= lim.DeliveryCountLimit {
		r.state = Archived
	} else {
		r.state = Available
	}
}

// ExpireLocks releases every acquisition whose lock deadline is not after
// now and reports what changed.
func (p *Partition) ExpireLocks(now time.Time, lim Limits) []Change {
	return p.releaseIf(func(r *inflight) bool { return !r.deadline.After(now) }, lim)
}

// ReleaseMember releases what member holds (it left the group or its
// share session closed), as Kafka does when a member goes.
func (p *Partition) ReleaseMember(member string, lim Limits) []Change {
	return p.releaseIf(func(r *inflight) bool { return r.member == member }, lim)
}

func (p *Partition) releaseIf(match func(*inflight) bool, lim Limits) []Change {
	var out []Change
	for i := range p.recs {
		r := &p.recs[i]
		if r.state != Acquired || !match(r) {
			continue
		}
		p.release(r, lim)
		out = append(out, Change{Offset: p.start + int64(i), State: r.state, DeliveryCount: r.count})
	}
	p.advance()
	return out
}

// NextDeadline is the earliest acquisition-lock deadline; ok is false when
// nothing is acquired.
func (p *Partition) NextDeadline() (t time.Time, ok bool) {
	for _, r := range p.recs {
		if r.state == Acquired && (!ok || r.deadline.Before(t)) {
			t, ok = r.deadline, true
		}
	}
	return t, ok
}

// advance moves the start over the prefix of Acknowledged and Archived
// offsets.
func (p *Partition) advance() {
	n := 0
	for n < len(p.recs) && (p.recs[n].state == Acknowledged || p.recs[n].state == Archived) {
		n++
	}
	if n > 0 {
		p.start += int64(n)
		p.recs = append(p.recs[:0:0], p.recs[n:]...)
	}
}

// Reset moves the start to off when the log no longer has the offsets
// below it (retention, DeleteRecords): those in flight are dropped.
func (p *Partition) Reset(off int64) {
	if off <= p.start {
		return
	}
	if off >= p.end() {
		p.start, p.recs = off, nil
		return
	}
	p.recs = append(p.recs[:0:0], p.recs[off-p.start:]...)
	p.start = off
}

// Snapshot is the state to persist: the start, the window's runs of
// state and delivery count, and how many of the window's offsets are done. An acquisition is not persisted (as in Kafka):
// an Acquired offset is written as it was before, Available with one
// delivery less, so a new leader delivers it again with the same count.
func (p *Partition) Snapshot() PartitionState {
	st := PartitionState{StartOffset: p.start}
	for i, r := range p.recs {
		state, count := r.state, r.count
		if state == Acquired {
			state, count = Available, count-1
		}
		off := p.start + int64(i)
		if n := len(st.Batches); n > 0 && st.Batches[n-1].LastOffset == off-1 &&
			st.Batches[n-1].DeliveryState == state && st.Batches[n-1].DeliveryCount == count {
			st.Batches[n-1].LastOffset = off
			continue
		}
		st.Batches = append(st.Batches, StateBatch{FirstOffset: off, LastOffset: off, DeliveryState: state, DeliveryCount: count})
	}
	for _, r := range p.recs {
		if r.state == Acknowledged || r.state == Archived {
			st.DeliveryCompleteCount++
		}
	}
	return st
}

// Record is one in-flight offset as the state API shows it.
type Record struct {
	Offset        int64
	State         RecordState
	DeliveryCount int16
	Member        string
	Deadline      time.Time
}

// InFlightRecords lists the window's offsets.
func (p *Partition) InFlightRecords() []Record {
	out := make([]Record, len(p.recs))
	for i, r := range p.recs {
		out[i] = Record{Offset: p.start + int64(i), State: r.state, DeliveryCount: r.count, Member: r.member, Deadline: r.deadline}
	}
	return out
}

// String names a record state as Kafka does.
func (s RecordState) String() string {
	switch s {
	case Available:
		return "AVAILABLE"
	case Acquired:
		return "ACQUIRED"
	case Acknowledged:
		return "ACKNOWLEDGED"
	case Archived:
		return "ARCHIVED"
	}
	return "UNKNOWN"
}
