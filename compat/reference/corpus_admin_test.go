package reference

import (
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Admin APIs of the corpus: partitions, reassignments, log dirs, the
// cluster and quorum descriptions, config resources and transaction
// markers. Valid requests at both ends of the common range (adminCase,
// sent in key order with the others), then edge and invalid ones
// (adminEdgeCases). Topic "created-v2" (2 partitions on 3 brokers, made by
// CreateTopics/v2) is the one they grow and try to reassign; the one
// reassignment that happens reorders corpus/2, whose placement, unlike
// created-v2's, is the same on both clusters.

const grown = "created-v2"

func createPartitionsReq(v int16, topic string, count int32, assignment ...[]int32) *kmsg.CreatePartitionsRequest {
	req := at(v, kmsg.NewPtrCreatePartitionsRequest())
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, count
	for _, replicas := range assignment {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = replicas
		rt.Assignment = append(rt.Assignment, a)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// reassignReq moves partition of topic to replicas (nil: cancel).
func reassignReq(v int16, topic string, partition int32, replicas []int32) *kmsg.AlterPartitionAssignmentsRequest {
	req := at(v, kmsg.NewPtrAlterPartitionAssignmentsRequest())
	req.TimeoutMillis = 30000
	req.AllowReplicationFactorChange = true
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = partition, replicas
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func describeLogDirsReq(v int16, topic string, partitions ...int32) *kmsg.DescribeLogDirsRequest {
	req := at(v, kmsg.NewPtrDescribeLogDirsRequest())
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = topic, partitions
	req.Topics = append(req.Topics, rt)
	return req
}

func alterLogDirReq(v int16, dir, topic string, partitions ...int32) *kmsg.AlterReplicaLogDirsRequest {
	req := at(v, kmsg.NewPtrAlterReplicaLogDirsRequest())
	d := kmsg.NewAlterReplicaLogDirsRequestDir()
	d.Dir = dir
	dt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	dt.Topic, dt.Partitions = topic, partitions
	d.Topics = append(d.Topics, dt)
	req.Dirs = append(req.Dirs, d)
	return req
}

// learnLogDir keeps broker 1's log dir, as DescribeLogDirs names it.
func learnLogDir(r *run, e *corpusEnv) {
	if e.logDir != "" {
		return
	}
	resp := r.do(1, describeLogDirsReq(1, "corpus", 0)).(*kmsg.DescribeLogDirsResponse)
	if len(resp.Dirs) != 1 {
		r.Fatalf("%s: broker 1 has %d log dirs, want 1", r.tg.Name(), len(resp.Dirs))
	}
	e.logDir = resp.Dirs[0].Dir
}

func quorumReq(v int16, topic string, partition int32) *kmsg.DescribeQuorumRequest {
	req := at(v, kmsg.NewPtrDescribeQuorumRequest())
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rp.Partition = partition
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func topicPartitionsReq(v int16, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsRequest {
	req := at(v, kmsg.NewPtrDescribeTopicPartitionsRequest())
	req.ResponsePartitionLimit, req.Cursor = limit, cursor
	for _, name := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// markersReq writes an abort (or commit) marker of producer pid to each
// topic's partitions, as a transaction coordinator does.
func markersReq(v int16, pid int64, commit bool, topics map[string][]int32) *kmsg.WriteTxnMarkersRequest {
	req := at(v, kmsg.NewPtrWriteTxnMarkersRequest())
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, 0, commit, 0
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = name, topics[name]
		m.Topics = append(m.Topics, mt)
	}
	req.Markers = append(req.Markers, m)
	return req
}

// adminCase is the valid request of the admin APIs at version v, or false.
func adminCase(key, v int16, oldest bool) (corpusCase, bool) {
	c := corpusCase{name: fmt.Sprintf("%s/v%d", kmsg.NameForKey(key), v)}
	switch kmsg.Key(key) {
	case kmsg.WriteTxnMarkers:
		// The oldest writes nowhere (an unknown topic and partition); the
		// newest an abort marker of a producer the partition never saw.
		c.req = func(*corpusEnv) kmsg.Request {
			if oldest {
				return markersReq(v, 4242, false, map[string][]int32{"no-such-topic": {0}, "corpus": {9}})
			}
			return markersReq(v, 4242, false, map[string][]int32{"corpus": {2}})
		}
	case kmsg.AlterReplicaLogDirs:
		// To the dir the replica is in already (nothing to move), then to
		// a dir the broker does not have.
		c.settle = learnLogDir
		c.req = func(e *corpusEnv) kmsg.Request {
			if oldest {
				return alterLogDirReq(v, e.logDir, "corpus", 0)
			}
			return alterLogDirReq(v, "/no/such/dir", "corpus", 1)
		}
	case kmsg.DescribeLogDirs:
		c.req = func(*corpusEnv) kmsg.Request { return describeLogDirsReq(v, "corpus", 0, 1, 2) }
	case kmsg.CreatePartitions:
		// 2 -> 3 partitions with the controller's placement, then 3 -> 4
		// with an explicit one.
		c.req = func(*corpusEnv) kmsg.Request {
			if oldest {
				return createPartitionsReq(v, grown, 3)
			}
			return createPartitionsReq(v, grown, 4, []int32{3, 1, 2})
		}
	case kmsg.AlterPartitionAssignments:
		// The same replicas in another order (nothing to copy, so it
		// completes at once; DescribeTopicPartitions shows the result),
		// then a cancel with nothing to cancel.
		c.req = func(*corpusEnv) kmsg.Request {
			if oldest {
				return reassignReq(v, "corpus", 2, []int32{3, 2, 1})
			}
			return reassignReq(v, grown, 1, nil)
		}
	case kmsg.ListPartitionReassignments:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrListPartitionReassignmentsRequest())
			req.TimeoutMillis = 30000
			return req
		}
	case kmsg.DescribeQuorum:
		c.req = func(*corpusEnv) kmsg.Request { return quorumReq(v, "__cluster_metadata", 0) }
	case kmsg.DescribeCluster:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeClusterRequest())
			req.EndpointType, req.IncludeFencedBrokers = 1, true
			return req
		}
	case kmsg.ListConfigResources:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrListConfigResourcesRequest())
			if v >= 1 {
				req.ResourceTypes = []int8{4, 8} // BROKER, BROKER_LOGGER
			}
			return req
		}
	case kmsg.DescribeTopicPartitions:
		// Only topics placed explicitly: Kafka's controller places the
		// others from a random start.
		c.settle = reassigned
		c.req = func(*corpusEnv) kmsg.Request { return topicPartitionsReq(v, 2000, nil, "corpus") }
	default:
		return securityCase(key, v, oldest)
	}
	return c, true
}

// adminEdgeCases are the admin APIs' edge and invalid requests, at the
// newest common version.
func adminEdgeCases(latest func(kmsg.Key) int16) []corpusCase {
	cp, ra := latest(kmsg.CreatePartitions), latest(kmsg.AlterPartitionAssignments)
	ld, tp := latest(kmsg.DescribeLogDirs), latest(kmsg.DescribeTopicPartitions)
	cases := []corpusCase{
		{name: "FindCoordinator/v3", req: func(*corpusEnv) kmsg.Request {
			req := at(3, kmsg.NewPtrFindCoordinatorRequest()) // the last with one key and a top-level answer
			req.CoordinatorKey = "cg"
			return req
		}},
		{name: "CreatePartitions/count-not-above-current", req: func(*corpusEnv) kmsg.Request { return createPartitionsReq(cp, "corpus", 3) }},
		{name: "CreatePartitions/count-below-current", req: func(*corpusEnv) kmsg.Request { return createPartitionsReq(cp, "corpus", 2) }},
		{name: "CreatePartitions/unknown-topic", req: func(*corpusEnv) kmsg.Request { return createPartitionsReq(cp, "no-such-topic", 4) }},
		{name: "CreatePartitions/assignment-missing-broker", req: func(*corpusEnv) kmsg.Request {
			return createPartitionsReq(cp, grown, 5, []int32{1, 2, 9})
		}},
		{name: "CreatePartitions/assignment-wrong-replica-count", req: func(*corpusEnv) kmsg.Request {
			return createPartitionsReq(cp, grown, 5, []int32{1, 2})
		}},
		{name: "CreatePartitions/assignment-repeats-a-broker", req: func(*corpusEnv) kmsg.Request {
			return createPartitionsReq(cp, grown, 5, []int32{1, 1, 2})
		}},
		{name: "CreatePartitions/too-few-assignments", req: func(*corpusEnv) kmsg.Request {
			return createPartitionsReq(cp, grown, 6, []int32{1, 2, 3})
		}},
		{name: "CreatePartitions/same-topic-twice", req: func(*corpusEnv) kmsg.Request {
			req := createPartitionsReq(cp, grown, 5)
			req.Topics = append(req.Topics, req.Topics[0])
			return req
		}},
		{name: "CreatePartitions/validate-only", req: func(*corpusEnv) kmsg.Request {
			req := createPartitionsReq(cp, grown, 8)
			req.ValidateOnly = true
			return req
		}},
		{name: "CreatePartitions/internal-topic-validate-only", req: func(*corpusEnv) kmsg.Request {
			req := createPartitionsReq(cp, "__consumer_offsets", 5) // allowed; only validated, so coordinators stay put
			req.ValidateOnly = true
			return req
		}},
		{name: "Metadata/after-create-partitions", settle: waitPartitions(grown, 4), req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.Metadata), kmsg.NewPtrMetadataRequest())
			req.Topics = []kmsg.MetadataRequestTopic{topicReq(grown)}
			return req
		}, placed: true},
		{name: "AlterPartitionAssignments/missing-broker", req: func(*corpusEnv) kmsg.Request {
			return reassignReq(ra, grown, 2, []int32{1, 2, 9})
		}},
		{name: "AlterPartitionAssignments/repeats-a-broker", req: func(*corpusEnv) kmsg.Request {
			return reassignReq(ra, grown, 2, []int32{1, 1, 2})
		}},
		{name: "AlterPartitionAssignments/no-replicas", req: func(*corpusEnv) kmsg.Request {
			return reassignReq(ra, grown, 2, []int32{})
		}},
		{name: "AlterPartitionAssignments/unknown-topic", req: func(*corpusEnv) kmsg.Request {
			return reassignReq(ra, "no-such-topic", 0, []int32{1, 2, 3})
		}},
		{name: "AlterPartitionAssignments/partition-out-of-range", req: func(*corpusEnv) kmsg.Request {
			return reassignReq(ra, grown, 9, []int32{1, 2, 3})
		}},
		{name: "AlterPartitionAssignments/replication-factor-change-not-allowed", req: func(*corpusEnv) kmsg.Request {
			req := reassignReq(ra, grown, 2, []int32{1, 2})
			req.AllowReplicationFactorChange = false
			return req
		}},
		{name: "ListPartitionReassignments/named-partitions", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.ListPartitionReassignments), kmsg.NewPtrListPartitionReassignmentsRequest())
			req.TimeoutMillis = 30000
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic, rt.Partitions = grown, []int32{0, 1, 9}
			req.Topics = append(req.Topics, rt)
			return req
		}},
		{name: "DescribeLogDirs/unknown-topic", req: func(*corpusEnv) kmsg.Request {
			return describeLogDirsReq(ld, "no-such-topic", 0)
		}},
		{name: "DescribeLogDirs/partition-out-of-range", req: func(*corpusEnv) kmsg.Request {
			return describeLogDirsReq(ld, "corpus", 9)
		}},
		{name: "AlterReplicaLogDirs/unknown-topic", settle: learnLogDir, req: func(e *corpusEnv) kmsg.Request {
			return alterLogDirReq(latest(kmsg.AlterReplicaLogDirs), e.logDir, "no-such-topic", 0)
		}},
		{name: "AlterReplicaLogDirs/relative-dir", req: func(*corpusEnv) kmsg.Request {
			return alterLogDirReq(latest(kmsg.AlterReplicaLogDirs), "data", "corpus", 0)
		}},
		{name: "DescribeTopicPartitions/unknown-topic", req: func(*corpusEnv) kmsg.Request {
			return topicPartitionsReq(tp, 2000, nil, "no-such-topic")
		}},
		{name: "DescribeTopicPartitions/invalid-topic-name", req: func(*corpusEnv) kmsg.Request {
			return topicPartitionsReq(tp, 2000, nil, "bad/name")
		}},
		{name: "DescribeTopicPartitions/partition-limit", req: func(*corpusEnv) kmsg.Request {
			return topicPartitionsReq(tp, 2, nil, "corpus", "no-such-topic")
		}},
		{name: "DescribeTopicPartitions/from-cursor", req: func(*corpusEnv) kmsg.Request {
			return topicPartitionsReq(tp, 2000, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "corpus", Partition: 2}, "corpus", "no-such-topic")
		}},
		{name: "DescribeTopicPartitions/cursor-topic-not-requested", req: func(*corpusEnv) kmsg.Request {
			return topicPartitionsReq(tp, 2000, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b-topic", Partition: 0}, "corpus", "no-such-topic")
		}},
		{name: "DescribeTopicPartitions/cursor-negative-partition", req: func(*corpusEnv) kmsg.Request {
			return topicPartitionsReq(tp, 2000, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "corpus", Partition: -1}, "corpus")
		}},
		{name: "DescribeTopicPartitions/all-topics", placed: true, req: func(*corpusEnv) kmsg.Request {
			return topicPartitionsReq(tp, 2000, nil)
		}},
		{name: "DescribeQuorum/unknown-partition", req: func(*corpusEnv) kmsg.Request {
			return quorumReq(latest(kmsg.DescribeQuorum), "__cluster_metadata", 1)
		}},
		{name: "DescribeQuorum/other-topic", req: func(*corpusEnv) kmsg.Request {
			return quorumReq(latest(kmsg.DescribeQuorum), "corpus", 0)
		}},
		{name: "DescribeCluster/controller-endpoints", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeCluster), kmsg.NewPtrDescribeClusterRequest())
			req.EndpointType = 2
			return req
		}},
		{name: "DescribeCluster/authorized-operations", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeCluster), kmsg.NewPtrDescribeClusterRequest())
			req.IncludeClusterAuthorizedOperations = true
			return req
		}},
		{name: "ListConfigResources/topics-and-groups", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.ListConfigResources), kmsg.NewPtrListConfigResourcesRequest())
			req.ResourceTypes = []int8{2, 32} // TOPIC, GROUP
			return req
		}},
		{name: "ListConfigResources/every-type", req: func(*corpusEnv) kmsg.Request {
			return at(latest(kmsg.ListConfigResources), kmsg.NewPtrListConfigResourcesRequest())
		}},
		{name: "ListConfigResources/unknown-type", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.ListConfigResources), kmsg.NewPtrListConfigResourcesRequest())
			req.ResourceTypes = []int8{1}
			return req
		}},
		{name: "WriteTxnMarkers/commit-without-transaction", req: func(*corpusEnv) kmsg.Request {
			return markersReq(latest(kmsg.WriteTxnMarkers), 4243, true, map[string][]int32{"corpus": {2}})
		}},
		{name: "ListOffsets/after-markers", req: func(*corpusEnv) kmsg.Request {
			return listOffsetsReq(latest(kmsg.ListOffsets), "corpus", 2, -1)
		}},
	}
	return cases
}

// reassigned waits until broker 1's metadata shows corpus/2 on [3 2 1], as
// AlterPartitionAssignments/v0 left it: Kafka's broker learns it from the
// controller.
func reassigned(r *run, _ *corpusEnv) {
	r.waitFor("corpus/2 on [3 2 1]", func() bool {
		m := kmsg.NewPtrMetadataRequest()
		m.SetVersion(12)
		m.Topics = []kmsg.MetadataRequestTopic{topicReq("corpus")}
		for _, t := range r.do(1, m).(*kmsg.MetadataResponse).Topics {
			for _, p := range t.Partitions {
				if p.Partition == 2 {
					return slices.Equal(p.Replicas, []int32{3, 2, 1})
				}
			}
		}
		return false
	})
}

// waitPartitions waits until broker 1's metadata has n partitions of topic,
// each with a leader: Kafka's broker learns them from the controller.
func waitPartitions(topic string, n int) func(*run, *corpusEnv) {
	return func(r *run, _ *corpusEnv) {
		r.waitFor(fmt.Sprintf("%d partitions of %s", n, topic), func() bool {
			m := kmsg.NewPtrMetadataRequest()
			m.SetVersion(12)
			m.Topics = []kmsg.MetadataRequestTopic{topicReq(topic)}
			ts := r.do(1, m).(*kmsg.MetadataResponse).Topics
			if len(ts) != 1 || len(ts[0].Partitions) != n {
				return false
			}
			for _, p := range ts[0].Partitions {
				if p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
					return false
				}
			}
			return true
		})
	}
}
