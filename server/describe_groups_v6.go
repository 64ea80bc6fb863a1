package server

// DescribeGroups v6 (KIP-1043): a group that is not there as a classic
// group is no longer described as an empty Dead group without an error.

import (
	"fmt"
	"math"

	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupNotFoundV6 turns DescribeGroups' Dead answer for an unknown,
// deleted or non-classic group into Kafka 4.4's v6 answer: still Dead, with
// GROUP_ID_NOT_FOUND and the message Kafka's classic-group lookup gives,
// and, as for every group answered with an error, no authorized
// operations. g is nil for an unknown group; callers hold g.Mu.
func groupNotFoundV6(version int16, g *group, dg *kmsg.DescribeGroupsResponseGroup) {
	if version < 6 || dg.ErrorCode != 0 || dg.State != grp.Dead {
		return
	}
	msg := fmt.Sprintf("Group %s not found.", dg.Group)
	if g != nil && g.State != grp.Dead {
		msg = fmt.Sprintf("Group %s is not a classic group.", dg.Group)
	}
	dg.ErrorCode, dg.ErrorMessage, dg.AuthorizedOperations = kerr.GroupIDNotFound.Code, &msg, math.MinInt32
}
