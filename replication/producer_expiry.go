package replication

import (
	"slices"
	"time"
)

// Producer state expires (Kafka's producer.id.expiration.ms, one day by
// default): every producer.id.expiration.check.interval.ms each replica
// forgets the producers whose last batch is older than the expiration and
// that have no transaction open on it (ProducerStateManager's
// removeExpiredProducers). "Older" is by the batch's max timestamp, the
// time the producer stamped or the log-append time. A retry from an
// expired producer then finds no state and is accepted whatever its
// sequence (KIP-360): the duplicate real Kafka writes too.

// ExpireProducers removes from every replica the producers idle for at
// least expiration at now and returns the ids the leader forgot, in
// increasing order. A log restored or truncated later rebuilds state from
// its batches, so an expired producer may come back until the next check,
// as from Kafka's log replay.
func (p *Partition) ExpireProducers(now time.Time, expiration time.Duration) []int64 {
	cutoff := now.UnixMilli() - expiration.Milliseconds()
	var leaderForgot []int64
	for _, r := range p.replicas {
		ps := r.log.prod
		if ps == nil {
			continue
		}
		for id, e := range ps.m {
			if e.txnFirst >= 0 || e.lastTimestamp > cutoff {
				continue
			}
			// A log with producers is never a shared one, so this
			// writes only r's own state.
			delete(ps.m, id)
			if r.Broker == p.leader {
				leaderForgot = append(leaderForgot, id)
			}
		}
	}
	slices.Sort(leaderForgot)
	return leaderForgot
}
