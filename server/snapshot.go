package server

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"time"
)

// ClusterState is a read-only snapshot of the cluster, as served by
// GET /v1/cluster. Each partition is captured atomically, but different
// partitions may be captured at slightly different moments.
type ClusterState struct {
	ClusterID  string        `json:"cluster_id"`
	Controller int32         `json:"controller"`
	Brokers    []BrokerState `json:"brokers"`
	Topics     []TopicState  `json:"topics"`
}

// BrokerState is one broker. Isolated: cut off from the other brokers
// (IsolateBroker). Fenced: stopped, and the controller has noticed (a
// crashed broker is not fenced until Config.BrokerSessionTimeout passes).
type BrokerState struct {
	ID       int32  `json:"id"`
	Address  string `json:"address"`
	Up       bool   `json:"up"`
	Isolated bool   `json:"isolated"`
	Fenced   bool   `json:"fenced"`
}

// TopicState is one topic and its partitions in index order.
type TopicState struct {
	Name string `json:"name"`
	// ID is the topic ID in Kafka's text form (Uuid.toString: URL-safe
	// base64 without padding), as kafka-topics.sh prints it.
	ID string `json:"id"`
	// Configs are the explicitly set topic configs.
	Configs    map[string]string `json:"configs"`
	Partitions []PartitionState  `json:"partitions"`
}

// PartitionState is one partition: the leader (-1 when leaderless), its
// epoch, the ISR, the leader's HW and last stable offset (both -1 when
// leaderless) and every replica in assignment order, which is also the
// election order.
type PartitionState struct {
	Partition        int32          `json:"partition"`
	Leader           int32          `json:"leader"`
	LeaderEpoch      int32          `json:"leader_epoch"`
	ISR              []int32        `json:"isr"`
	HighWatermark    int64          `json:"high_watermark"`
	LastStableOffset int64          `json:"last_stable_offset"`
	Replicas         []ReplicaState `json:"replicas"`
	// AddingReplicas and RemovingReplicas are set while a reassignment
	// is in progress (ReassignPartition).
	AddingReplicas   []int32 `json:"adding_replicas,omitempty"`
	RemovingReplicas []int32 `json:"removing_replicas,omitempty"`
}

// ReplicaState is one broker's copy of a partition. State is "leader",
// "follower" or "offline" (its broker is down). HighWatermark is the
// replica's own HW, which on a follower trails the leader's by a fetch.
type ReplicaState struct {
	Broker         int32 `json:"broker"`
	LogStartOffset int64 `json:"log_start_offset"`
	LogEndOffset   int64 `json:"log_end_offset"`
	HighWatermark  int64 `json:"high_watermark"`
	// LogBytes is the size of the stored batches; Segments their segments.
	LogBytes int64 `json:"log_bytes"`
	Segments int   `json:"segments"`
	// LastStableOffset is the replica's own LSO: min(first offset of an
	// open transaction in its log, its HW).
	LastStableOffset int64  `json:"last_stable_offset"`
	State            string `json:"state"`
	InSync           bool   `json:"in_sync"`
	Paused           bool   `json:"paused,omitempty"`
	// LeaderView is what the leader knows of this replica when it is a
	// follower (absent on the leader and when leaderless).
	LeaderView *FollowerView `json:"leader_view,omitempty"`
}

// FollowerView is the leader's view of one follower, learnt from its
// fetches: the fetch offset of its latest fetch (-1 before its first in the
// current leader epoch) and when it last fetched and was last caught up
// (Unix milliseconds, 0 for never). A follower whose last caught-up time is
// older than replica.lag.time.max.ms leaves the ISR at the next check; an
// idle but caught-up follower keeps fetching, so its times stay within
// replica.fetch.wait.max.ms of now.
type FollowerView struct {
	LogEndOffset       int64 `json:"log_end_offset"`
	LastFetchTimeMs    int64 `json:"last_fetch_time_ms"`
	LastCaughtUpTimeMs int64 `json:"last_caught_up_time_ms"`
}

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
		s.Brokers = append(s.Brokers, BrokerState{ID: b.id, Address: b.addr(), Up: b.up.Load(), Isolated: b.isolated.Load(), Fenced: !b.registered()})
	}
	ts := slices.Collect(maps.Values(c.topics.Load().byName))
	slices.SortFunc(ts, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	for _, t := range ts {
		configs := maps.Clone(t.cfg().configs)
		if configs == nil {
			configs = map[string]string{}
		}
		out := TopicState{Name: t.name, ID: topicIDString(t.id), Configs: configs}
		for _, p := range t.partitions() {
			out.Partitions = append(out.Partitions, p.state())
		}
		s.Topics = append(s.Topics, out)
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
