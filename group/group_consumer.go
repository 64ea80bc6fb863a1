package group

// A group's KIP-848 state on its shard: restoring it from the last record
// after a load, the members' session timers and writing its record.

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// ConsumerMember returns the KIP-848 member with id, or nil. Callers hold
// g.Mu.
func (g *Group) ConsumerMember(id string) *ConsumerMember {
	if g.Consumer == nil || id == "" {
		return nil
	}
	return g.Consumer.Members[id]
}

// ConsumerGroup returns g's KIP-848 state, rebuilding it from the last
// record after a coordinator load; members get fresh session timers, as a
// new coordinator gives them. Callers hold g.Mu.
func (g *Group) ConsumerGroup() *ConsumerGroup {
	g.Ready() // binds the copy to its coordinator, for its timers
	if g.Consumer != nil || g.ConsumerMeta == nil {
		return g.Consumer
	}
	var r ConsumerGroupRecord
	if err := json.Unmarshal(g.ConsumerMeta, &r); err != nil {
		g.s.host.Log().Warn("unreadable consumer group record", "group", g.ID, "error", err)
		return nil
	}
	cg := RestoreConsumerGroup(r)
	for _, id := range slices.Sorted(maps.Keys(cg.Members)) {
		g.TouchConsumerMember(cg.Members[id])
	}
	cg.TopicsSeen = cg.SubscribedPartitions(g.s.host.Topics())
	cg.Persisted, _ = json.Marshal(cg.Record())
	g.Consumer = cg
	return cg
}

// PersistConsumer writes g's KIP-848 state if it changed since the last
// write (with a pending migration's records in the same batch), and waits
// until it is committed and replayed. A migration whose write fails is
// undone here. Callers hold g.WriteMu, not g.Mu.
func (g *Group) PersistConsumer() int16 {
	g.Mu.Lock()
	recs, cv := g.conversionRecords()
	cg := g.Consumer
	if cg == nil {
		g.Mu.Unlock()
		if cv == nil {
			return 0
		}
		code := g.Write(recs) // a downgrade: the consumer record's tombstone and the classic metadata
		g.Mu.Lock()
		if code == 0 {
			g.writtenSeq = max(g.writtenSeq, cv.snap.Seq)
		} else {
			g.revertConversion(cv)
		}
		g.Mu.Unlock()
		return code
	}
	rec := cg.Record()
	raw, _ := json.Marshal(rec)
	same := bytes.Equal(raw, cg.Persisted)
	g.Mu.Unlock()
	if same && cv == nil {
		return 0
	}
	var value any = rec
	if len(rec.Members) == 0 && len(g.OffsetsSnapshot()) == 0 {
		value = nil // an empty group with nothing committed is forgotten
	}
	code := g.Write(append(recs, CoordinatorRecord{Key: RecordKey{Kind: ConsumerKind, Group: g.ID}, Value: value}))
	g.Mu.Lock()
	switch {
	case code == 0:
		cg.Persisted = raw
	case cv != nil:
		g.revertConversion(cv)
	}
	g.Mu.Unlock()
	return code
}

// OffsetsSnapshot is a copy of the committed offsets. Callers must not
// hold g.Mu.
func (g *Group) OffsetsSnapshot() map[TopicPartition]Offset {
	g.Mu.Lock()
	defer g.Mu.Unlock()
	return maps.Clone(g.Committed)
}

// RevertConsumer drops g's KIP-848 state after its write failed: a failed
// write leaves nothing applied, and the next use restores the state from
// the last committed record (ConsumerMeta), as a new coordinator would.
// Callers hold g.Mu.
func (g *Group) RevertConsumer() {
	if g.Consumer == nil {
		return
	}
	for _, m := range g.Consumer.Members {
		if m.Session != nil {
			m.Session.Stop()
		}
		if m.Rejoin != nil {
			m.Rejoin.Stop()
		}
	}
	g.Consumer = nil
}

// TouchConsumerMember restarts the member's session timer (the group's
// consumer.session.timeout.ms, or a classic member's own session
// timeout); when it fires the member is fenced and the new state written.
// Callers hold g.Mu.
func (g *Group) TouchConsumerMember(m *ConsumerMember) {
	if m.Session != nil {
		m.Session.Stop()
	}
	h := g.s.host
	d := h.GroupConfig(g.ID).ConsumerSessionTimeout
	if m.Classic != nil {
		d = m.Classic.SessionTimeout
	}
	// g.after fires only while this copy of the group is still the
	// coordinator's (not after a failover or Close).
	m.Session = g.after(d, func() {
		if g.Consumer == nil || g.Consumer.Members[m.ID] != m {
			return
		}
		h.Log().Info("consumer group member session expired", "group", g.ID, "member", m.ID)
		g.fence(m, Event{Type: MemberExpired, Member: m.ID, Reason: "session timeout"})
	})
}
