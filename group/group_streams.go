package group

// A group's streams state on its shard: restoring it from the last record
// after a load, the members' session timers and writing its record.

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// StreamsMember returns the streams member with id, or nil. Callers hold
// g.Mu.
func (g *Group) StreamsMember(id string) *StreamsMember {
	if g.Streams == nil || id == "" {
		return nil
	}
	return g.Streams.Members[id]
}

// StreamsHost is what streams groups need of the host beyond Host: the
// group's streams.session.timeout.ms and the topic metadata.
type StreamsHost interface {
	StreamsSessionTimeout(group string) time.Duration
	StreamsTopics() StreamsTopics
}

func (g *Group) streamsHost() StreamsHost {
	sh, _ := g.s.host.(StreamsHost)
	return sh
}

// StreamsGroup returns g's streams state, rebuilding it from the last
// record after a coordinator load: members get fresh session timers
// (streams.session.timeout.ms) and the topology is validated against the
// topics again. Callers hold g.Mu.
func (g *Group) StreamsGroup() *StreamsGroup {
	g.Ready()
	if g.Streams != nil || g.StreamsMeta == nil {
		return g.Streams
	}
	var r StreamsGroupRecord
	if err := json.Unmarshal(g.StreamsMeta, &r); err != nil {
		g.s.host.Log().Warn("unreadable streams group record", "group", g.ID, "error", err)
		return nil
	}
	sg := RestoreStreamsGroup(r)
	sh := g.streamsHost()
	if sh == nil {
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(sg.Members)) {
		g.TouchStreamsMember(sg.Members[id], sh.StreamsSessionTimeout(g.ID))
	}
	if sg.Topology != nil {
		topics := sh.StreamsTopics()
		sg.TopicsSeen, sg.Configured = sg.Topology.TopicsSeen(topics), Configure(sg.Topology, topics)
	}
	sg.Persisted, _ = json.Marshal(sg.Record())
	g.Streams = sg
	return sg
}

// IsStreams says whether g is a streams group (has streams state, live or
// in its last record). Callers hold g.Mu.
func (g *Group) IsStreams() bool { return g.Streams != nil || g.StreamsMeta != nil }

// PersistStreams writes g's streams state if it changed since the last
// write, and waits until it is committed and replayed. Callers hold
// g.WriteMu, not g.Mu.
func (g *Group) PersistStreams() int16 {
	return g.persistState(StreamsKind, func() (any, *[]byte) {
		if g.Streams == nil {
			return nil, nil
		}
		return g.Streams.Record(), &g.Streams.Persisted
	})
}

// RevertStreams drops g's streams state after its write failed; the next
// use restores it from the last committed record. Callers hold g.Mu.
func (g *Group) RevertStreams() {
	if g.Streams == nil {
		return
	}
	for _, m := range g.Streams.Members {
		if m.Session != nil {
			m.Session.Stop()
		}
		if m.Revocation != nil {
			m.Revocation.Stop()
		}
	}
	g.Streams = nil
}

// ArmStreamsRevocation starts member m's rebalance timeout when it has
// tasks to revoke, and stops it once it has none: a member that has not
// revoked them when it fires is fenced (removed), so its tasks can move,
// as Kafka's streams group rebalance timeout does. Callers hold g.Mu.
func (g *Group) ArmStreamsRevocation(m *StreamsMember) {
	if m.State != MemberUnrevokedTasks {
		if m.Revocation != nil {
			m.Revocation.Stop()
			m.Revocation = nil
		}
		return
	}
	if m.Revocation != nil || m.RebalanceTimeout <= 0 {
		return
	}
	epoch, h := m.Epoch, g.s.host
	m.Revocation = g.after(m.RebalanceTimeout, func() {
		if g.Streams == nil || g.Streams.Members[m.ID] != m || m.State != MemberUnrevokedTasks || m.Epoch != epoch {
			return
		}
		h.Log().Info("streams group member did not revoke its tasks in time", "group", g.ID, "member", m.ID)
		g.Streams.Remove(m)
		h.EmitConsumer(g, []Event{{Type: MemberExpired, Member: m.ID, Reason: "rebalance timeout: tasks not revoked"},
			g.Streams.groupEvent(RebalanceStarted, "member "+m.ID+" fenced")})
		g.persistStreamsAsync()
	})
}

// persistStreamsAsync writes the state a timer changed; a failed write
// reverts it. Callers hold g.Mu.
func (g *Group) persistStreamsAsync() {
	g.goLocked(func() {
		g.WriteMu.Lock()
		defer g.WriteMu.Unlock()
		if g.PersistStreams() != 0 {
			g.Mu.Lock()
			g.RevertStreams()
			g.Mu.Unlock()
		}
	})
}

// TouchStreamsMember restarts the member's session timer; when it fires
// the member leaves (a static member too, its tasks then move) and the
// new state is written. Callers hold g.Mu.
func (g *Group) TouchStreamsMember(m *StreamsMember, session time.Duration) {
	if m.Session != nil {
		m.Session.Stop()
	}
	h := g.s.host
	m.Session = g.after(session, func() {
		if g.Streams == nil || g.Streams.Members[m.ID] != m {
			return
		}
		h.Log().Info("streams group member session expired", "group", g.ID, "member", m.ID)
		g.Streams.Remove(m)
		h.EmitConsumer(g, []Event{{Type: MemberExpired, Member: m.ID, Reason: "session timeout"},
			g.Streams.groupEvent(RebalanceStarted, "member "+m.ID+" expired")})
		g.persistStreamsAsync()
	})
}
