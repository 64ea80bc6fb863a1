package server

// Classic requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) to a
// consumer group: its classic members, as Kafka 4.4 serves them while a
// group moves between protocols (package group's mixed.go). Each state
// change is written before the answer, as the consumer protocol's are.

import (
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

// consumerGroupOf is g's consumer group when g is one with members (the
// classic requests then go to it), else nil. Callers hold g.Mu.
func consumerGroupOf(g *group) *consumerGroup {
	if cg := g.ConsumerGroup(); cg != nil && len(cg.Members) > 0 && !g.HasClassicMembers() {
		return cg
	}
	return nil
}

// persistMixed writes g's consumer group after a classic request changed
// it; a failed write reverts the change. Callers hold g.WriteMu only.
func persistMixed(g *group) int16 {
	code := g.PersistConsumer()
	if code != 0 {
		g.Mu.Lock()
		g.RevertConsumer()
		g.Mu.Unlock()
	}
	return code
}

// mixedJoin applies a classic JoinGroup to g if g is a consumer group;
// ok false means g is not one and the classic path applies.
func (c *Cluster) mixedJoin(g *group, r grp.JoinRequest) (res grp.JoinResult, ok bool) {
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	cg := consumerGroupOf(g)
	if cg == nil {
		g.Mu.Unlock()
		return res, false
	}
	if grp.MigrationPolicy(c.cfg.ConsumerGroupMigrationPolicy) == grp.MigrationDisabled {
		g.Mu.Unlock()
		c.log.Info("classic join to a consumer group refused: migration disabled", "group", g.ID)
		return grp.JoinError(kerr.InconsistentGroupProtocol.Code, r.MemberID), true
	}
	r.Downgrade = grp.MigrationPolicy(c.cfg.ConsumerGroupMigrationPolicy).DowngradeEnabled()
	jr := cg.ClassicJoin(r, assignorTopics{c})
	c.emitConsumerEvents(g, jr.Events)
	switch {
	case jr.Downgrade:
		jr.JoinResult = g.DowngradeJoined(jr.Member)
	case jr.Member != nil:
		g.ClassicJoined(jr.Member)
	case jr.Message != "":
		c.log.Info("classic join to a consumer group refused", "group", g.ID, "error", kerr.ErrorForCode(jr.Code), "why", jr.Message)
	}
	g.Mu.Unlock()
	if jr.Member == nil {
		return jr.JoinResult, true
	}
	if code := persistMixed(g); code != 0 {
		return grp.JoinError(code, r.MemberID), true
	}
	return jr.JoinResult, true
}

// mixedSync answers a classic SyncGroup from g's consumer group; ok false
// means g is not one.
func (c *Cluster) mixedSync(g *group, req grp.SyncRequest) (assignment []byte, code int16, ok bool) {
	g.Mu.Lock()
	defer g.Mu.Unlock()
	cg := consumerGroupOf(g)
	if cg == nil {
		return nil, 0, false
	}
	m, assignment, code := cg.ClassicSync(req, assignorTopics{c})
	switch {
	case code == 0:
		g.StopClassicRejoin(m)
		g.TouchConsumerMember(m)
	case code == kerr.RebalanceInProgress.Code:
		g.ClassicMustRejoin(m)
	}
	return assignment, code, true
}

// mixedHeartbeat answers a classic Heartbeat from g's consumer group; ok
// false means g is not one.
func (c *Cluster) mixedHeartbeat(g *group, memberID string, instanceID *string, generation int32) (code int16, ok bool) {
	g.Mu.Lock()
	defer g.Mu.Unlock()
	cg := consumerGroupOf(g)
	if cg == nil {
		return 0, false
	}
	m, code := cg.ClassicHeartbeat(memberID, instanceID, generation)
	if m != nil {
		g.TouchConsumerMember(m)
		if code == kerr.RebalanceInProgress.Code {
			g.ClassicMustRejoin(m)
		}
	}
	return code, true
}

// mixedLeave removes the classic members a LeaveGroup names from g's
// consumer group; ok false means g is not one.
func (c *Cluster) mixedLeave(g *group, leaving []grp.LeaveMember) (codes []int16, code int16, ok bool) {
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	cg := consumerGroupOf(g)
	if cg == nil {
		g.Mu.Unlock()
		return nil, 0, false
	}
	codes, evs := cg.ClassicLeave(leaving, assignorTopics{c})
	c.emitConsumerEvents(g, evs)
	g.Mu.Unlock()
	return codes, persistMixed(g), true
}
