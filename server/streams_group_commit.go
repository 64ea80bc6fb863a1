package server

// Offset commits of streams group members: a Kafka Streams client's
// consumer commits (OffsetCommit, or TxnOffsetCommit under
// exactly_once_v2) with its member id and member epoch, which must be its
// current one (STALE_MEMBER_EPOCH otherwise, older or newer, as Kafka
// 4.4); an unknown member of a streams group is UNKNOWN_MEMBER_ID.
// A commit without a member (an admin's offset reset) is allowed while
// the group has no members.

import (
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

// streamsCommit checks a commit to a streams group; ok is false when g is
// not one. Callers hold g.Mu.
func streamsCommit(g *group, memberID string, epoch int32) (code int16, ok bool) {
	sg := g.StreamsGroup()
	if sg == nil {
		return 0, false
	}
	if memberID == "" && epoch < 0 {
		if len(sg.Members) > 0 {
			return kerr.UnknownMemberID.Code, true
		}
		return 0, true
	}
	m := sg.Members[memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code, true
	}
	return grp.CheckStreamsMemberEpoch(m, epoch), true
}

// streamsMembers is the number of members of g's streams state (0 when g
// is not a streams group). Callers hold g.Mu.
func streamsMembers(g *group) int {
	if sg := g.StreamsGroup(); sg != nil {
		return len(sg.Members)
	}
	return 0
}

// convertEmptyStreamsGroup is what a classic JoinGroup does to a streams
// group, as Kafka 4.4: one with members refuses it
// (INCONSISTENT_GROUP_PROTOCOL); an empty one is converted to a classic
// group, its streams record deleted first.
func convertEmptyStreamsGroup(g *group) int16 {
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	sg := g.StreamsGroup()
	switch {
	case sg == nil:
		g.Mu.Unlock()
		return 0
	case len(sg.Members) > 0:
		g.Mu.Unlock()
		return kerr.InconsistentGroupProtocol.Code
	}
	g.Mu.Unlock()
	if code := g.Write([]grp.CoordinatorRecord{{Key: grp.RecordKey{Kind: grp.StreamsKind, Group: g.ID}}}); code != 0 {
		return code
	}
	g.Mu.Lock()
	g.Streams = nil
	g.Mu.Unlock()
	return 0
}
