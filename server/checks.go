package server

import (
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
)

// checkLeaderEpoch compares a request's current_leader_epoch with the
// partition's (Kafka's Partition.getLocalLog order: epoch first). -1 skips.
func checkLeaderEpoch(st *replication.Partition, current int32) int16 {
	switch {
	case current < 0:
		return 0
	case current < st.LeaderEpoch():
		return kerr.FencedLeaderEpoch.Code
	case current > st.LeaderEpoch():
		return kerr.UnknownLeaderEpoch.Code
	}
	return 0
}

// checkLeader returns the error a request that needs the leader gets on
// broker: the epoch check, then NOT_LEADER_OR_FOLLOWER.
// A zombie leader (isolated, deposed, unaware) still answers as leader.
func checkLeader(st *replication.Partition, broker, currentEpoch int32) int16 {
	leader, epoch := st.ViewLeader(broker)
	switch {
	case currentEpoch >= 0 && currentEpoch < epoch:
		return kerr.FencedLeaderEpoch.Code
	case currentEpoch > epoch:
		return kerr.UnknownLeaderEpoch.Code
	case leader != broker:
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// leaderHint is the KIP-951 current leader sent with NOT_LEADER_OR_FOLLOWER
// and FENCED_LEADER_EPOCH so clients can redirect without a metadata round
// trip; ok is false when the partition is leaderless.
func leaderHint(st *replication.Partition) (id, epoch int32, ok bool) {
	if st.Leader() < 0 {
		return -1, -1, false
	}
	return st.Leader(), st.LeaderEpoch(), true
}
