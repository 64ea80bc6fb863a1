package server

import "slices"

// Partition changes and who hears of them. Every mutation of a
// partition's replication state goes through mutate, which compares the
// state before and after and tells the cluster's partition listeners, in
// the order NewCluster registered them:
//
//	persistence   the disk log (Config.DataDir): first, so a record is
//	              written before any answer that depends on it goes out
//	events        the event ring: leader, ISR, truncation, loss, HW moves
//	waiters       parked requests (acks=all produces, long-polling fetches)
//	followers     the replica fetchers of the followers
//	coordinators  the transaction coordinator's loop on a new leader epoch
//	              of __transaction_state
//
// The listener list is fixed before the first partition exists, so the
// produce path reads it without a lock; a change is passed by value in
// registers, so telling the listeners allocates nothing; and a listener
// that registered for some fields is called only when one of them moved
// (most follower fetches of a caught-up replica move nothing).

// partitionListener hears of the changes of every partition that moved a
// field it registered for. It is called with p.mu held and must neither
// block nor take p.mu.
type partitionListener interface {
	partitionChanged(p *partition, ch partitionChange)
}

// partitionListeners are the cluster's listeners: those of every change
// first, then those of moved fields, each in registration order.
type partitionListeners struct {
	every []partitionListener
	moved []movedListener
}

// movedListener is a listener with the fields it wants.
type movedListener struct {
	wants stateFields
	l     partitionListener
}

// onPartitionChange registers l for changes that move any of wants, or
// for every change with anyChange. Only NewCluster calls it, before any
// partition exists.
func (c *Cluster) onPartitionChange(wants stateFields, l partitionListener) {
	ls := &c.partitionListeners
	if wants == anyChange {
		ls.every = append(ls.every, l)
	} else {
		ls.moved = append(ls.moved, movedListener{wants, l})
	}
}

// state is what listeners compare across a change.
type state struct {
	leader, epoch int32
	hw, leo, lso  int64
	isr           int
	start         int64 // the leader's log start: followers follow it
}

// mark captures the partition's state. Callers hold p.mu.
func (p *partition) mark() state {
	s := state{leader: p.st.Leader(), epoch: p.st.LeaderEpoch(), hw: -1, isr: p.st.ISRSize(), lso: -1}
	if l := p.st.LeaderReplica(); l != nil {
		s.hw, s.leo, s.lso, s.start = l.HW(), l.LEO(), l.LSO(), l.LogStartOffset()
	}
	return s
}

// stateFields is a set of state fields.
type stateFields uint8

const (
	movedLeader stateFields = 1 << iota
	movedEpoch
	movedHW
	movedLEO
	movedLSO
	movedISR
	movedStart

	// anyChange registers a listener for every mutation, including those
	// that move no field but rewrote the log or left replication.Changes
	// to take (a truncation and an append back to the same LEO,
	// compaction). Those listeners run before the others.
	anyChange stateFields = 1 << 7

	// waitedFields are what parked requests wait on: everything but the
	// leader's LEO (an append alone moves none of them).
	waitedFields = movedLeader | movedEpoch | movedHW | movedLSO | movedISR | movedStart
	// fetchedFields are what followers must fetch to learn: the leader's
	// log or HW, or a new epoch.
	fetchedFields = movedLEO | movedHW | movedEpoch | movedStart
)

// moved is the set of fields that differ between s and o. (Field by
// field: comparing the structs whole calls memequal, on every fetch.)
func (s state) moved(o state) stateFields {
	var m stateFields
	if s.leader != o.leader {
		m |= movedLeader
	}
	if s.epoch != o.epoch {
		m |= movedEpoch
	}
	if s.hw != o.hw {
		m |= movedHW
	}
	if s.leo != o.leo {
		m |= movedLEO
	}
	if s.lso != o.lso {
		m |= movedLSO
	}
	if s.isr != o.isr {
		m |= movedISR
	}
	if s.start != o.start {
		m |= movedStart
	}
	return m
}

// partitionChange is one mutation of a partition, as its listeners see
// it: small enough to travel in registers.
type partitionChange struct {
	moved stateFields
	// fetcher is the follower broker whose own fetches made the change,
	// which needs no wake-up for them (fetchOnce already says whether it
	// must fetch again); -1 for any other change.
	fetcher int32
	// The leader's HW and LSO before and after (-1 without a leader).
	hwFrom, lsoFrom, hw, lso int64
}

// mutate runs f, which changes p's replication state, and then tells the
// listeners what changed. Every mutation goes through it, so none can
// forget its listeners; only the HW checkpoint, flushes and producer
// expiry, which move nothing a listener follows, and a restore from the
// data dir, before anyone listens, change p.st directly. Callers hold p.mu.
func (p *partition) mutate(f func()) { p.mutateBy(-1, f) }

// mutateBy is mutate for the fetches of the follower on broker fetcher.
func (p *partition) mutateBy(fetcher int32, f func()) {
	before := p.mark()
	f()
	after := p.mark()
	ch := partitionChange{moved: after.moved(before), fetcher: fetcher, hwFrom: before.hw, lsoFrom: before.lso, hw: after.hw, lso: after.lso}
	ls := &p.t.c.partitionListeners
	for _, l := range ls.every {
		l.partitionChanged(p, ch)
	}
	if ch.moved == 0 {
		return // most follower fetches of a caught-up replica
	}
	for _, r := range ls.moved {
		if ch.moved&r.wants != 0 {
			r.l.partitionChanged(p, ch)
		}
	}
}

// watch registers w to be signalled whenever something parked requests
// wait on changes. Callers hold p.mu.
func (p *partition) watch(w chan struct{}) { x := p.extras(); x.waiters = append(x.waiters, w) }

func (p *partition) unwatch(w chan struct{}) {
	p.mu.Lock()
	x := p.extras()
	x.waiters = slices.DeleteFunc(x.waiters, func(x chan struct{}) bool { return x == w })
	p.mu.Unlock()
}

// wakeWaiters signals every parked request; none blocks the caller.
// Callers hold p.mu.
func (p *partition) wakeWaiters() {
	for _, w := range p.waiters {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// partitionEventsListener reports every partition change as events
// (events.go).
type partitionEventsListener struct{ c *Cluster }

func (l *partitionEventsListener) partitionChanged(p *partition, ch partitionChange) {
	l.c.partitionEvents(p, ch)
}

// waitersListener wakes parked requests; it wants waitedFields.
type waitersListener struct{}

func (*waitersListener) partitionChanged(p *partition, _ partitionChange) { p.wakeWaiters() }

// followersListener marks the partition for its followers' replica
// fetchers; it wants fetchedFields.
type followersListener struct{}

func (*followersListener) partitionChanged(p *partition, ch partitionChange) {
	p.markFollowersExcept(ch.fetcher)
}

func (p *partition) markFollowers() { p.markFollowersExcept(-1) }

func (p *partition) markFollowersExcept(skip int32) {
	leader := p.st.Leader()
	if leader < 0 {
		return
	}
	c := p.t.c
	for _, r := range p.st.Replicas() {
		if r.Broker != leader && r.Broker != skip {
			c.fetcherFor(r.Broker).mark(p)
		}
	}
}
