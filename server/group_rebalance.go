package server

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The classic protocol's rebalance: preparing it, completing the join,
// choosing the protocol and the leader's member list.

// rebalanceTimeout is the longest rebalance timeout of the members.
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// prepareRebalance starts a rebalance: CompletingRebalance members waiting
// in SyncGroup get REBALANCE_IN_PROGRESS, and the join waits for every
// member or the rebalance timeout; the first rebalance of an empty group
// waits group.initial.rebalance.delay.ms, longer while members keep
// coming, up to the rebalance timeout. Callers hold g.mu.
func (g *group) prepareRebalance(reason string) {
	c := g.s.c
	if g.state == groupCompleting {
		g.resetAssignments(kerr.RebalanceInProgress.Code)
	}
	stopTimer(g.syncTimer)
	g.syncSeq++
	g.awaitingSync = nil
	stopTimer(g.joinTimer)
	g.joinSeq++
	seq := g.joinSeq
	c.log.Info("group rebalancing", "group", g.id, "from", g.state, "generation", g.generation, "reason", reason)
	c.emitGroup(EventGroupRebalanceStarted, g, "", reason, fmt.Sprintf("from %v", g.state))
	if g.state == groupEmpty {
		g.state = groupPreparing
		delay := c.cfg.GroupInitialRebalanceDelay
		g.initialDelay, g.newMemberAdded = true, false
		g.armInitialDelay(seq, delay, max(g.rebalanceTimeout()-delay, 0))
		return
	}
	g.state = groupPreparing
	g.joinTimer = g.after(g.rebalanceTimeout(), func() {
		if g.joinSeq == seq && g.state == groupPreparing {
			g.completeJoin()
		}
	})
	g.tryCompleteJoin()
}

// armInitialDelay waits delay, then again (at most remaining in all) as
// long as new members keep joining. Callers hold g.mu.
func (g *group) armInitialDelay(seq uint64, delay, remaining time.Duration) {
	fire := func() {
		if g.joinSeq != seq || g.state != groupPreparing {
			return
		}
		if g.newMemberAdded && remaining > 0 {
			g.newMemberAdded = false
			next := min(g.s.c.cfg.GroupInitialRebalanceDelay, remaining)
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
	g.joinTimer = g.after(delay, fire)
}

// tryCompleteJoin completes the join once every member has rejoined and no
// member id given out is still to come back. Callers hold g.mu.
func (g *group) tryCompleteJoin() {
	if g.state != groupPreparing || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
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
func (g *group) completeJoin() {
	c := g.s.c
	stopTimer(g.joinTimer)
	g.joinSeq++
	for _, m := range g.sortedMembers() {
		if m.join == nil {
			c.log.Info("group member removed: it did not rejoin in time", "group", g.id, "member", m.id)
			c.emitGroup(EventGroupMemberExpired, g, m.id, "did not rejoin in time", "")
			g.removeMember(m, kerr.UnknownMemberID.Code)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol, g.leader, g.state = "", "", groupEmpty
		c.log.Info("group empty", "group", g.id, "generation", g.generation)
		c.emitGroup(EventGroupRebalanceCompleted, g, "", "", "empty")
		g.persistAsync()
		return
	}
	g.protocol = g.selectProtocol()
	g.state = groupCompleting
	g.awaitingSync = map[string]bool{}
	var all []kmsg.JoinGroupResponseMember
	for _, m := range g.sortedMembers() {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = m.id, m.instanceID, m.metadataFor(g.protocol)
		all = append(all, jm)
		g.awaitingSync[m.id] = true
	}
	c.log.Info("group joined", "group", g.id, "generation", g.generation, "protocol", g.protocol, "leader", g.leader, "members", len(g.members))
	for _, m := range g.members {
		r := g.currentJoin(m.id)
		if m.id == g.leader {
			r.members = all
		}
		m.deliverJoin(r)
		m.isNew = false
		g.touch(m)
	}
	// Members that never sync would hold the group in CompletingRebalance
	// (or unassigned in Stable): remove them after the rebalance timeout.
	g.syncSeq++
	seq, gen := g.syncSeq, g.generation
	g.syncTimer = g.after(g.rebalanceTimeout(), func() {
		if g.syncSeq != seq || g.generation != gen || len(g.awaitingSync) == 0 {
			return
		}
		for id := range g.awaitingSync {
			if m := g.members[id]; m != nil {
				c.log.Info("group member removed: it did not sync in time", "group", g.id, "member", id)
				c.emitGroup(EventGroupMemberExpired, g, id, "did not sync in time", "")
				g.removeMember(m, kerr.UnknownMemberID.Code)
			}
		}
		g.prepareRebalance("members did not sync")
	})
}

// currentJoin is a JoinGroup answer for the current generation, without
// the member list. Callers hold g.mu.
func (g *group) currentJoin(memberID string) joinResult {
	return joinResult{memberID: memberID, generation: g.generation, protocolType: g.protocolType, protocol: g.protocol, leader: g.leader}
}

// leaderMembers is the member list a leader gets. Callers hold g.mu.
func (g *group) leaderMembers() []kmsg.JoinGroupResponseMember {
	var all []kmsg.JoinGroupResponseMember
	for _, m := range g.sortedMembers() {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = m.id, m.instanceID, m.metadataFor(g.protocol)
		all = append(all, jm)
	}
	return all
}

// resetAssignments answers waiting SyncGroups with code and forgets the
// assignments of a generation that never became Stable. Callers hold g.mu.
func (g *group) resetAssignments(code int16) {
	for _, m := range g.members {
		m.assignment = nil
		m.deliverSync(syncResult{code: code})
	}
}

// candidates are the protocols every member supports.
func (g *group) candidates() map[string]bool {
	counts := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			counts[p.name]++
		}
	}
	out := map[string]bool{}
	for name, n := range counts {
		if n == len(g.members) {
			out[name] = true
		}
	}
	return out
}

// selectProtocol picks the protocol as Kafka does: among those every
// member supports, each member votes for the first in its own order, and
// the most votes win (ties go to the oldest member's preference). Callers
// hold g.mu.
func (g *group) selectProtocol() string {
	cands := g.candidates()
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if cands[p.name] {
				votes[p.name]++
				break
			}
		}
	}
	best := ""
	if ms := g.sortedMembers(); len(ms) > 0 {
		for _, p := range ms[0].protocols {
			if cands[p.name] && (best == "" || votes[p.name] > votes[best]) {
				best = p.name
			}
		}
	}
	return best
}

// supports says whether a member with this protocol type and protocols
// can join: any for an empty group, else the group's type and at least
// one protocol every member supports. Callers hold g.mu.
func (g *group) supports(protocolType string, protocols []memberProtocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	cands := g.candidates()
	return slices.ContainsFunc(protocols, func(p memberProtocol) bool { return cands[p.name] })
}
