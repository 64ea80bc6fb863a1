package server

import (
	"time"

	"github.com/fakekafka/fakekafka/replication"
)

// The log cleaner on the cluster's clock: every log.cleaner.backoff.ms each
// compacted partition whose dirty ratio, max.compaction.lag.ms or a passed
// delete horizon says so is cleaned (replication.Clean) on its leader, the
// rewritten batches shared by every replica. __consumer_offsets and
// __transaction_state are compacted like any topic with
// cleanup.policy=compact.

func (c *Cluster) cleanerBackoff() time.Duration { return c.cfg.CleanerBackoff }

// cleanLogs is one round of the cleaner.
func (c *Cluster) cleanLogs() {
	for _, t := range c.topics.Load().byName {
		for _, p := range t.partitions() {
			p.clean(c.now(), false, "")
		}
	}
}

// clean runs the cleaner on p and emits log_cleaned if it ran.
func (p *partition) clean(now time.Time, force bool, cause string) replication.CleanResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	var res replication.CleanResult
	p.mutate(func() { res = p.st.Clean(now, force) })
	if res.Cleaned {
		reason := "compaction"
		if cause != "" {
			reason = cause
		}
		p.t.c.emit(EventLogCleaned, func(e *Event) {
			e.Topic, e.Partition, e.Broker, e.From, e.To, e.Reason = p.t.name, p.index, p.st.Leader(), res.FirstDirty, res.End, reason
		})
	}
	return res
}
