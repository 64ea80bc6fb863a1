package replication

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Follower fetches: one round trip of a replica fetcher, the leader's view
// of each follower, ISR expansion and truncation on becoming a follower.

// FollowerView is what the leader knows of one follower, as Kafka's
// Replica.scala keeps it: the offset of its latest fetch (its LEO as far as
// the leader knows, -1 before the first fetch in this epoch), when it last
// fetched and when it was last caught up. The ISR shrink check reads
// LastCaughtUp.
type FollowerView struct {
	LEO          int64
	LastFetch    time.Time
	LastCaughtUp time.Time
}

// FollowerView returns the leader's view of the follower on broker id;
// false for the leader itself, an unknown broker or a leaderless partition.
func (p *Partition) FollowerView(id int32) (FollowerView, bool) {
	r := p.Replica(id)
	if r == nil || p.leader < 0 || id == p.leader {
		return FollowerView{}, false
	}
	return FollowerView{LEO: r.remote.leo, LastFetch: r.remote.lastFetchTime.time(), LastCaughtUp: r.remote.lastCaughtUp.time()}, true
}

// FetchResult describes one follower fetch round trip.
type FetchResult struct {
	Batches   int   // batches copied to the follower
	Truncated int64 // records the follower truncated first, if any
	HW        int64 // leader HW carried by the response
}

// Progress reports whether the step changed anything the follower or the
// leader will act on, so a driver knows to fetch again.
func (f FetchResult) Progress() bool { return f.Batches > 0 || f.Truncated > 0 }

// ReplicaFetch runs one complete fetch by the follower on broker id against
// the current leader, with no network in between: first the follower
// truncates if it has just become a follower; then the leader reads from the
// follower's LEO (capturing its HW before anything else, as Kafka does),
// records the fetch offset as the follower's LEO (which may expand the ISR
// and advance the HW), and the follower appends the shared batches and sets
// its HW to min(leader HW, own LEO).
//
// Because the leader learns a follower's LEO only from its next fetch, an
// acks=all write needs two fetches to commit and the follower learns the new
// HW on the one after.
func (p *Partition) ReplicaFetch(id int32, maxBytes int32, now time.Time) (FetchResult, int16) {
	return p.ReplicaFetchUpTo(id, maxBytes, -1, now)
}

// ReplicaFetchUpTo is ReplicaFetch copying only batches that end at or
// before upTo (-1: no limit), so a test can step a follower to an exact
// offset ("follower 2 replicates up to 5").
func (p *Partition) ReplicaFetchUpTo(id int32, maxBytes int32, upTo int64, now time.Time) (FetchResult, int16) {
	l := p.LeaderReplica()
	f := p.Replica(id)
	switch {
	case l == nil:
		return FetchResult{}, kerr.NotLeaderForPartition.Code
	case f == nil || f == l:
		return FetchResult{}, kerr.UnknownTopicOrPartition.Code
	case !l.online || !f.online || l.isolated || f.isolated:
		return FetchResult{}, kerr.ReplicaNotAvailable.Code
	}
	var res FetchResult
	if f.truncating {
		before := f.log.end
		p.truncateFollower(f, l)
		res.Truncated = before - f.log.end
	}
	switch {
	case f.log.end > l.log.end:
		// Only possible after an unclean election or HW truncation: the
		// follower's fetch is out of range and it cuts to the leader's LEO.
		before := f.log.end
		p.truncate(f, l.log.end, ReasonAheadOfLeader)
		res.Truncated += before - f.log.end
	case f.log.end < l.log.start:
		from := f.log.start
		f.log.truncateFully(l.log.start)
		p.note(Change{Kind: LogStartMoved, Broker: f.Broker, From: from, To: l.log.start, Reason: ReasonFollowerReset})
		f.log.setRecoveryPoint(l.log.start)
		f.setHW(f.log.hw)
		f.rebuildProducers()
	}

	fetchOffset := f.log.end
	res.HW = l.log.hw
	bound := l.log.end
	if upTo >= 0 {
		bound = min(bound, upTo)
	}
	batches := l.log.Read(fetchOffset, bound, maxBytes)
	p.updateFollowerFetchState(l, f, fetchOffset, now)

	for _, b := range batches {
		f.log.append(b, p.cfg.Segment)
		f.updateProducers(b)
	}
	p.maybeFlush(f)
	res.Batches = len(batches)
	f.setHW(res.HW)
	p.followLeaderStart(f, l.log.start)
	p.maybeCompleteReassignment(now) // the controller acts on the ISR change after the fetch
	return res, 0
}

// updateFollowerFetchState is Kafka's Replica.updateFetchStateOrThrow plus
// the ISR expansion and HW check that follow it; l is the leader.
func (p *Partition) updateFollowerFetchState(l, f *Replica, fetchOffset int64, now time.Time) {
	prev := f.remote
	switch {
	case fetchOffset >= l.log.end:
		f.remote.lastCaughtUp = max(prev.lastCaughtUp, instantOf(now))
	case fetchOffset >= prev.lastFetchLeaderLEO:
		f.remote.lastCaughtUp = max(prev.lastCaughtUp, prev.lastFetchTime)
	}
	f.remote.leo = fetchOffset
	f.remote.lastFetchLeaderLEO = l.log.end
	f.remote.lastFetchTime = instantOf(now)
	p.maybeExpandISR(l, f)
	p.incrementHW(l, now)
}

// maybeExpandISR adds a follower whose LEO has reached both the leader's HW
// and the start of the current leader epoch (KAFKA-7128); l is the leader.
func (p *Partition) maybeExpandISR(l, f *Replica) {
	if p.InISR(f.Broker) || !f.online {
		return
	}
	if f.remote.leo >= l.log.hw && f.remote.leo >= p.epochStart {
		p.isr = p.inAssignmentOrder(append(p.isr, f.Broker))
		p.note(Change{Kind: ISRExpanded, Broker: f.Broker, Reason: ReasonCaughtUp})
	}
}

// truncateFollower finds where f diverges from leader l and cuts f there.
func (p *Partition) truncateFollower(f, l *Replica) {
	f.truncating = false
	if p.cfg.Truncation == TruncateToHW {
		p.truncate(f, f.log.hw, ReasonHighWatermark)
		return
	}
	// Each round is one OffsetsForLeaderEpoch request (KIP-279).
	for {
		leaderEpoch, leaderEnd := l.log.EndOffsetForEpoch(f.log.LatestEpoch())
		if leaderEnd < 0 {
			p.truncate(f, min(f.log.hw, f.log.end), ReasonLeaderEpoch)
			return
		}
		followerEpoch, followerEnd := f.log.EndOffsetForEpoch(leaderEpoch)
		if followerEnd < 0 {
			p.truncate(f, min(leaderEnd, f.log.end), ReasonLeaderEpoch)
			return
		}
		if followerEpoch != leaderEpoch {
			before := f.log.LatestEpoch()
			p.truncate(f, min(followerEnd, f.log.end), ReasonLeaderEpoch)
			if f.log.LatestEpoch() == before {
				return // nothing left to learn
			}
			continue
		}
		p.truncate(f, min(followerEnd, leaderEnd, f.log.end), ReasonLeaderEpoch)
		return
	}
}
