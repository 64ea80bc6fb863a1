package server

// AlterPartitionReassignments (versions 0-1) and ListPartitionReassignments
// (version 0), KIP-455.
//
// Alter: per partition, replicas start a reassignment (or replace the
// target of an ongoing one) and null cancels it (NO_REASSIGNMENT_IN_PROGRESS
// if there is none); an unknown partition is UNKNOWN_TOPIC_OR_PARTITION, an
// empty target, an unknown broker or a broker listed twice
// INVALID_REPLICA_ASSIGNMENT; from v1 with AllowReplicationFactorChange
// false (KIP-860) a target of another size is INVALID_REPLICATION_FACTOR.
// The answer comes once the reassignment has started; the data moves
// afterwards. Any broker answers (Kafka forwards to the controller).
//
// List: every ongoing reassignment (null topics) or those of the listed
// partitions, with the replica set and the replicas being added and
// removed; partitions without one are left out.
//
// Both need the cluster (ALTER, DESCRIBE) with the authorizer; denied,
// the answer is Kafka's error response: CLUSTER_AUTHORIZATION_FAILED at the
// top and, for Alter, on every partition; List echoes the partitions asked
// for without replicas.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleAlterPartitionReassignments(req *kmsg.AlterPartitionAssignmentsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = req.AllowReplicationFactorChange
	allowRF := req.Version < 1 || req.AllowReplicationFactorChange
	denied := !cn.allowedCluster(authorizer.OpAlter)
	if denied {
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth, cn.notAuthorizedMsg()
	}
	for _, rt := range req.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			if denied {
				sp.ErrorCode, sp.ErrorMessage = errClusterAuth, resp.ErrorMessage
			} else if e, msg := c.reassign(rt.Topic, rp.Partition, rp.Replicas, allowRF); e != nil {
				sp.ErrorCode = e.Code
				if msg != "" { // Kafka sends none for some errors
					sp.ErrorMessage = &msg
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (cn *conn) handleListPartitionReassignments(req *kmsg.ListPartitionReassignmentsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !cn.allowedCluster(authorizer.OpDescribe) {
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth, cn.notAuthorizedMsg()
		for _, rt := range req.Topics {
			st := kmsg.NewListPartitionReassignmentsResponseTopic()
			st.Topic = rt.Topic
			for _, index := range rt.Partitions {
				sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
				sp.Partition = index
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	var found []ReassignmentState
	if req.Topics == nil {
		found = c.Reassignments()
	} else {
		for _, rt := range req.Topics {
			for _, index := range rt.Partitions {
				if p := c.partition(rt.Topic, index); p != nil {
					if rs, ok := p.reassignment(); ok {
						found = append(found, rs)
					}
				}
			}
		}
	}
	for _, rs := range found {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != rs.Topic {
			st := kmsg.NewListPartitionReassignmentsResponseTopic()
			st.Topic = rs.Topic
			resp.Topics = append(resp.Topics, st)
		}
		sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		sp.Partition, sp.Replicas, sp.AddingReplicas, sp.RemovingReplicas = rs.Partition, rs.Replicas, rs.AddingReplicas, rs.RemovingReplicas
		st := &resp.Topics[len(resp.Topics)-1]
		st.Partitions = append(st.Partitions, sp)
	}
	return resp, nil
}
