package server

// Share partitions (KIP-932) as their partition's leader keeps them: the
// state machine of package share, loaded from the Persister when this
// broker leads the partition at a new leader epoch (a failover releases
// every acquisition: the new leader reads what was written), written
// through it on each change, and its acquisition locks on the cluster's
// clock.

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shareState is the cluster's share partitions and share sessions.
type shareState struct {
	mu       sync.Mutex
	parts    map[share.Key]*sharePartition
	sessions map[shareSessionKey]*shareSession
	// initialized are the share partitions whose state the coordinator
	// side has written (initializeSharePartitions), so heartbeats skip them.
	initialized map[share.Key]bool
}

// sharePartition is one share partition. mu guards everything below it
// and is taken before the partition's own lock.
type sharePartition struct {
	c   *Cluster
	key share.Key
	p   *partition

	mu          sync.Mutex
	broker      int32 // the leader it was loaded on
	leaderEpoch int32 // and the leader epoch
	stateEpoch  int32
	sm          *share.Partition // nil until loaded
	timer       *clock.Timer     // the next acquisition-lock deadline
	timerGen    uint64           // which arm the timer is
	waiters     map[chan struct{}]struct{}
}

// persister is the share coordinator as partition leaders see it.
func (c *Cluster) persister() share.Persister { return c.sharePersister }

// shareLimits are a group's share-partition settings, read on every use
// as Kafka's SharePartition does: a changed share.record.lock.duration.ms
// applies from the next acquisition (a held lock keeps its deadline),
// share.delivery.count.limit from the next release and
// share.partition.max.record.locks from the next fetch.
func (c *Cluster) shareLimits(group string) share.Limits {
	gc := c.groupConfig(group)
	return share.Limits{LockDuration: gc.ShareRecordLockDuration, DeliveryCountLimit: int16(gc.ShareDeliveryCountLimit),
		MaxInFlight: int64(gc.SharePartitionMaxRecords)}
}

// sharePartitionFor returns group's share partition of p as broker leads
// it, locked, loading it from the persister when this broker newly leads
// the partition. code is NOT_LEADER_OR_FOLLOWER when broker is not the
// leader, or the persister's error.
func (c *Cluster) sharePartitionFor(broker int32, group string, p *partition) (*sharePartition, int16) {
	p.mu.Lock()
	leader, epoch := p.st.ViewLeader(broker)
	p.mu.Unlock()
	if leader != broker {
		return nil, kerr.NotLeaderForPartition.Code
	}
	key := share.Key{Group: group, TopicID: p.t.id, Partition: p.index}
	c.shares.mu.Lock()
	if c.shares.parts == nil {
		c.shares.parts = map[share.Key]*sharePartition{}
	}
	sp := c.shares.parts[key]
	if sp == nil {
		sp = &sharePartition{c: c, key: key, p: p, waiters: map[chan struct{}]struct{}{}}
		c.shares.parts[key] = sp
	}
	c.shares.mu.Unlock()
	sp.mu.Lock()
	if sp.sm == nil || sp.broker != broker || sp.leaderEpoch != epoch || sp.p != p {
		if code := sp.load(broker, epoch, p); code != 0 {
			sp.mu.Unlock()
			return nil, code
		}
	}
	sp.expire(c.now())
	return sp, 0
}

// load reads the partition's state from the persister as the leader at
// epoch, initialising it at share.auto.offset.reset the first time.
// Callers hold sp.mu.
func (sp *sharePartition) load(broker, epoch int32, p *partition) int16 {
	c := sp.c
	if sp.timer != nil {
		sp.timer.Stop()
		sp.timer = nil
	}
	had := sp.sm != nil
	st, code := c.persister().Read(sp.key, epoch)
	switch {
	case code == kerr.InvalidRequest.Code:
		// Never initialized (the share coordinator refuses the read, as
		// Kafka's does): initialize it now.
		st = share.PartitionState{StartOffset: -1}
	case code != 0:
		return code
	}
	if st.StartOffset < 0 {
		start := c.shareStartOffset(p, c.groupConfig(sp.key.Group).ShareAutoOffsetReset)
		if code := c.persister().Initialize(sp.key, 0, start); code != 0 {
			return code
		}
		st = share.PartitionState{StateEpoch: 0, LeaderEpoch: epoch, StartOffset: start}
	}
	sp.p, sp.broker, sp.leaderEpoch, sp.stateEpoch = p, broker, epoch, st.StateEpoch
	sp.sm = share.Restore(st)
	c.log.Info("share partition loaded", "group", sp.key.Group, "topic", p.t.name, "partition", p.index,
		"broker", broker, "leader_epoch", epoch, "start_offset", sp.sm.StartOffset(), "reload", had)
	sp.arm()
	return 0
}

// shareStartOffset is where a share partition starts: share.auto.offset.reset
// latest (the high watermark), earliest (the log start) or
// by_duration:<ISO-8601 duration> (the first record at or after now minus
// it, else the high watermark).
func (c *Cluster) shareStartOffset(p *partition, reset string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.st.LeaderReplica()
	if r == nil {
		return 0
	}
	switch {
	case reset == "earliest":
		return r.LogStartOffset()
	case strings.HasPrefix(reset, "by_duration:"):
		d, ok := parseISODuration(strings.TrimPrefix(reset, "by_duration:"))
		if !ok {
			return r.HW()
		}
		ts := c.now().Add(-d).UnixMilli()
		log := r.Log()
		off, _ := log.OffsetForTimestamp(ts, log.EndOffset())
		off = recordAt(log, off, func(_, t int64) bool { return t >= ts })
		if off < 0 || off > r.HW() {
			return r.HW()
		}
		return max(off, r.LogStartOffset())
	}
	return r.HW()
}

// parseISODuration reads the ISO-8601 durations Kafka's by_duration takes
// (PnDTnHnMnS, e.g. PT1H, P1DT30M, PT0.5S).
func parseISODuration(s string) (time.Duration, bool) {
	if !strings.HasPrefix(s, "P") || len(s) < 3 {
		return 0, false
	}
	var d time.Duration
	inTime := false
	num := ""
	for _, ch := range s[1:] {
		switch {
		case ch == 'T':
			inTime = true
		case ch >= '0' && ch <= '9' || ch == '.':
			num += string(ch)
		default:
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, false
			}
			num = ""
			unit := map[rune]time.Duration{'D': 24 * time.Hour, 'H': time.Hour, 'M': time.Minute, 'S': time.Second}[ch]
			if unit == 0 || (ch != 'D' && !inTime) || (ch == 'D' && inTime) {
				return 0, false
			}
			d += time.Duration(v * float64(unit))
		}
	}
	return d, num == "" && d >= 0
}

// expire releases the acquisitions whose lock ran out by now, writes the
// state and reports them. Callers hold sp.mu.
func (sp *sharePartition) expire(now time.Time) {
	if !sp.current() {
		return // a copy a new leader replaced: its state is the new leader's to read
	}
	changes := sp.sm.ExpireLocks(now, sp.c.shareLimits(sp.key.Group))
	if len(changes) == 0 {
		return
	}
	sp.persist()
	sp.c.emitShareChanges(sp, changes, "acquisition lock expired")
	sp.notify()
	sp.arm()
}

// current says whether this broker still leads the partition at the
// epoch sp was loaded at. Callers hold sp.mu.
func (sp *sharePartition) current() bool {
	sp.p.mu.Lock()
	defer sp.p.mu.Unlock()
	leader, epoch := sp.p.st.ViewLeader(sp.broker)
	return leader == sp.broker && epoch == sp.leaderEpoch
}

// arm sets the timer for the next acquisition-lock deadline: it wakes
// long polls and reports the release even when nobody fetches. Callers
// hold sp.mu.
func (sp *sharePartition) arm() {
	if sp.timer != nil {
		sp.timer.Stop()
		sp.timer = nil
	}
	when, ok := sp.sm.NextDeadline()
	if !ok {
		return
	}
	c := sp.c
	sp.timerGen++
	gen := sp.timerGen
	sp.timer = c.cfg.Clock.AfterFunc(when.Sub(c.now()), func() {
		// Not on the clock's goroutine: the write may wait on replication.
		c.goTracked(func() {
			sp.mu.Lock()
			defer sp.mu.Unlock()
			if sp.timerGen == gen && sp.sm != nil {
				sp.timer = nil
				sp.expire(c.now())
				sp.arm()
			}
		})
	})
}

// persist writes the state through the persister. Callers hold sp.mu.
func (sp *sharePartition) persist() int16 {
	st := sp.sm.Snapshot()
	st.StateEpoch, st.LeaderEpoch = sp.stateEpoch, sp.leaderEpoch
	code := sp.c.persister().Write(sp.key, st)
	if code != 0 {
		sp.c.log.Warn("writing share partition state failed", "group", sp.key.Group, "topic", sp.p.t.name,
			"partition", sp.p.index, "error", kerr.ErrorForCode(code))
	}
	return code
}

// watch registers ch to hear of releases; unwatch removes it.
func (sp *sharePartition) watch(ch chan struct{}) {
	sp.mu.Lock()
	sp.waiters[ch] = struct{}{}
	sp.mu.Unlock()
}

func (sp *sharePartition) unwatch(ch chan struct{}) {
	sp.mu.Lock()
	delete(sp.waiters, ch)
	sp.mu.Unlock()
}

// notify wakes the long polls waiting on sp. Callers hold sp.mu.
func (sp *sharePartition) notify() {
	for ch := range sp.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// releaseShareMember releases what member holds in the share partitions
// keys of group (its share session closed, or it left).
func (c *Cluster) releaseShareMember(group, member string, keys []share.Key) {
	for _, k := range keys {
		c.shares.mu.Lock()
		sp := c.shares.parts[k]
		c.shares.mu.Unlock()
		if sp == nil {
			continue
		}
		sp.mu.Lock()
		if sp.sm != nil && sp.current() {
			if ch := sp.sm.ReleaseMember(member, c.shareLimits(group)); len(ch) > 0 {
				sp.persist()
				c.emitShareChanges(sp, ch, "member "+member+" left")
				sp.notify()
				sp.arm()
			}
		}
		sp.mu.Unlock()
	}
}

// shareSnapshot lists the share partitions of group with their state.
func (c *Cluster) shareSnapshot(group string) []*sharePartition {
	c.shares.mu.Lock()
	defer c.shares.mu.Unlock()
	var out []*sharePartition
	for k, sp := range c.shares.parts {
		if k.Group == group {
			out = append(out, sp)
		}
	}
	return out
}

// forgetSharePartitions drops the share partitions of a deleted group.
func (c *Cluster) forgetSharePartitions(group string) {
	c.shares.mu.Lock()
	for k := range c.shares.initialized {
		if k.Group == group {
			delete(c.shares.initialized, k)
		}
	}
	var gone []*sharePartition
	for k, sp := range c.shares.parts {
		if k.Group == group {
			gone = append(gone, sp)
			delete(c.shares.parts, k)
		}
	}
	c.shares.mu.Unlock()
	for _, sp := range gone {
		sp.mu.Lock()
		if sp.timer != nil {
			sp.timer.Stop()
		}
		sp.mu.Unlock()
		c.persister().Delete(sp.key)
	}
}
