package server

// DescribeTopicPartitions, version 0 (KIP-966): Metadata's topic and
// partition view, paged, which Kafka 3.8+ admin clients use to describe
// topics.
//
// An empty topic list means every topic; listed topics that do not exist
// get UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal
// name), with their authorized operations as Kafka fills them in. Topics are
// answered sorted by name, starting at the cursor (with every topic, at the
// first name not before its topic; otherwise its topic must be among those
// requested, and its partition not negative, else INVALID_REQUEST for every
// requested topic, as Kafka's error answer has it). At most
// ResponsePartitionLimit partitions are returned (capped at Kafka's
// max.request.partition.size.limit, 2000); when partitions remain, NextCursor
// names the first one left out. Per partition as Metadata reports it
// (KRaftMetadataCache): a leader that is -1 or down is LEADER_NOT_AVAILABLE
// with leader -1; replicas in assignment order (including those a
// reassignment is adding or removing), the ISR and the offline replicas.
// fakekafka keeps no eligible leader replicas, so ELR and LastKnownELR are
// empty.

import (
	"maps"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxDescribePartitions is max.request.partition.size.limit's default.
const maxDescribePartitions = 2000

func (cn *conn) handleDescribeTopicPartitions(req *kmsg.DescribeTopicPartitionsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	byName := c.topics.Load().byName
	var names []string
	if len(req.Topics) == 0 {
		names = slices.Sorted(maps.Keys(byName))
	} else {
		for _, rt := range req.Topics {
			names = append(names, rt.Topic)
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	var first int32
	if cur := req.Cursor; cur != nil {
		i, found := slices.BinarySearch(names, cur.Topic)
		if (!found && len(req.Topics) > 0) || cur.Partition < 0 {
			// Kafka throws (the cursor's topic must be requested, its
			// partition not negative); its error answer gives every
			// requested topic the error.
			for _, rt := range req.Topics {
				st := kmsg.NewDescribeTopicPartitionsResponseTopic()
				st.Topic, st.ErrorCode = kmsg.StringPtr(rt.Topic), kerr.InvalidRequest.Code
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil
		}
		names = names[i:]
		if found {
			first = cur.Partition
		}
	}
	limit := int(req.ResponsePartitionLimit)
	if limit <= 0 || limit > maxDescribePartitions {
		limit = maxDescribePartitions
	}
	for i, name := range names {
		st := kmsg.NewDescribeTopicPartitionsResponseTopic()
		st.Topic = kmsg.StringPtr(name)
		if !cn.authorize(authorizer.OpDescribe, authorizer.ResourceTopic, name, len(req.Topics) > 0) {
			// As Metadata: hidden when listing all, an error when named.
			if len(req.Topics) > 0 {
				st.ErrorCode = errTopicAuth
				resp.Topics = append(resp.Topics, st)
			}
			continue
		}
		// Kafka fills in the authorized operations of every topic it
		// answers, existing or not.
		st.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceTopic, name)
		t := byName[name]
		if t == nil {
			st.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if legalTopicName(name) != nil {
				st.ErrorCode = kerr.InvalidTopicException.Code
			}
			resp.Topics = append(resp.Topics, st)
			continue
		}
		st.TopicID, st.IsInternal = t.id, isInternalTopic(name)
		parts := t.partitions()
		if i > 0 {
			first = 0
		}
		for _, p := range parts[min(int(first), len(parts)):] {
			if limit == 0 {
				resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: p.index}
				break
			}
			st.Partitions = append(st.Partitions, cn.describePartition(p))
			limit--
		}
		resp.Topics = append(resp.Topics, st)
		if resp.NextCursor != nil {
			break
		}
		if limit == 0 && i+1 < len(names) {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: names[i+1], Partition: 0}
			break
		}
	}
	return resp, nil
}

// describePartition is p as this broker's metadata shows it.
func (cn *conn) describePartition(p *partition) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	c := cn.b.c
	up := func(id int32) bool {
		b := c.broker(id)
		return b != nil && b.registered()
	}
	sp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	sp.Partition = p.index
	p.mu.Lock()
	leader, epoch, isr := p.st.View(cn.b.id)
	if p.st.Replica(leader) == nil || !up(leader) {
		leader = -1
	}
	sp.Replicas = replicaList(p.st)
	p.mu.Unlock()
	sp.LeaderID, sp.LeaderEpoch, sp.ISR = leader, epoch, orEmpty(isr)
	if leader < 0 {
		sp.ErrorCode = kerr.LeaderNotAvailable.Code
	}
	sp.Replicas = orEmpty(sp.Replicas)
	sp.OfflineReplicas = orEmpty(slices.DeleteFunc(slices.Clone(sp.Replicas), up))
	sp.EligibleLeaderReplicas, sp.LastKnownELR = []int32{}, []int32{}
	return sp
}
