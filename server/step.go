package server

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// StepReplica makes the follower on broker fetch exactly once from the
// leader of topic/partition, copying only batches that end at or before
// upTo (-1: as much as one fetch takes). Pause the follower first
// (PauseReplica) so its own fetcher does not run ahead: together they let a
// test place every replica at an exact offset. Remember that the leader
// learns a follower's LEO only from its next fetch.
func (c *Cluster) StepReplica(topicName string, index, broker int32, upTo int64) error {
	p, err := c.mustPartition(topicName, index)
	if err != nil {
		return err
	}
	if b := c.broker(broker); b == nil || !b.up.Load() {
		return fmt.Errorf("%w: broker %d is not running", ErrBrokerState, broker)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st.Replica(broker) == nil {
		return fmt.Errorf("broker %d has no replica of %s/%d", broker, topicName, index)
	}
	if p.st.Leader() == broker {
		return fmt.Errorf("broker %d leads %s/%d; only followers fetch", broker, topicName, index)
	}
	var code int16
	p.mutate(func() { _, code = p.st.ReplicaFetchUpTo(broker, replicaFetchMaxBytes, upTo, c.now()) })
	if code != 0 {
		return fmt.Errorf("fetch by broker %d: %v", broker, kerr.ErrorForCode(code))
	}
	return nil
}
