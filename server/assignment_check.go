package server

// The checks of a manual replica assignment that CreateTopics,
// CreatePartitions and AlterPartitionReassignments share, with Kafka 4.4's
// order and words (its controller checks the brokers in ascending order,
// so the smallest offending id is the one named).

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// checkManualAssignment checks one partition's replica list: not empty,
// registered brokers, none twice, and rf replicas when rf >= 0.
func (c *Cluster) checkManualAssignment(rs []int32, rf int) (*kerr.Error, string) {
	if len(rs) == 0 {
		return kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list."
	}
	sorted := slices.Sorted(slices.Values(rs))
	for i, id := range sorted {
		if c.broker(id) == nil {
			return kerr.InvalidReplicaAssignment, fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if i > 0 && sorted[i-1] == id {
			return kerr.InvalidReplicaAssignment, fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)
		}
	}
	if rf >= 0 && len(rs) != rf {
		return kerr.InvalidReplicaAssignment, fmt.Sprintf("The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(rs), rf)
	}
	return nil, ""
}

// unreplicable is Kafka's message for a replication factor above the
// brokers that can take a replica.
func unreplicable(rf, live int) string {
	return fmt.Sprintf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered or some brokers have all their log directories cordoned.", rf, rf, live)
}
