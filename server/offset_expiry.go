package server

// Committed-offset expiry on the cluster's clock (offsets.retention.minutes,
// KIP-211): every offsets.retention.check.interval.ms each coordinator
// removes the offsets package group's rules say expired (group.Expiry:
// Kafka's offsetExpirationCondition) from the groups of the
// __consumer_offsets shards it leads, by writing their tombstones through
// the runtime (acks=all; the replay drops them), and deletes an Empty
// group left without offsets, as Kafka's cleanupGroupMetadata does.
// Moving a manual clock past the retention is how a test sees a consumer
// group that restarts after a long weekend reprocess everything.
//
// The round only starts the work: the tombstones wait for replication,
// which a clock callback must not, so they are written on a tracked
// goroutine, one round at a time. Rounds that fall due meanwhile (an
// AdvanceClock of days runs hundreds inline) are folded into one more
// run at the latest round's time, so the last round is never lost.

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

func (c *Cluster) offsetsRetentionCheckInterval() time.Duration {
	return c.cfg.OffsetsRetentionCheckInterval
}

// offsetExpiryRuns serialises the expiry runs.
type offsetExpiryRuns struct {
	mu      sync.Mutex
	running bool
	next    time.Time // a round that fell due while one ran; zero: none
}

// expireOffsets is one round of the expiry job.
func (c *Cluster) expireOffsets() {
	if c.topic(offsetsTopic) == nil {
		return // no group was ever used
	}
	r := &c.expiringOffsets
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		r.next = c.now()
		return
	}
	now := c.now()
	r.running = c.goTracked(func() {
		for {
			c.expireOffsetsAt(now)
			r.mu.Lock()
			if r.next.IsZero() {
				r.running = false
				r.mu.Unlock()
				return
			}
			now, r.next = r.next, time.Time{}
			r.mu.Unlock()
		}
	})
}

// expireOffsetsAt expires, as of now, the offsets of every group whose
// shard is led by a live broker, on that broker's load of the shard.
func (c *Cluster) expireOffsetsAt(now time.Time) {
	ss, err := c.coord.Shards()
	if err != nil {
		return
	}
	for _, sh := range ss {
		leader, code := sh.Coordinator()
		if code != 0 {
			continue
		}
		s, _, code := sh.Acquire(leader)
		if code != 0 {
			continue
		}
		for _, g := range s.List() {
			c.expireGroupOffsets(g, now, c.cfg.OffsetsRetention)
		}
	}
}

// expireGroupOffsets writes the tombstones of g's expired offsets and, when
// none is left and g is Empty, deletes g.
func (c *Cluster) expireGroupOffsets(g *group, now time.Time, retention time.Duration) {
	// No other write of g (metadata, transactional or plain commits) is in
	// flight while the expiry decides and writes: a commit landing between
	// the decision and the tombstones would be deleted with them.
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.ExpiryMu.Lock()
	defer g.ExpiryMu.Unlock()
	g.Mu.Lock()
	g.Ready()
	if g.State == grp.Dead || !g.Current() {
		g.Mu.Unlock()
		return
	}
	var e grp.Expiry
	ok, empty := true, g.State == grp.Empty && !g.HasMembers()
	if cg := g.ConsumerProtocol(); cg != nil {
		e, empty = grp.ConsumerExpiry(cg), empty && len(cg.Members) == 0
	} else if cg := g.ConsumerGroup(); cg != nil && len(cg.Members) > 0 {
		ok = false // members of the other protocol
	} else {
		e, ok = grp.ClassicExpiry(&g.Classic, emptySince(g))
	}
	if !ok {
		g.Mu.Unlock()
		return
	}
	expired, all := g.Expired(e, now, retention)
	var recs []coordinatorRecord
	for _, tp := range expired {
		recs = append(recs, coordinatorRecord{Key: recordKey{Group: g.ID, Topic: tp.Topic, Partition: tp.Partition}})
	}
	deleted := all && empty
	if deleted {
		g.State = grp.Dead
		g.Stop(kerr.CoordinatorNotAvailable.Code)
		recs = append(recs, coordinatorRecord{Key: recordKey{Group: g.ID}})
		if g.ConsumerMeta != nil {
			recs = append(recs, coordinatorRecord{Key: recordKey{Kind: consumerKind, Group: g.ID}})
		}
	}
	g.Mu.Unlock()
	if len(recs) == 0 {
		return
	}
	code := g.Write(recs)
	if deleted {
		g.Shard().Forget(g)
	}
	if code != 0 {
		c.log.Warn("expiring offsets failed", "group", g.ID, "error", errorName(code))
		return
	}
	names := make([]string, len(expired))
	for i, tp := range expired {
		names[i] = fmt.Sprintf("%s-%d", tp.Topic, tp.Partition)
	}
	c.log.Info("offsets expired", "group", g.ID, "offsets", len(expired), "group_deleted", deleted)
	c.emit(EventOffsetsExpired, func(e *Event) {
		e.Group, e.Detail = g.ID, strings.Join(names, ",")
		if deleted {
			e.Reason = "group_deleted"
		}
	})
}

// emptySince is when the classic group became Empty: the time of its last
// metadata record if that record has no members, else zero (unknown: the
// offsets' commit times count, as for Kafka's records without
// currentStateTimestamp). Callers hold g.Mu.
func emptySince(g *group) time.Time {
	var md grp.Meta
	if g.MetaRecord == nil || json.Unmarshal(g.MetaRecord, &md) != nil || len(md.Members) > 0 || md.Timestamp <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(md.Timestamp)
}
