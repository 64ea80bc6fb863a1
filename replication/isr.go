package replication

import (
	"slices"
	"time"
)

// The ISR and the HW: who counts as caught up, when the leader's HW moves,
// and how the ISR shrinks and is set.

// caughtUp is Kafka's Replica.isCaughtUp.
func (p *Partition) caughtUp(r *Replica, leaderLEO int64, now time.Time) bool {
	return r.remote.leo == leaderLEO || now.Sub(r.remote.lastCaughtUp.time()) <= p.lagTimeMax()
}

func (p *Partition) lagTimeMax() time.Duration {
	if p.cfg.ReplicaLagTimeMax > 0 {
		return p.cfg.ReplicaLagTimeMax
	}
	return DefaultReplicaLagTimeMax
}

// maybeIncrementHW is Kafka's Partition.maybeIncrementLeaderHW: the minimum
// LEO over the ISR and over caught-up online replicas outside it, frozen
// while the ISR is below min.insync.replicas (3.7+), never moving back.
func (p *Partition) maybeIncrementHW(now time.Time) bool {
	return p.incrementHW(p.LeaderReplica(), now)
}

// incrementHW is maybeIncrementHW with the leader's replica (nil when
// leaderless) already looked up, as a follower fetch has it.
func (p *Partition) incrementHW(l *Replica, now time.Time) bool {
	if l == nil {
		return false
	}
	if !p.cfg.LegacyMinISR && p.UnderMinISR() {
		return false
	}
	hw := l.log.end
	for _, r := range p.replicas {
		if r == l {
			continue
		}
		if p.InISR(r.Broker) || (r.online && p.caughtUp(r, l.log.end, now)) {
			hw = min(hw, r.remote.leo)
		}
	}
	if hw > l.log.hw {
		l.setHW(hw)
		p.committed = max(p.committed, l.log.hw)
		return true
	}
	return false
}

// MaybeShrinkISR drops followers that have not caught up within
// replica.lag.time.max.ms (Kafka's maybeShrinkIsr, which the leader runs
// every lag/2) and returns the removed ids.
func (p *Partition) MaybeShrinkISR(now time.Time) []int32 {
	l := p.LeaderReplica()
	if l == nil || l.isolated || !l.online {
		// An isolated leader's AlterPartition never arrives; a crashed one
		// sends none: its ISR stands until the controller fences it.
		return nil
	}
	var out []int32
	for _, id := range p.isr {
		r := p.Replica(id)
		if r != l && !p.caughtUp(r, l.log.end, now) {
			out = append(out, id)
		}
	}
	if len(out) > 0 {
		p.isr = slices.DeleteFunc(p.isr, func(id int32) bool { return slices.Contains(out, id) })
		for _, id := range out {
			p.note(Change{Kind: ISRShrunk, Broker: id, Reason: ReasonLag})
		}
		p.maybeIncrementHW(now)
	}
	return out
}

// SetISR replaces the ISR (as an AlterPartition or an operator would).
// Unknown ids are ignored and the leader always stays in.
func (p *Partition) SetISR(isr []int32, now time.Time) {
	var next []int32
	for _, r := range p.replicas {
		if slices.Contains(isr, r.Broker) || r.Broker == p.leader {
			next = append(next, r.Broker)
		}
	}
	prev := p.isr
	for _, id := range p.isr {
		if !slices.Contains(next, id) {
			p.markOutOfSync(id)
		}
	}
	p.isr = next
	p.noteISRDiff(prev, ReasonManual)
	p.maybeIncrementHW(now)
	p.maybeCompleteReassignment(now)
}

// markOutOfSync forgets when a follower that was just pushed out of the ISR
// last caught up, so it no longer holds the HW back (as a shrink would).
func (p *Partition) markOutOfSync(id int32) {
	if r := p.Replica(id); r != nil && id != p.leader {
		r.remote.lastCaughtUp = 0
	}
}

func (p *Partition) inAssignmentOrder(ids []int32) []int32 {
	out := ids[:0:0]
	for _, r := range p.replicas {
		if slices.Contains(ids, r.Broker) {
			out = append(out, r.Broker)
		}
	}
	return out
}

// RemoveFromISR drops broker id from the ISR unless it is the last member,
// as the KRaft controller does when it fences a broker.
func (p *Partition) RemoveFromISR(id int32, now time.Time) {
	if !p.InISR(id) || len(p.isr) == 1 {
		return
	}
	p.isr = slices.DeleteFunc(p.isr, func(x int32) bool { return x == id })
	p.note(Change{Kind: ISRShrunk, Broker: id, Reason: ReasonFenced})
	p.markOutOfSync(id)
	p.maybeIncrementHW(now)
}
