package server

// The controller: broker stop and start, fencing crashed brokers out of the
// ISR, and leader elections (Kafka's KRaft controller, applied
// synchronously instead of through AlterPartition round trips).

import (
	"errors"
	"fmt"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrBrokerState is returned for stopping a stopped broker or starting a
// running one.
var ErrBrokerState = errors.New("broker state")

// StopBroker stops broker id in the given mode.
func (c *Cluster) StopBroker(id int32, mode StopMode) error {
	b := c.broker(id)
	if b == nil {
		return fmt.Errorf("%w: no broker %d", errUnknownBroker, id)
	}
	if mode != StopClean && mode != StopCrash && mode != StopPowerLoss {
		return fmt.Errorf("unknown stop mode %q (want clean, crash or powerloss)", mode)
	}
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	if !b.up.Load() {
		return fmt.Errorf("%w: broker %d is already stopped", ErrBrokerState, id)
	}
	if b.isolated.Load() {
		return fmt.Errorf("%w: broker %d is isolated; heal it first", ErrBrokerState, id)
	}
	c.log.Info("broker stopping", "broker", id, "mode", mode)
	c.emit(EventBrokerStopped, func(e *Event) { e.Broker, e.Mode = id, mode })
	if mode == StopClean {
		c.eachReplica(id, func(p *partition) {
			p.extras().ev.cause = "controlled shutdown"
			p.st.Shutdown(id)
			c.fenceReplica(p, id)
		})
	}
	b.up.Store(false)
	b.closeConns()
	b.sessions.Clear() // a restarted broker knows no fetch session
	if mode == StopClean {
		return nil
	}
	c.eachReplica(id, func(p *partition) { p.st.Crash(id, mode == StopPowerLoss) })
	c.scheduleFence(b)
	return nil
}

// StartBroker restarts a stopped broker: its replicas recover (HW from the
// last checkpoint), followers truncate and catch up and rejoin the ISR, and
// partitions left leaderless elect again now that a replica is back.
func (c *Cluster) StartBroker(id int32) error {
	b := c.broker(id)
	if b == nil {
		return fmt.Errorf("%w: no broker %d", errUnknownBroker, id)
	}
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	select {
	case <-c.closing:
		return errors.New("cluster is closed")
	default:
	}
	if b.up.Load() {
		return fmt.Errorf("%w: broker %d is already running", ErrBrokerState, id)
	}
	if b.fence != nil {
		// Back before the controller noticed: its leaderships stand.
		b.fence.Stop()
		b.fence = nil
		b.fencePending.Store(false)
	}
	if err := b.listen(); err != nil {
		return err
	}
	b.up.Store(true)
	c.emit(EventBrokerStarted, func(e *Event) { e.Broker = id })
	c.eachReplica(id, func(p *partition) {
		p.extras().ev.cause = "broker started"
		p.st.Restart(id)
		if p.st.Leader() < 0 {
			c.elect(p)
		}
		if p.st.Leader() != id {
			c.fetcherFor(id).mark(p)
		}
	})
	c.log.Info("broker started", "broker", id)
	return nil
}

var errUnknownBroker = errors.New("unknown broker")

// eachReplica runs f under the lock of every partition with a replica on
// broker id, then wakes whoever the change concerns.
func (c *Cluster) eachReplica(id int32, f func(*partition)) {
	for _, t := range c.topics.Load().byName {
		for _, p := range t.partitions() {
			p.mu.Lock() // reassignments change the replicas
			if p.st.Replica(id) == nil {
				p.mu.Unlock()
				continue
			}
			p.mutate(func() { f(p) })
			p.mu.Unlock()
		}
	}
}

// fenceBroker is the controller noticing a dead broker: it leaves every
// ISR (unless it is the last member) and its leaderships move.
func (c *Cluster) fenceBroker(id int32) {
	c.emit(EventBrokerFenced, func(e *Event) { e.Broker = id })
	c.eachReplica(id, func(p *partition) {
		p.extras().ev.cause = "broker fenced"
		c.fenceReplica(p, id)
	})
}

// fenceReplica removes broker id from p's ISR and, if it led p, elects
// another leader. Callers hold p.mu.
func (c *Cluster) fenceReplica(p *partition, id int32) {
	p.st.RemoveFromISR(id, c.now())
	if p.st.Leader() == id {
		c.electExcluding(p, id)
	}
}

// elect runs the controller's election for p: the first replica in
// assignment order that is online and in the ISR, else (with
// unclean.leader.election.enable) the first online replica, else no leader.
func (c *Cluster) elect(p *partition) {
	c.electExcluding(p, -1)
}

func (c *Cluster) electExcluding(p *partition, exclude int32) {
	now := c.now()
	id, unclean := p.st.ChooseLeader(exclude)
	if id < 0 {
		p.st.MakeLeaderless()
		c.log.Info("partition leaderless", "topic", p.t.name, "partition", p.index, "isr", p.st.ISR())
		return
	}
	if id == p.st.Leader() {
		return
	}
	if code := p.st.Elect(id, unclean, now); code != 0 {
		c.log.Warn("election failed", "topic", p.t.name, "partition", p.index, "candidate", id, "error", kerr.ErrorForCode(code))
		return
	}
	c.log.Info("leader elected", "topic", p.t.name, "partition", p.index, "leader", id, "epoch", p.st.LeaderEpoch(), "unclean", unclean)
}

// ElectLeader moves the leadership of topic/partition. With leader >= 0 it
// elects that replica: a clean election needs it online and in the ISR; an
// unclean one only online, and resets the ISR to it. With leader -1 it runs
// Kafka's own choice (the first live ISR member in assignment order, then
// with unclean any live replica). It returns the new leader.
func (c *Cluster) ElectLeader(topicName string, index int32, leader int32, unclean bool) (int32, error) {
	p, err := c.mustPartition(topicName, index)
	if err != nil {
		return -1, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if leader >= 0 && c.broker(leader) != nil && !c.broker(leader).up.Load() {
		return -1, kafkaErrorf(kerr.ReplicaNotAvailable, "broker %d is stopped", leader)
	}
	p.mutate(func() { leader, err = c.electRequested(p, leader, unclean) })
	return leader, err
}

// electRequested is ElectLeader's change of p; it returns -1 with the
// error. Callers hold p.mu.
func (c *Cluster) electRequested(p *partition, leader int32, unclean bool) (int32, error) {
	topicName, index := p.t.name, p.index
	p.extras().ev.cause = "requested"
	if leader < 0 {
		cur := p.st.Leader()
		id, needsUnclean := p.st.ChooseLeader(cur)
		if id < 0 && unclean {
			// The caller's consent is enough whatever the topic config
			// says, as with Kafka's ElectLeaders UNCLEAN: any live replica.
			for _, r := range p.st.Replicas() {
				if r.Online() && r.Broker != cur {
					id, needsUnclean = r.Broker, true
					break
				}
			}
		}
		if id < 0 || (needsUnclean && !unclean) {
			return -1, kafkaErrorf(kerr.EligibleLeadersNotAvailable, "no live replica in the ISR %v other than the leader", p.st.ISR())
		}
		leader, unclean = id, needsUnclean
	}
	if code := p.st.Elect(leader, unclean, c.now()); code != 0 {
		return -1, kafkaCodeErrorf(code, "cannot elect broker %d leader of %s/%d", leader, topicName, index)
	}
	c.log.Info("leader elected", "topic", topicName, "partition", index, "leader", leader, "epoch", p.st.LeaderEpoch(), "unclean", unclean)
	return leader, nil
}

// ElectPreferredLeader makes the first replica in assignment order lead, if
// it is alive and in the ISR (Kafka's preferred leader election).
func (c *Cluster) ElectPreferredLeader(topicName string, index int32) error {
	p, err := c.mustPartition(topicName, index)
	if err != nil {
		return err
	}
	preferred := p.st.Replicas()[0].Broker
	if b := c.broker(preferred); b == nil || !b.up.Load() {
		return kafkaErrorf(kerr.PreferredLeaderNotAvailable, "preferred leader %d is stopped", preferred)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.st.InISR(preferred) {
		return kafkaErrorf(kerr.PreferredLeaderNotAvailable, "preferred leader %d is not in the ISR %v", preferred, p.st.ISR())
	}
	p.mutate(func() {
		p.extras().ev.cause = "preferred"
		if code := p.st.Elect(preferred, false, c.now()); code != 0 {
			err = kafkaCodeErrorf(code, "cannot elect preferred leader %d of %s/%d", preferred, topicName, index)
		}
	})
	return err
}

// checkpointInterval is how often runCheckpoints must look: the HW
// checkpoint interval or the shortest flush interval of any topic.
func (c *Cluster) checkpointInterval() time.Duration {
	interval := c.cfg.HWCheckpointInterval
	if c.cfg.FlushInterval > 0 {
		interval = min(interval, c.cfg.FlushInterval)
	}
	for _, t := range c.topics.Load().byName {
		if f := t.cfg().flushInterval; f > 0 {
			interval = min(interval, f)
		}
	}
	return max(interval, time.Millisecond)
}

// checkpoint writes every replica's HW checkpoint each
// HWCheckpointInterval and flushes logs whose flush interval passed.
func (c *Cluster) checkpoint() {
	now := c.now()
	checkpoint := now.Sub(c.lastCheckpoint) >= c.cfg.HWCheckpointInterval
	if checkpoint {
		c.lastCheckpoint = now
	}
	for _, t := range c.topics.Load().byName {
		fi := t.cfg().flushInterval
		flush := fi > 0 && now.Sub(t.lastFlush) >= fi
		if flush {
			t.lastFlush = now
		}
		if !checkpoint && !flush {
			continue
		}
		for _, p := range t.partitions() {
			p.mu.Lock()
			if checkpoint {
				p.st.CheckpointHW()
			}
			if flush {
				for _, r := range p.st.Replicas() {
					p.st.Flush(r.Broker)
				}
			}
			if p.disk != nil && (checkpoint || flush) {
				p.disk.Flush() // fsync: the data dir follows the flush settings too
			}
			p.mu.Unlock()
		}
	}
}

// IsolateBroker cuts broker id off from the other brokers and the
// controller while clients can still reach it: no replication to or from
// it, and after BrokerSessionTimeout the controller fences it and moves its
// leaderships. A partition it led keeps a zombie leader there: it answers
// clients as leader at its old epoch, takes acks=1 writes that are lost when
// it heals, and times out acks=all writes.
func (c *Cluster) IsolateBroker(id int32) error {
	b := c.broker(id)
	if b == nil {
		return fmt.Errorf("%w: no broker %d", errUnknownBroker, id)
	}
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	if !b.up.Load() || b.isolated.Load() {
		return fmt.Errorf("%w: broker %d is stopped or already isolated", ErrBrokerState, id)
	}
	b.isolated.Store(true)
	c.emit(EventBrokerIsolated, func(e *Event) { e.Broker = id })
	c.eachReplica(id, func(p *partition) { p.st.Isolate(id) })
	c.scheduleFence(b)
	c.log.Info("broker isolated", "broker", id)
	return nil
}

// HealBroker reconnects an isolated broker: a deposed leader learns the new
// epoch, becomes a follower and truncates what it took meanwhile; every
// replica there catches up and rejoins the ISR.
func (c *Cluster) HealBroker(id int32) error {
	b := c.broker(id)
	if b == nil {
		return fmt.Errorf("%w: no broker %d", errUnknownBroker, id)
	}
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	if !b.isolated.Load() {
		return fmt.Errorf("%w: broker %d is not isolated", ErrBrokerState, id)
	}
	b.isolated.Store(false)
	if b.fence != nil {
		b.fence.Stop()
		b.fence = nil
		b.fencePending.Store(false)
	}
	c.emit(EventBrokerHealed, func(e *Event) { e.Broker = id })
	c.eachReplica(id, func(p *partition) {
		p.extras().ev.cause = "broker healed"
		p.st.Heal(id)
		if p.st.Leader() < 0 {
			c.elect(p)
		}
		if p.st.Leader() != id {
			c.fetcherFor(id).mark(p)
		} else {
			p.markFollowers()
		}
	})
	c.log.Info("broker healed", "broker", id)
	return nil
}

// scheduleFence fences b now or after the broker session timeout, unless it
// comes back first. Callers hold ctlMu.
func (c *Cluster) scheduleFence(b *broker) {
	if c.cfg.BrokerSessionTimeout == 0 {
		c.fenceBroker(b.id)
		return
	}
	b.fencePending.Store(!b.up.Load())
	var fence *clock.Timer
	fence = c.cfg.Clock.AfterFunc(c.cfg.BrokerSessionTimeout, func() {
		c.ctlMu.Lock()
		defer c.ctlMu.Unlock()
		if b.fence == fence { // not one a restart stopped and a new crash replaced
			b.fence = nil
			b.fencePending.Store(false)
			c.fenceBroker(b.id)
		}
	})
	b.fence = fence
}
