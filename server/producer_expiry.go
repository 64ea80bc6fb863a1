package server

import "time"

// Producer state expiry on the cluster's clock: every
// producer.id.expiration.check.interval.ms each partition's replicas forget
// the producers idle past producer.id.expiration.ms
// (replication.ExpireProducers). Moving a manual clock past it is how a
// test sees the duplicate a late retry then writes.

func (c *Cluster) producerExpiryInterval() time.Duration {
	return c.cfg.ProducerIDExpirationCheckInterval
}

// expireProducers is one round of the expiry job.
func (c *Cluster) expireProducers() {
	now := c.now()
	for _, t := range c.topics.Load().byName {
		for _, p := range t.partitions() {
			p.mu.Lock()
			leader := p.st.Leader()
			ids := p.st.ExpireProducers(now, c.cfg.ProducerIDExpiration)
			p.mu.Unlock()
			for _, id := range ids {
				c.emit(EventProducerExpired, func(e *Event) {
					e.Topic, e.Partition, e.Broker, e.ProducerID = t.name, p.index, leader, id
				})
			}
		}
	}
}
