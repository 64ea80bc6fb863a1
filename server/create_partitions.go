package server

// CreatePartitions, versions 0-3: add partitions to existing topics.
//
// Any broker answers (Kafka forwards to the controller; we have one topic
// table). Per topic, as Kafka's controller checks it: a name given twice
// is INVALID_REQUEST for that name; an unknown or deleted topic
// UNKNOWN_TOPIC_OR_PARTITION; a count not above the current one
// INVALID_PARTITIONS; an assignment whose length is not the number of new
// partitions, with an empty replica list, a replica count other than the
// topic's replication factor, an unknown broker or a broker listed twice
// INVALID_REPLICA_ASSIGNMENT. Without an assignment the new partitions are
// placed like CreateTopics places them, continuing the round robin, so
// partition i lands where a topic created with i+1 partitions would have
// it. ValidateOnly checks and answers without creating. With the
// authorizer, a topic the principal may not ALTER is
// TOPIC_AUTHORIZATION_FAILED without a message (after the duplicate check,
// before existence), as Kafka's controller answers. Under a
// controller_mutation_rate quota the added partitions are taken from it;
// from v3 a topic over the quota is THROTTLING_QUOTA_EXCEEDED.
//
// New partitions start like a new topic's: every replica in the ISR, the
// first one leading at epoch 0; followers start fetching at once. Clients
// see them on their next Metadata refresh.

import (
	"fmt"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleCreatePartitions(req *kmsg.CreatePartitionsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := map[string]int{}
	for _, rt := range req.Topics {
		count[rt.Topic]++
	}
	reported := map[string]bool{}
	q := cn.mutationQuota(req.Version >= 3)
	defer q.done()
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var e *kerr.Error
		var msg string
		if count[rt.Topic] > 1 {
			if reported[rt.Topic] {
				continue
			}
			reported[rt.Topic] = true
			e, msg = kerr.InvalidRequest, "Duplicate topic name."
		} else if !cn.allowedTopic(authorizer.OpAlter, rt.Topic) {
			st.ErrorCode = errTopicAuth
			resp.Topics = append(resp.Topics, st)
			continue
		} else {
			var assignment [][]int32
			if rt.Assignment != nil {
				assignment = make([][]int32, len(rt.Assignment))
				for i, a := range rt.Assignment {
					assignment[i] = slices.Clone(a.Replicas)
				}
			}
			if q != nil && !req.ValidateOnly {
				// Validated first: only partitions that would be added take quota.
				if e, msg = c.createPartitions(rt.Topic, rt.Count, assignment, true); e == nil && !q.record(int(rt.Count)-c.partitionCount(rt.Topic)) {
					e, msg = errThrottlingQuota, errThrottlingQuota.Description
				}
			}
			if e == nil {
				e, msg = c.createPartitions(rt.Topic, rt.Count, assignment, req.ValidateOnly)
			}
		}
		if e != nil {
			st.ErrorCode = e.Code
			if msg != "" { // Kafka sends none for an unknown topic
				st.ErrorMessage = &msg
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// partitionCount is topic name's number of partitions, 0 if unknown.
func (c *Cluster) partitionCount(name string) int {
	if t := c.topic(name); t != nil {
		return len(t.partitions())
	}
	return 0
}

// maxPartitions is fakekafka's cap on a topic's partition count.
const maxPartitions = 100000

// createPartitions grows topic name to count partitions, the new ones on
// assignment (one replica list per new partition) or placed round robin.
func (c *Cluster) createPartitions(name string, count int32, assignment [][]int32, validateOnly bool) (*kerr.Error, string) {
	c.topicsMu.Lock()
	defer c.topicsMu.Unlock()
	t := c.topic(name)
	if t == nil || t.deleted.Load() {
		return kerr.UnknownTopicOrPartition, "" // Kafka gives no message
	}
	cur := t.partitions()
	have := int32(len(cur))
	switch {
	case count < have:
		return kerr.InvalidPartitions, fmt.Sprintf("The topic %s currently has %d partition(s); %d would not be an increase.", name, have, count)
	case count == have:
		return kerr.InvalidPartitions, fmt.Sprintf("Topic already has %d partition(s).", have)
	case count > maxPartitions:
		return kerr.InvalidPartitions, fmt.Sprintf("%d partitions is above fakekafka's limit of %d", count, maxPartitions)
	}
	cur[0].mu.Lock()
	rf := len(cur[0].st.Replicas())
	cur[0].mu.Unlock()
	if assignment != nil {
		if e, msg := c.checkNewAssignment(count-have, rf, assignment); e != nil {
			return e, msg
		}
	} else {
		if live := len(c.placeableBrokers()); rf > live {
			return kerr.InvalidReplicationFactor, unreplicable(rf, live)
		}
		assignment = c.assign(count, int16(rf))[have:]
	}
	if validateOnly {
		return nil, ""
	}
	rc := c.sharedReplicationConfig(t.cfg().configs)
	now := c.now()
	next := slices.Clip(slices.Clone(cur))
	for i, rs := range assignment {
		next = append(next, c.newPartition(t, have+int32(i), rs, rc, now))
	}
	t.parts.Store(&next)
	for _, p := range next[have:] {
		p.mu.Lock()
		p.markFollowers()
		p.mu.Unlock()
	}
	c.retune()
	c.log.Info("partitions created", "topic", name, "from", have, "to", count)
	c.emit(EventPartitionsCreated, func(e *Event) {
		e.Topic, e.Detail = name, fmt.Sprintf("%d → %d partitions", have, count)
	})
	c.saveMeta() // with --data-dir, the new partitions survive a restart
	return nil, ""
}

// checkNewAssignment checks an explicit placement of n new partitions of
// a topic whose replication factor is rf.
func (c *Cluster) checkNewAssignment(n int32, rf int, assignment [][]int32) (*kerr.Error, string) {
	if int32(len(assignment)) != n {
		return kerr.InvalidReplicaAssignment, fmt.Sprintf("Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", n, len(assignment))
	}
	for _, rs := range assignment {
		if e, msg := c.checkManualAssignment(rs, rf); e != nil {
			return e, msg
		}
	}
	return nil, ""
}

// checkReplicaList checks a replica list of an assignment or a
// reassignment: not empty, known brokers, none twice.
func (c *Cluster) checkReplicaList(rs []int32) (*kerr.Error, string) {
	return c.checkManualAssignment(rs, -1)
}

// CreatePartitions grows a topic to count partitions the way the
// CreatePartitions API does; assignment, if not nil, places the new ones
// (one replica list per new partition). Errors carry Kafka's error.
func (c *Cluster) CreatePartitions(topic string, count int32, assignment [][]int32) error {
	return kafkaError(c.createPartitions(topic, count, assignment, false))
}
