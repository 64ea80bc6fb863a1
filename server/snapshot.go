package server

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"time"
)

func unixMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// State returns a snapshot of the whole cluster, topics sorted by name.
func (c *Cluster) State() ClusterState {
	s := ClusterState{ClusterID: c.cfg.ClusterID, Controller: c.controller(), Brokers: []BrokerState{}, Topics: []TopicState{}}
	for _, b := range c.brokers {
		s.Brokers = append(s.Brokers, brokerState(b))
	}
	ts := slices.Collect(maps.Values(c.topics.Load().byName))
	slices.SortFunc(ts, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	for _, t := range ts {
		s.Topics = append(s.Topics, c.topicState(t))
	}
	return s
}

// Partition returns a snapshot of one partition, or false if it does not
// exist.
func (c *Cluster) Partition(topic string, partition int32) (PartitionState, bool) {
	p := c.partition(topic, partition)
	if p == nil {
		return PartitionState{}, false
	}
	return p.state(), true
}

// Topic returns a snapshot of one topic, or false if it does not exist.
func (c *Cluster) Topic(name string) (TopicState, bool) {
	t := c.topic(name)
	if t == nil {
		return TopicState{}, false
	}
	return c.topicState(t), true
}

// Broker returns one broker as State shows it, or false if the cluster
// has no broker id.
func (c *Cluster) Broker(id int32) (BrokerState, bool) {
	b := c.broker(id)
	if b == nil {
		return BrokerState{}, false
	}
	return brokerState(b), true
}

func brokerState(b *broker) BrokerState {
	return BrokerState{ID: b.id, Address: b.addr(), Up: b.up.Load(), Isolated: b.isolated.Load(), Fenced: !b.registered()}
}

func (c *Cluster) topicState(t *topic) TopicState {
	configs := maps.Clone(t.cfg().configs)
	if configs == nil {
		configs = map[string]string{}
	}
	out := TopicState{Name: t.name, ID: topicIDString(t.id), Configs: configs}
	for _, p := range t.partitions() {
		out.Partitions = append(out.Partitions, p.state())
	}
	return out
}

// state captures the partition under its lock.
func (p *partition) state() PartitionState {
	c := p.t.c
	p.mu.Lock()
	defer p.mu.Unlock()
	leader := p.st.Leader()
	s := PartitionState{
		Partition:        p.index,
		Leader:           leader,
		LeaderEpoch:      p.st.LeaderEpoch(),
		ISR:              p.st.ISR(),
		HighWatermark:    p.st.HW(),
		LastStableOffset: -1,
	}
	if l := p.st.LeaderReplica(); l != nil {
		s.LastStableOffset = l.LSO()
	}
	if s.ISR == nil {
		s.ISR = []int32{}
	}
	if ra, ok := p.st.Reassignment(); ok {
		s.AddingReplicas, s.RemovingReplicas = ra.Adding, ra.Removing
	}
	for _, r := range p.st.Replicas() {
		rs := ReplicaState{
			Broker:           r.Broker,
			LogStartOffset:   r.LogStartOffset(),
			LogEndOffset:     r.LEO(),
			HighWatermark:    r.HW(),
			LogBytes:         r.Log().Size(),
			Segments:         r.Log().NumSegments(),
			LastStableOffset: r.LSO(),
			InSync:           p.st.InISR(r.Broker),
			Paused:           p.isPaused(r.Broker),
		}
		if v, ok := p.st.FollowerView(r.Broker); ok {
			rs.LeaderView = &FollowerView{LogEndOffset: v.LEO, LastFetchTimeMs: unixMillis(v.LastFetch), LastCaughtUpTimeMs: unixMillis(v.LastCaughtUp)}
		}
		switch b := c.broker(r.Broker); {
		case !r.Online() || b == nil || !b.up.Load():
			rs.State = "offline"
		case r.Broker == leader:
			rs.State = "leader"
		default:
			rs.State = "follower"
		}
		s.Replicas = append(s.Replicas, rs)
	}
	return s
}

// topicIDString formats a topic ID as Kafka's Uuid.toString does.
func topicIDString(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
