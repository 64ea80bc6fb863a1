package server

import "github.com/twmb/franz-go/pkg/kerr"

// groupState is a group's membership: the classic protocol's generation,
// members and assignments (JoinGroup, SyncGroup, Heartbeat, LeaveGroup).
// It is embedded in group and guarded by g.mu.
type groupState struct {
	// restored is true once the membership was rebuilt from g.meta after
	// a coordinator load.
	restored bool
}

// checkCommit validates an OffsetCommit against the membership. Until
// groups have members (JoinGroup), only the simple commits of a group
// without members are valid, as in Kafka's empty group. Callers hold g.mu.
func (g *group) checkCommit(memberID string, generation int32, instanceID *string) int16 {
	if generation < 0 && memberID == "" {
		return 0
	}
	return kerr.UnknownMemberID.Code
}
