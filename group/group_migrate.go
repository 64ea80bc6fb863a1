package group

// A group's protocol migrations on its shard: turning the live state from
// one type into the other, the batch that writes it (old type's tombstone,
// new type's record), undoing it when that write fails, and the timers of
// classic members inside a consumer group.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// conversion is a migration applied live, to be written.
type conversion struct {
	upgrade bool
	snap    MetaSnapshot // downgrade: the classic metadata
	// savedConsumer is ConsumerMeta before a downgrade, restored if the
	// write fails.
	savedConsumer []byte
}

// Upgrade turns g's classic group with members into a consumer group for
// a ConsumerGroupHeartbeat joining it, when the policy and the group allow
// (GROUP_ID_NOT_FOUND otherwise, with Kafka's message). Callers hold g.Mu
// and g.WriteMu, and write with PersistConsumer.
func (g *Group) Upgrade() (int16, string) {
	g.Ready()
	h := g.s.host
	switch {
	case !h.MigrationPolicy().UpgradeEnabled():
		return kerr.GroupIDNotFound.Code, fmt.Sprintf("Cannot upgrade classic group %s to consumer group because online upgrade is disabled.", g.ID)
	case g.ProtocolType != "consumer":
		return kerr.GroupIDNotFound.Code, fmt.Sprintf("Cannot upgrade classic group %s to consumer group because the group does not use the consumer embedded protocol.", g.ID)
	}
	cg, msg := FromClassic(&g.Classic, h.Topics())
	if cg == nil {
		return kerr.GroupIDNotFound.Code, msg
	}
	gen, n := g.Generation, len(g.Members)
	g.Abandon(kerr.RebalanceInProgress.Code)
	g.Consumer = cg
	g.conversion = &conversion{upgrade: true}
	for _, m := range cg.Members {
		g.TouchConsumerMember(m)
	}
	h.Log().Info("classic group upgraded to a consumer group", "group", g.ID, "generation", gen, "members", n)
	h.EmitConsumer(g, []Event{{Type: GroupUpgraded, Group: true, Epoch: gen, Reason: "a consumer-protocol member joined",
		Detail: fmt.Sprintf("%d classic members carried over", n)}})
	return 0, ""
}

// Downgrade turns g's consumer group classic when leaving, its last
// consumer-protocol member, goes (the step checked the policy): the
// remaining members become the classic group at generation = the group
// epoch, each holding its target, and the group rebalances so they
// rejoin. Callers hold g.Mu and write with PersistConsumer (holding
// g.WriteMu).
func (g *Group) Downgrade(leaving *ConsumerMember, left Event) {
	h := g.s.host
	cg := g.Consumer
	md := cg.ToClassic(leaving, h.Topics(), h.Now().UnixMilli())
	for _, m := range cg.Members {
		cg.drop(m)
	}
	g.conversion = &conversion{savedConsumer: g.ConsumerMeta}
	g.Consumer, g.ConsumerMeta = nil, nil
	g.Classic.Abandon(kerr.RebalanceInProgress.Code)
	g.Restore(&md)
	g.conversion.snap = g.SnapshotMeta(nil)
	h.Log().Info("consumer group downgraded to a classic group", "group", g.ID, "generation", md.Generation, "members", len(md.Members))
	h.EmitConsumer(g, []Event{left,
		{Type: GroupDowngraded, Group: true, Epoch: md.Generation, Reason: "the last consumer-protocol member left",
			Detail: fmt.Sprintf("%d classic members", len(md.Members))}})
	g.prepareRebalance(fmt.Sprintf("Downgrade group %s from consumer to classic.", g.ID))
}

// DowngradeJoined turns g's consumer group classic when a classic static
// member's join replaced its last consumer-protocol member (Kafka's
// downgrade with a joining member): the members, the joining one with the
// replaced one's target, form the classic group at generation = the group
// epoch, Stable, with no rebalance. It answers the join. Callers hold g.Mu
// and write with PersistConsumer (holding g.WriteMu).
func (g *Group) DowngradeJoined(joined *ConsumerMember) JoinResult {
	h := g.s.host
	cg := g.Consumer
	md := cg.ToClassic(nil, h.Topics(), h.Now().UnixMilli())
	for _, m := range cg.Members {
		cg.drop(m)
	}
	g.conversion = &conversion{savedConsumer: g.ConsumerMeta}
	g.Consumer, g.ConsumerMeta = nil, nil
	g.Classic.Abandon(kerr.RebalanceInProgress.Code)
	g.Restore(&md)
	g.conversion.snap = g.SnapshotMeta(nil)
	h.Log().Info("consumer group downgraded to a classic group", "group", g.ID, "generation", md.Generation, "members", len(md.Members))
	h.EmitConsumer(g, []Event{{Type: GroupDowngraded, Group: true, Epoch: md.Generation,
		Reason: "a classic static member replaced the last consumer-protocol member", Detail: fmt.Sprintf("%d classic members", len(md.Members))}})
	return JoinResult{MemberID: joined.ID, Generation: g.Generation, ProtocolType: g.ProtocolType, Protocol: g.Protocol, Leader: g.Leader}
}

// conversionRecords are the records of a pending conversion, and the
// classic snapshot's sequence to note once written. Callers hold g.Mu.
func (g *Group) conversionRecords() ([]CoordinatorRecord, *conversion) {
	cv := g.conversion
	if cv == nil {
		return nil, nil
	}
	g.conversion = nil
	if cv.upgrade {
		return []CoordinatorRecord{{Key: RecordKey{Group: g.ID}}}, cv // the classic metadata's tombstone
	}
	return []CoordinatorRecord{{Key: RecordKey{Kind: ConsumerKind, Group: g.ID}}, {Key: RecordKey{Group: g.ID}, Value: cv.snap.Meta}}, cv
}

// revertConversion undoes a conversion whose write failed: the state
// comes back from the last committed records, as a new coordinator would
// restore it. Callers hold g.Mu.
func (g *Group) revertConversion(cv *conversion) {
	if cv.upgrade {
		g.RevertConsumer()
		g.Classic.Members = nil // Ready restores it from MetaRecord
		g.Ready()
		return
	}
	g.Classic.Abandon(kerr.NotCoordinator.Code)
	g.Classic.Members = nil
	g.Ready()
	g.ConsumerMeta = cv.savedConsumer
}

// CancelConversion undoes a migration made live whose request then failed
// before anything was written. Callers hold g.Mu and g.WriteMu.
func (g *Group) CancelConversion() {
	if cv := g.conversion; cv != nil {
		g.conversion = nil
		g.revertConversion(cv)
	}
}

// touchClassicRejoin arms the deadline of a classic member of a consumer
// group to rejoin or sync (its rebalance timeout): past it the member is
// fenced. With reset false an armed deadline stays (Kafka's
// scheduleIfAbsent). Callers hold g.Mu.
func (g *Group) touchClassicRejoin(m *ConsumerMember, reset bool, why string) {
	if m.Rejoin != nil {
		if !reset {
			return
		}
		m.Rejoin.Stop()
	}
	m.Rejoin = g.after(m.RebalanceTimeout, func() {
		if g.Consumer == nil || g.Consumer.Members[m.ID] != m {
			return
		}
		m.Rejoin = nil
		g.s.host.Log().Info("classic member of a consumer group fenced", "group", g.ID, "member", m.ID, "why", why)
		g.fence(m, Event{Type: MemberFenced, Member: m.ID, Reason: why})
	})
}

// StopClassicRejoin cancels a classic member's rejoin or sync deadline.
// Callers hold g.Mu.
func (g *Group) StopClassicRejoin(m *ConsumerMember) {
	if m.Rejoin != nil {
		m.Rejoin.Stop()
		m.Rejoin = nil
	}
}

// ClassicJoined arms a classic member's timers after its join: its
// session and the deadline of its sync. Callers hold g.Mu.
func (g *Group) ClassicJoined(m *ConsumerMember) {
	g.TouchConsumerMember(m)
	g.touchClassicRejoin(m, true, "the member failed to sync within timeout")
}

// ClassicMustRejoin arms the rejoin deadline of a classic member told
// REBALANCE_IN_PROGRESS. Callers hold g.Mu.
func (g *Group) ClassicMustRejoin(m *ConsumerMember) {
	g.touchClassicRejoin(m, false, "the classic member failed to join within the rebalance timeout")
}

// fence removes m from the consumer group on a timer, reporting ev (or
// downgrades the group when m was its last consumer-protocol member) and
// writes the new state in the background. Callers hold g.Mu.
func (g *Group) fence(m *ConsumerMember, ev Event) {
	h := g.s.host
	if h.MigrationPolicy().DowngradeEnabled() && g.Consumer.LastConsumerMember(m) {
		g.Downgrade(m, ev)
	} else {
		h.EmitConsumer(g, append([]Event{ev}, g.Consumer.Remove(m, h.Topics())...))
	}
	g.goLocked(func() {
		g.WriteMu.Lock()
		defer g.WriteMu.Unlock()
		if g.PersistConsumer() != 0 {
			g.Mu.Lock()
			g.RevertConsumer()
			g.Mu.Unlock()
		}
	})
}
