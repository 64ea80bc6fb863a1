package server

import (
	"time"

	"github.com/fakekafka/fakekafka/replication"
)

// Retention on the cluster's clock: every log.retention.check.interval.ms
// each partition's leader deletes the segments retention.ms and
// retention.bytes allow (replication.ApplyRetention); followers follow its
// log start on their next fetch, which the moved log start wakes.

func (c *Cluster) retentionCheckInterval() time.Duration { return c.cfg.RetentionCheckInterval }

// checkRetention is one round of the retention job.
func (c *Cluster) checkRetention() {
	for _, t := range c.topics.Load().byName {
		for _, p := range t.partitions() {
			p.applyRetention(c.now())
		}
	}
}

// applyRetention runs one retention check on p.
func (p *partition) applyRetention(now time.Time) replication.RetentionResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	var res replication.RetentionResult
	p.mutate(func() { res = p.st.ApplyRetention(now) })
	return res
}
