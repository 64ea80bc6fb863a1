package group

// The classic protocol's rebalance: preparing it, completing the join,
// choosing the protocol and the leader's member list.

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rebalanceTimeout is the longest rebalance timeout of the members.
func (g *Classic) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.Members {
		d = max(d, m.RebalanceTimeout)
	}
	return d
}

// prepareRebalance starts a rebalance: CompletingRebalance members waiting
// in SyncGroup get REBALANCE_IN_PROGRESS, and the join waits for every
// Member or the rebalance timeout; the first rebalance of an empty group
// waits group.initial.rebalance.delay.ms, longer while members keep
// coming, up to the rebalance timeout. Callers hold g.mu.
func (g *Classic) prepareRebalance(reason string) {
	if g.State == CompletingRebalance {
		g.resetAssignments(kerr.RebalanceInProgress.Code)
	}
	stopTimer(g.syncTimer)
	g.syncSeq++
	g.AwaitingSync = nil
	stopTimer(g.joinTimer)
	g.joinSeq++
	seq := g.joinSeq
	g.host.Log().Info("group rebalancing", "group", g.ID, "from", g.State, "generation", g.Generation, "reason", reason)
	g.emit(RebalanceStarted, "", reason, fmt.Sprintf("from %v", g.State))
	if g.State == Empty {
		g.State = PreparingRebalance
		delay := g.host.InitialRebalanceDelay()
		g.initialDelay, g.newMemberAdded = true, false
		g.armInitialDelay(seq, delay, max(g.rebalanceTimeout()-delay, 0))
		return
	}
	g.State = PreparingRebalance
	g.joinTimer = g.host.After(g.rebalanceTimeout(), func() {
		if g.joinSeq == seq && g.State == PreparingRebalance {
			g.completeJoin()
		}
	})
	g.tryCompleteJoin()
}

// armInitialDelay waits delay, then again (at most remaining in all) as
// long as new members keep joining. Callers hold g.mu.
func (g *Classic) armInitialDelay(seq uint64, delay, remaining time.Duration) {
	fire := func() {
		if g.joinSeq != seq || g.State != PreparingRebalance {
			return
		}
		if g.newMemberAdded && remaining > 0 {
			g.newMemberAdded = false
			next := min(g.host.InitialRebalanceDelay(), remaining)
			g.armInitialDelay(seq, next, remaining-next)
			return
		}
		g.initialDelay = false
		g.completeJoin()
	}
	if delay <= 0 {
		fire()
		return
	}
	g.joinTimer = g.host.After(delay, fire)
}

// tryCompleteJoin completes the join once every member has rejoined and no
// member id given out is still to come back. Callers hold g.mu.
func (g *Classic) tryCompleteJoin() {
	if g.State != PreparingRebalance || g.initialDelay || len(g.PendingMembers) > 0 {
		return
	}
	for _, m := range g.Members {
		if m.join == nil {
			return
		}
	}
	g.completeJoin()
}

// completeJoin ends PreparingRebalance: members that did not rejoin are
// removed, the generation moves on, a protocol is chosen and every waiting
// JoinGroup is answered, the leader's with every member's metadata.
// Callers hold g.mu.
func (g *Classic) completeJoin() {
	stopTimer(g.joinTimer)
	g.joinSeq++
	for _, m := range g.SortedMembers() {
		if m.join == nil {
			g.host.Log().Info("group Member removed: it did not rejoin in time", "group", g.ID, "member", m.ID)
			g.emit(MemberExpired, m.ID, "did not rejoin in time", "")
			g.removeMember(m, kerr.UnknownMemberID.Code)
		}
	}
	g.Generation++
	if len(g.Members) == 0 {
		g.Protocol, g.Leader, g.State = "", "", Empty
		g.host.Log().Info("group empty", "group", g.ID, "generation", g.Generation)
		g.emit(RebalanceCompleted, "", "", "empty")
		g.host.PersistAsync(g.SnapshotMeta(nil))
		return
	}
	g.Protocol = g.selectProtocol()
	g.State = CompletingRebalance
	g.AwaitingSync = map[string]bool{}
	var all []kmsg.JoinGroupResponseMember
	for _, m := range g.SortedMembers() {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = m.ID, m.InstanceID, m.MetadataFor(g.Protocol)
		all = append(all, jm)
		g.AwaitingSync[m.ID] = true
	}
	g.host.Log().Info("group joined", "group", g.ID, "generation", g.Generation, "protocol", g.Protocol, "leader", g.Leader, "members", len(g.Members))
	for _, m := range g.Members {
		r := g.currentJoin(m.ID)
		if m.ID == g.Leader {
			r.Members = all
		}
		m.deliverJoin(r)
		m.isNew = false
		g.Touch(m)
	}
	// Members that never sync would hold the group in CompletingRebalance
	// (or unassigned in Stable): remove them after the rebalance timeout.
	g.syncSeq++
	seq, gen := g.syncSeq, g.Generation
	g.syncTimer = g.host.After(g.rebalanceTimeout(), func() {
		if g.syncSeq != seq || g.Generation != gen || len(g.AwaitingSync) == 0 {
			return
		}
		for id := range g.AwaitingSync {
			if m := g.Members[id]; m != nil {
				g.host.Log().Info("group Member removed: it did not sync in time", "group", g.ID, "member", id)
				g.emit(MemberExpired, id, "did not sync in time", "")
				g.removeMember(m, kerr.UnknownMemberID.Code)
			}
		}
		g.prepareRebalance("members did not sync")
	})
}

// currentJoin is a JoinGroup answer for the current generation, without
// the member list. Callers hold g.mu.
func (g *Classic) currentJoin(memberID string) JoinResult {
	return JoinResult{MemberID: memberID, Generation: g.Generation, ProtocolType: g.ProtocolType, Protocol: g.Protocol, Leader: g.Leader}
}

// leaderMembers is the member list a leader gets. Callers hold g.mu.
func (g *Classic) leaderMembers() []kmsg.JoinGroupResponseMember {
	var all []kmsg.JoinGroupResponseMember
	for _, m := range g.SortedMembers() {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = m.ID, m.InstanceID, m.MetadataFor(g.Protocol)
		all = append(all, jm)
	}
	return all
}

// resetAssignments answers waiting SyncGroups with code and forgets the
// assignments of a generation that never became Stable. Callers hold g.mu.
func (g *Classic) resetAssignments(code int16) {
	for _, m := range g.Members {
		m.Assignment = nil
		m.deliverSync(SyncResult{Code: code})
	}
}

// candidates are the protocols every member supports.
func (g *Classic) candidates() map[string]bool {
	counts := map[string]int{}
	for _, m := range g.Members {
		for _, p := range m.Protocols {
			counts[p.Name]++
		}
	}
	out := map[string]bool{}
	for name, n := range counts {
		if n == len(g.Members) {
			out[name] = true
		}
	}
	return out
}

// selectProtocol picks the protocol as Kafka does: among those every
// Member supports, each member votes for the first in its own order, and
// the most votes win (ties go to the oldest member's preference). Callers
// hold g.mu.
func (g *Classic) selectProtocol() string {
	cands := g.candidates()
	votes := map[string]int{}
	for _, m := range g.Members {
		for _, p := range m.Protocols {
			if cands[p.Name] {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	if ms := g.SortedMembers(); len(ms) > 0 {
		for _, p := range ms[0].Protocols {
			if cands[p.Name] && (best == "" || votes[p.Name] > votes[best]) {
				best = p.Name
			}
		}
	}
	return best
}

// supports says whether a member with this protocol type and protocols
// can join: any for an empty group, else the group's type and at least
// one protocol every member supports. Callers hold g.mu.
func (g *Classic) supports(protocolType string, protocols []Protocol) bool {
	if len(g.Members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if protocolType != g.ProtocolType {
		return false
	}
	cands := g.candidates()
	return slices.ContainsFunc(protocols, func(p Protocol) bool { return cands[p.Name] })
}
