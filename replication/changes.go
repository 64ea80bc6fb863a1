package replication

import "slices"

// ChangeKind names a state change a Partition records for its driver.
type ChangeKind int

const (
	// LeaderChanged: Leader took over from OldLeader at Epoch (Leader -1:
	// the partition became leaderless). Unclean says the new leader was
	// outside the ISR.
	LeaderChanged ChangeKind = iota + 1
	// ISRShrunk: Broker left the ISR, for Reason.
	ISRShrunk
	// ISRExpanded: Broker joined the ISR, for Reason.
	ISRExpanded
	// LogTruncated: Broker's log end went from From down to To, for Reason.
	LogTruncated
	// RecordsLost: acknowledged offsets [From, To) are gone from the
	// partition: the new leader (Broker) does not have them, so no
	// consumer will ever read them again.
	RecordsLost
	// LogStartMoved: Broker's log start offset went from From up to To,
	// for Reason (ReasonDeleteRecords, ReasonFollowerReset).
	LogStartMoved
)

// Reasons carried by changes.
const (
	ReasonLag             = "lag"              // not caught up within replica.lag.time.max.ms
	ReasonFenced          = "fenced"           // the controller removed a dead or shut-down broker
	ReasonManual          = "manual"           // SetISR from an operator or test
	ReasonCaughtUp        = "caught up"        // a follower reached the HW and the epoch start
	ReasonUncleanElection = "unclean election" // the ISR reset to an out-of-sync leader
	ReasonLeaderEpoch     = "leader epoch"     // KIP-101 divergence found by epoch
	ReasonHighWatermark   = "high watermark"   // pre-0.11 truncation to the replica's own HW
	ReasonAheadOfLeader   = "ahead of leader"  // the follower's log ran past the new leader's
	ReasonPowerLoss       = "power loss"       // unflushed records vanished with the page cache
	ReasonShortLeader     = "new leader lacks acknowledged records"
	// Reasons of LogStartMoved, named as the event stream names them.
	ReasonDeleteRecords = "delete_records" // DeleteRecords moved the log start up
	ReasonFollowerReset = "follower_reset" // the follower's log ended below the leader's log start: it restarts there (OFFSET_OUT_OF_RANGE)
)

// Change is one notable state change, recorded as it happens so a driver
// can report it (fakekafka's event stream) without diffing states.
type Change struct {
	Kind      ChangeKind
	Broker    int32 // the replica concerned; the new leader for LeaderChanged and RecordsLost
	OldLeader int32 // LeaderChanged only
	Epoch     int32 // the leader epoch after the change
	Unclean   bool
	From, To  int64 // offsets: LogTruncated (old, new LEO), RecordsLost ([From, To)), LogStartMoved (old, new log start)
	Reason    string
	ISR       []int32 // the ISR after the change
	Replicas  []int32 // the replica set after a reassignment completed or was cancelled
}

// TakeChanges returns the changes recorded since the last call and
// forgets them (at most the last maxPendingChanges). Nothing is recorded
// for ordinary appends and fetches, so a busy partition accumulates
// nothing.
func (p *Partition) TakeChanges() []Change {
	if p.changes == nil {
		return nil
	}
	out := p.changes
	p.extras().changes = nil
	return out
}

// HasChanges reports whether TakeChanges would return anything.
func (p *Partition) HasChanges() bool { return len(p.changes) > 0 }

// pending is the list of changes not yet taken, for appending.
func (p *Partition) pending() *[]Change { return &p.extras().changes }

// numPending is how many changes are not yet taken.
func (p *Partition) numPending() int { return len(p.changes) }

// Committed is the highest HW any leader of the partition reached: every
// offset below it was acknowledged to acks=all producers and may have been
// read by consumers.
func (p *Partition) Committed() int64 { return p.committed }

// maxPendingChanges bounds what a driver that never calls TakeChanges
// accumulates: past it the oldest changes are dropped.
const maxPendingChanges = 1024

func (p *Partition) note(c Change) {
	c.Epoch = p.epoch
	c.ISR = slices.Clone(p.isr)
	cs := p.pending()
	if len(*cs) >= maxPendingChanges {
		*cs = slices.Delete(*cs, 0, len(*cs)-maxPendingChanges+1)
	}
	*cs = append(*cs, c)
}

func (p *Partition) noteTruncation(r *Replica, from int64, reason string) {
	if r.log.end < from {
		p.note(Change{Kind: LogTruncated, Broker: r.Broker, From: from, To: r.log.end, Reason: reason})
	}
}

// truncate cuts r's log at offset and records it.
func (p *Partition) truncate(r *Replica, offset int64, reason string) {
	from := r.log.end
	r.truncateTo(offset)
	p.noteTruncation(r, from, reason)
}

// noteISRDiff records who left and who joined the ISR since prev.
func (p *Partition) noteISRDiff(prev []int32, reason string) {
	for _, id := range prev {
		if !p.InISR(id) {
			p.note(Change{Kind: ISRShrunk, Broker: id, Reason: reason})
		}
	}
	for _, id := range p.isr {
		if !slices.Contains(prev, id) {
			p.note(Change{Kind: ISRExpanded, Broker: id, Reason: reason})
		}
	}
}

// noteElection records a completed Elect: the leader change first (before
// the truncations becoming leader caused, which start at index mark), then
// the ISR reset of an unclean election, then any loss. Whatever committed
// offsets the new leader lacks or holds different records at are lost for
// good, and the committed point falls back to where it agrees.
func (p *Partition) noteElection(mark int, oldLeader int32, prevISR []int32, unclean bool) {
	c := Change{Kind: LeaderChanged, Broker: p.leader, OldLeader: oldLeader, Unclean: unclean, Epoch: p.epoch, ISR: slices.Clone(p.isr)}
	cs := p.pending()
	*cs = slices.Insert(*cs, mark, c)
	p.noteISRDiff(prevISR, ReasonUncleanElection)
	l := p.LeaderReplica()
	if agreed := agreedUpTo(&l.log, p.history, p.committed); agreed < p.committed {
		reason := ReasonShortLeader
		if unclean {
			reason = ReasonUncleanElection
		}
		p.note(Change{Kind: RecordsLost, Broker: l.Broker, From: agreed, To: p.committed, Reason: reason})
		p.committed = agreed
	}
	p.extras().history = l.log.Epochs()
}

// agreedUpTo is the offset up to which log l holds the records of the
// committed history whose epoch cache is history, at most end. A leader
// epoch and an offset name the same records in every replica (KIP-101), so
// the two agree until the first offset where their epochs differ; an
// epoch can only change where one of the caches starts an entry.
func agreedUpTo(l *Log, history []EpochEntry, end int64) int64 {
	end = min(end, l.end)
	points := []int64{l.start}
	for _, es := range [][]EpochEntry{l.epochs, history} {
		for _, e := range es {
			if e.StartOffset > l.start && e.StartOffset < end {
				points = append(points, e.StartOffset)
			}
		}
	}
	slices.Sort(points)
	for _, o := range points {
		if o < end && epochAt(l.epochs, o) != epochAt(history, o) {
			return o
		}
	}
	return max(end, l.start)
}

// epochAt is the epoch of the records at offset o by epoch cache es.
func epochAt(es []EpochEntry, o int64) int32 {
	epoch := int32(-1)
	for _, e := range es {
		if e.StartOffset > o {
			break
		}
		epoch = e.Epoch
	}
	return epoch
}
