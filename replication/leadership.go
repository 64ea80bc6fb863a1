package replication

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Elections and broker lifecycle: becoming leader or follower, the
// controller's choice, crashes, clean shutdowns, restarts and flushes.

// becomeLeader makes broker id leader with a new epoch (Kafka's makeLeader):
// the epoch starts at its LEO, it does not truncate, and its view of every
// follower is reset so the HW waits for fresh fetches.
func (p *Partition) becomeLeader(id int32, now time.Time) {
	p.epoch++
	p.leader = id
	l := p.Replica(id)
	l.truncating = false
	l.log.assignEpoch(p.epoch, l.log.end)
	p.epochStart = l.log.end
	for _, r := range p.replicas {
		if r == l {
			continue
		}
		if r.online {
			p.becomeFollower(r)
		} else {
			r.truncating = true // it will find out when it returns
		}
		r.remote = followerState{leo: -1, lastFetchLeaderLEO: -1}
		if p.InISR(r.Broker) {
			r.remote.lastCaughtUp = instantOf(now)
		}
	}
	p.maybeIncrementHW(now)
}

// ElectionError says why no leader could be elected.
type ElectionError int16

// Code is the Kafka error code for the failure.
func (e ElectionError) Code() int16 { return int16(e) }

// Elect moves leadership to broker id (Kafka's clean or unclean election
// for an explicit candidate). A clean election needs id online and in the
// ISR; an unclean one only online, and resets the ISR to id.
func (p *Partition) Elect(id int32, unclean bool, now time.Time) int16 {
	r := p.Replica(id)
	switch {
	case r == nil:
		return kerr.InvalidReplicaAssignment.Code
	case !r.online:
		return kerr.ReplicaNotAvailable.Code
	case !p.InISR(id) && !unclean:
		return kerr.EligibleLeadersNotAvailable.Code
	case id == p.leader:
		return kerr.ElectionNotNeeded.Code
	}
	old, prev, mark := p.leader, p.isr, p.numPending()
	if !p.InISR(id) {
		p.isr = []int32{id}
	}
	p.becomeLeader(id, now)
	p.noteElection(mark, old, prev, unclean)
	return 0
}

// ChooseLeader is the controller's choice: the current leader if it is
// online and in the ISR, else the first replica in assignment order that is
// online and in the ISR; failing that, if unclean election is enabled, the
// first online replica. Broker exclude (or -1) is never chosen: it is the
// one shutting down. -1 if none.
func (p *Partition) ChooseLeader(exclude int32) (id int32, unclean bool) {
	ok := func(r *Replica) bool { return r.online && r.Broker != exclude }
	if l := p.LeaderReplica(); l != nil && ok(l) && p.InISR(l.Broker) {
		return l.Broker, false
	}
	for _, r := range p.replicas {
		if ok(r) && p.InISR(r.Broker) {
			return r.Broker, false
		}
	}
	if p.cfg.UncleanLeaderElection {
		for _, r := range p.replicas {
			if ok(r) {
				return r.Broker, true
			}
		}
	}
	return -1, false
}

// SetOnline records that broker id's replica went down or came back, and
// nothing else: the controller decides separately whether to fence it out
// of the ISR and whom to elect. A replica coming back must truncate before
// it fetches.
func (p *Partition) SetOnline(id int32, online bool, now time.Time) {
	r := p.Replica(id)
	if r == nil || r.online == online {
		return
	}
	r.online = online
	if online && id != p.leader {
		p.becomeFollower(r)
	}
}

// MakeLeaderless records that no replica can lead: leader -1 with a new
// epoch, the ISR left as it was (its last member may be dead), as Kafka's
// controller does when no eligible replica remains.
func (p *Partition) MakeLeaderless() {
	if p.leader < 0 {
		return
	}
	old := p.leader
	p.leader = -1
	p.epoch++
	p.note(Change{Kind: LeaderChanged, Broker: -1, OldLeader: old})
}

// Crash takes broker id's replica down the way a process crash does: it
// is offline and its in-memory HW is gone (a restart reloads the last
// checkpoint). With powerLoss it also loses every record past its recovery
// point, the unflushed page cache, and the epochs that started there.
func (p *Partition) Crash(id int32, powerLoss bool) {
	r := p.Replica(id)
	if r == nil {
		return
	}
	r.online = false
	if powerLoss && r.log.recoveryPoint < r.log.end {
		from := r.log.end
		r.log.truncateTo(r.log.recoveryPoint)
		r.rebuildProducers()
		p.noteTruncation(r, from, ReasonPowerLoss)
	}
}

// Shutdown takes broker id's replica down cleanly: the log is flushed and
// the HW checkpointed, so a restart loses nothing.
func (p *Partition) Shutdown(id int32) {
	r := p.Replica(id)
	if r == nil {
		return
	}
	r.log.setRecoveryPoint(r.log.end)
	r.log.setCheckpointHW(r.log.hw)
	r.online = false
}

// Restart brings broker id's replica back after a stop: its HW is the last
// checkpointed one clamped to its log (Kafka's replication-offset-checkpoint,
// possibly stale), and it must find its divergence from the leader before it
// fetches.
func (p *Partition) Restart(id int32) {
	r := p.Replica(id)
	if r == nil || r.online {
		return
	}
	r.setHW(r.log.checkpointHW)
	r.online = true
	if id != p.leader {
		p.becomeFollower(r)
	}
}

// becomeFollower starts r's truncation. Under TruncateToHW it happens at
// once, as before Kafka 0.11 (makeFollower cut the log to the HW before any
// fetch); by epoch it needs the leader's answer, so it runs on r's next fetch.
func (p *Partition) becomeFollower(r *Replica) {
	if p.cfg.Truncation == TruncateToHW {
		p.truncate(r, r.log.hw, ReasonHighWatermark)
		r.truncating = false
		return
	}
	r.truncating = true
}

// Flush marks everything broker id's replica holds as on disk.
func (p *Partition) Flush(id int32) {
	if r := p.Replica(id); r != nil && r.online {
		r.log.setRecoveryPoint(r.log.end)
	}
}

// CheckpointHW writes every online replica's HW to its checkpoint, which a
// restart reloads (Kafka does this every replica.high.watermark.checkpoint.interval.ms).
func (p *Partition) CheckpointHW() {
	for _, r := range p.replicas {
		if r.online {
			r.log.setCheckpointHW(r.log.hw)
		}
	}
}

// maybeFlush applies flush.messages after an append.
func (p *Partition) maybeFlush(r *Replica) {
	if n := p.cfg.FlushMessages; n > 0 && r.log.end-r.log.recoveryPoint >= n {
		r.log.setRecoveryPoint(r.log.end)
	}
}
