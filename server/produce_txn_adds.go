package server

// A transaction version 2 Produce adds its partitions to the transaction
// once per request, as Kafka's leader does (ReplicaManager verifies every
// partition of the request that has no ongoing transaction of the producer
// in one AddPartitionsToTxn to the coordinator, retried for
// add.partitions.to.txn.retry.backoff.max.ms): the partitions share one
// answer and one 100 ms budget. Added one partition at a time, a request
// to two partitions meeting CONCURRENT_TRANSACTIONS would wait 200 ms and
// could answer one partition CONCURRENT_TRANSACTIONS and the other NONE.

import (
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceTxnAdds is one Produce request's implicit adds: the answer for
// each partition already sent to the coordinator.
type produceTxnAdds struct {
	req   *kmsg.ProduceRequest
	codes map[transaction.Partition]int16
}

// implicitAdd adds tp, for the producer of batch b, to the transaction
// id, together with every other partition of the request that needs it
// and was not sent yet, and returns tp's answer.
func (a *produceTxnAdds) implicitAdd(c *Cluster, broker int32, id string, pid int64, epoch int16, tp transaction.Partition) int16 {
	if code, ok := a.codes[tp]; ok {
		return code
	}
	parts := []transaction.Partition{tp}
	for _, rt := range a.req.Topics {
		t, name, code := c.produceTopic(a.req.Version, rt.Topic, rt.TopicID)
		if t == nil || code != 0 {
			continue
		}
		for _, rp := range rt.Partitions {
			other := transaction.Partition{Topic: name, Partition: rp.Partition}
			if _, done := a.codes[other]; done || other == tp || rp.Partition < 0 || int(rp.Partition) >= len(t.partitions()) {
				continue
			}
			h, err := protocol.ParseBatchHeader(rp.Records)
			if err != nil || !h.IsTransactional() || h.ProducerID != pid || h.ProducerEpoch != epoch {
				continue
			}
			if p := t.partitions()[rp.Partition]; !p.ledBy(broker) || p.txnOngoingHere(broker, pid, epoch) {
				continue // not led here (refused later), or in the transaction already
			}
			parts = append(parts, other)
		}
	}
	code := c.addTxnPartitionsImplicitly(id, pid, epoch, parts, addPartitionsToTxnRetryBackoffMax)
	if a.codes == nil {
		a.codes = make(map[transaction.Partition]int16, len(parts))
	}
	for _, p := range parts {
		a.codes[p] = code
	}
	return code
}

// ledBy reports whether broker leads p.
func (p *partition) ledBy(broker int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.Leader() == broker
}
