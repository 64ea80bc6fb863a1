package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// replicaFetchMaxBytes is replica.fetch.max.bytes: how much one follower
// fetch moves per partition.
const replicaFetchMaxBytes = 1 << 20

// fetcher is the replica fetcher of one follower broker: the thin driver
// around replication.Partition.ReplicaFetch. It fetches a partition as soon
// as it changes (an append, an HW move, a new leader) until it has nothing
// left to learn. Between changes it stands in for Kafka's long polls: a
// caught-up follower's fetch returns empty after replica.fetch.wait.max.ms
// and the follower fetches again, which keeps the leader's view of it (its
// LEO, its last caught-up time) current and so keeps it in the ISR. Those
// empty fetches are made in one pass over every partition the broker
// follows, once per wait, by a job on the cluster's clock (so advancing the
// clock runs them at their own times). One goroutine and one timer per
// broker, not per partition, so a cluster with ten thousand partitions
// costs three goroutines.
type fetcher struct {
	c      *Cluster
	broker int32

	mu    sync.Mutex
	dirty *partitionSet // to fetch
	spare *partitionSet // the set the loop gives back after a pass
	wake  chan struct{}
	polls *job // the rounds of empty fetches

	// wakeups and turns count the loop's wake-ups and fetchOnce calls,
	// which the benchmarks report per request.
	wakeups, turns atomic.Uint64
}

func newFetcher(c *Cluster, broker int32) *fetcher {
	return &fetcher{c: c, broker: broker, dirty: &partitionSet{}, spare: &partitionSet{},
		wake: make(chan struct{}, 1)}
}

// partitionSet is a fetcher's queue: partitions in the order they were
// marked, each once. While it is short a scan finds a partition already
// queued, cheaper than hashing every mark; past partitionSetScan a map
// does.
type partitionSet struct {
	list  []*partition
	index map[*partition]struct{} // in use from partitionSetScan entries on
}

const partitionSetScan = 32

func (s *partitionSet) add(p *partition) {
	if len(s.list) < partitionSetScan {
		for _, q := range s.list {
			if q == p {
				return
			}
		}
	} else {
		if s.index == nil {
			s.index = make(map[*partition]struct{}, 2*partitionSetScan)
		}
		if len(s.index) == 0 {
			for _, q := range s.list {
				s.index[q] = struct{}{}
			}
		}
		if _, ok := s.index[p]; ok {
			return
		}
		s.index[p] = struct{}{}
	}
	s.list = append(s.list, p)
}

// reset empties the set, keeping its space.
func (s *partitionSet) reset() {
	clear(s.list)
	s.list = s.list[:0]
	clear(s.index)
}

// mark asks the fetcher to fetch p soon.
func (f *fetcher) mark(p *partition) {
	f.mu.Lock()
	f.dirty.add(p)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) run() {
	defer f.c.wg.Done()
	for {
		select {
		case <-f.c.closing:
			return
		case <-f.wake:
		}
		f.wakeups.Add(1)
		for {
			// Drop a wake-up left by marks before taking the marked set,
			// never after: this pass takes everything marked until the
			// swap below, and a mark from the drain on leaves a wake-up
			// of its own. (Draining after the swap lost the wake-up of a
			// mark in between: an idle pass then went back to sleep with
			// that partition marked and unfetched.)
			select {
			case <-f.wake:
			default:
			}
			f.mu.Lock()
			work := f.dirty
			f.dirty, f.spare = f.spare, nil
			f.mu.Unlock()
			if len(work.list) == 0 {
				f.mu.Lock()
				f.spare = work
				f.mu.Unlock()
				break
			}
			// One reading of the clock serves a stretch of the pass, as
			// one Kafka fetch request's time serves all its partitions.
			var now time.Time
			for i, p := range work.list {
				if i%fetchClockEvery == 0 {
					now = f.c.now()
				}
				if f.fetchOnce(p, now) {
					f.mu.Lock()
					f.dirty.add(p)
					f.mu.Unlock()
				}
			}
			work.reset()
			f.mu.Lock()
			f.spare = work
			f.mu.Unlock()
			select {
			case <-f.c.closing:
				return
			default:
			}
		}
	}
}

// pollAll is the round of empty fetches: every partition the broker
// follows is fetched once, as its expiring long poll would be, and any that
// turns out to have something to move is queued for the normal loop. It
// runs on its own timer, so wake-ups of busy partitions never starve the
// idle ones.
func (f *fetcher) pollAll() {
	queued := false
	for _, t := range f.c.topics.Load().byName {
		for _, p := range t.partitions() {
			if f.fetchOnce(p, f.c.now()) {
				f.mu.Lock()
				f.dirty.add(p)
				f.mu.Unlock()
				queued = true
			}
		}
	}
	if queued { // else they would wait for the next mark or round
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// idleFetchInterval is how often a caught-up follower fetches:
// replica.fetch.wait.max.ms, and at most half the shortest
// replica.lag.time.max.ms in force, so that an ISR check never sees an idle
// follower's last caught-up time older than the lag allows.
func (c *Cluster) idleFetchInterval() time.Duration {
	return min(c.cfg.ReplicaFetchWaitMax, c.isrCheckInterval())
}

// fetchesPerTurn bounds the fetches fetchOnce makes under one hold of the
// partition's lock. Three are what an acks=all write needs of a follower
// (copy the data, report its LEO, learn the HW); making them back to back
// is a schedule the fetcher could have run anyway, and it saves two lock
// hand-offs and two wake-ups of everyone parked on the partition.
const fetchesPerTurn = 3

// fetchClockEvery is how many partitions of a pass share a reading of
// the clock.
const fetchClockEvery = 64

// fetchOnce runs follower fetches of p at time now, as long as each makes
// progress (at most fetchesPerTurn), and reports whether another one is
// needed: data arrived (the leader learns of it on the next fetch), or the
// follower has yet to learn the leader's HW.
func (f *fetcher) fetchOnce(p *partition, now time.Time) bool {
	f.turns.Add(1)
	if p.t.deleted.Load() {
		return false
	}
	b := f.c.broker(f.broker)
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.st.Leader()
	if l < 0 || l == f.broker || !b.up.Load() || p.isPaused(f.broker) {
		return false
	}
	if lb := f.c.broker(l); lb == nil || !lb.up.Load() {
		return false
	}
	more := false
	p.mutateBy(f.broker, func() { more = f.fetchTurn(p, now) })
	return more
}

// fetchTurn is fetchOnce's fetches. Callers hold p.mu.
func (f *fetcher) fetchTurn(p *partition, now time.Time) bool {
	for range fetchesPerTurn {
		res, code := p.st.ReplicaFetch(f.broker, replicaFetchMaxBytes, now)
		if code != 0 {
			return false
		}
		// Without progress, only a stale HW is worth another fetch;
		// anything else would spin.
		me, leader := p.st.Replica(f.broker), p.st.LeaderReplica()
		if !res.Progress() && me.HW() >= min(leader.HW(), me.LEO()) {
			return false
		}
	}
	return true
}
