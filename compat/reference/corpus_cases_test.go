package reference

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// corpusCases is every request of the corpus in the order sent (later ones
// see the state earlier ones left, identically on both clusters): each API
// both serve at its oldest and newest common version, then edge and invalid
// requests at the newest, then every version in between.
func corpusCases(versions map[int16][2]int16) []corpusCase {
	var keys []int16
	for k := range versions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []corpusCase
	for _, k := range keys {
		vr := versions[k]
		if vr[0] > vr[1] {
			continue
		}
		for _, v := range slices.Compact([]int16{vr[0], vr[1]}) {
			if c, ok := validCase(k, v); ok {
				out = append(out, c)
			} else if c, ok := adminCase(k, v, v == vr[0]); ok {
				out = append(out, c)
			} else if c, ok := wireKeysCase(k, v, v == vr[0]); ok { // corpus_wire_keys_test.go
				out = append(out, c)
			}
		}
	}
	latest := func(k kmsg.Key) int16 { return versions[k.Int16()][1] }
	out = append(out, edgeCases(latest)...)
	out = append(out, adminEdgeCases(latest)...)
	out = append(out, logSizeCases(latest)...)
	out = append(out, securityEdgeCases(latest)...)
	out = append(out, txnCases(versions)...)
	out = append(out, kip360Cases(versions)...)
	out = append(out, fetchSessionCases(versions)...)
	out = append(out, consumerGroupCases(versions)...)
	out = append(out, shareCases(versions)...)
	out = append(out, migrationCases(versions)...)
	out = append(out, streamsGroupCases(versions)...)
	out = append(out, wireKeysEdgeCases(latest)...)
	out = append(out, shareCorpusCases(versions)...)
	out = append(out, versionCases(versions)...)
	out = append(out, errorPathCases(versions)...)
	out = append(out, middleVersionCases(versions)...)
	// The cordon cases after the topics the sweep creates (a cordoned
	// broker changes where topics may be placed; they delete the config
	// again), and the admin cases last: their final ElectLeaders moves a
	// leader of "corpus".
	out = append(out, cordonCases(versions)...)
	out = append(out, admin2Cases(versions)...)
	// Produce/Fetch details last: their topics must not slow what the
	// others time.
	return append(out, prodFetchCases(versions)...)
}

// at sets the version on a request and returns it.
func at[R kmsg.Request](v int16, r R) R { r.SetVersion(v); return r }

func topicReq(name string) kmsg.MetadataRequestTopic {
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(name)
	return t
}

func produceReq(v int16, topic string, partition int32, acks int16, records []byte) *kmsg.ProduceRequest {
	req := at(v, kmsg.NewPtrProduceRequest())
	req.Acks, req.TimeoutMillis = acks, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func fetchReq(v int16, e *corpusEnv, topic string, partition int32, offset int64) *kmsg.FetchRequest {
	req := at(v, kmsg.NewPtrFetchRequest())
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = -1, 0, 1, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	if topic == "corpus" {
		rt.TopicID = e.topicID
	}
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = partition, offset, 1<<20, -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func listOffsetsReq(v int16, topic string, partition int32, ts int64) *kmsg.ListOffsetsRequest {
	req := at(v, kmsg.NewPtrListOffsetsRequest())
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch, rp.MaxNumOffsets = partition, ts, -1, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func createTopicReq(v int16, name string, partitions int32, rf int16, configs map[string]string) *kmsg.CreateTopicsRequest {
	req := at(v, kmsg.NewPtrCreateTopicsRequest())
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	var keys []string
	for k := range configs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(configs[k])
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func describeConfigsReq(v int16, typ kmsg.ConfigResourceType, name string, keys ...string) *kmsg.DescribeConfigsRequest {
	req := at(v, kmsg.NewPtrDescribeConfigsRequest())
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, keys
	req.Resources = append(req.Resources, rr)
	return req
}

func alterConfigsReq(v int16, topic string, kv ...string) *kmsg.AlterConfigsRequest {
	req := at(v, kmsg.NewPtrAlterConfigsRequest())
	rr := kmsg.NewAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	for i := 0; i+1 < len(kv); i += 2 {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[i], kmsg.StringPtr(kv[i+1])
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	return req
}

func incAlterConfigsReq(v int16, topic, name, value string) *kmsg.IncrementalAlterConfigsRequest {
	req := at(v, kmsg.NewPtrIncrementalAlterConfigsRequest())
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = name, kmsg.StringPtr(value)
	rr.Configs = append(rr.Configs, c)
	req.Resources = append(req.Resources, rr)
	return req
}

func offsetFetchReq(v int16, group string) *kmsg.OffsetFetchRequest {
	req := at(v, kmsg.NewPtrOffsetFetchRequest())
	req.Group = group
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "corpus", []int32{0, 1}
	req.Topics = append(req.Topics, rt)
	if v >= 8 {
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = group
		gt := kmsg.NewOffsetFetchRequestGroupTopic()
		gt.Topic, gt.Partitions = "corpus", []int32{0, 1}
		g.Topics = append(g.Topics, gt)
		req.Groups = append(req.Groups, g)
	}
	return req
}

func simpleBatch(values ...string) []byte { return simpleBatchWith(-1, -1, -1, 0, values...) }

// simpleBatchWith is a batch of values with a fixed timestamp, from
// producer pid (-1: none) with the given attributes.
func simpleBatchWith(pid int64, epoch int16, seq int32, attrs int16, values ...string) []byte {
	recs := make([]protocol.Record, len(values))
	for i, v := range values {
		recs[i] = protocol.Record{Value: []byte(v)}
	}
	b, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Attributes: attrs, BaseTimestamp: 1700000000000}, protocol.CodecNone, recs)
	if err != nil {
		panic(err)
	}
	return b
}

// validCase is a well-formed request for API key at version v, or false
// for an API the corpus leaves to the scenarios.
func validCase(key, v int16) (corpusCase, bool) {
	name := fmt.Sprintf("%s/v%d", kmsg.NameForKey(key), v)
	c := corpusCase{name: name}
	switch kmsg.Key(key) {
	case kmsg.Produce:
		c.req = func(*corpusEnv) kmsg.Request {
			return produceReq(v, "corpus", 1, -1, simpleBatch("p"+fmt.Sprint(v), "q"))
		}
	case kmsg.Fetch:
		c.req = func(e *corpusEnv) kmsg.Request { return fetchReq(v, e, "corpus", 0, 3) }
	case kmsg.ListOffsets:
		c.req = func(*corpusEnv) kmsg.Request { return listOffsetsReq(v, "corpus", 0, -1) }
	case kmsg.Metadata:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrMetadataRequest())
			req.Topics = []kmsg.MetadataRequestTopic{topicReq("corpus")}
			return req
		}
	case kmsg.OffsetCommit:
		c.group = "cg-empty"
		c.req = func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrOffsetCommitRequest())
			defer withCorpusIDs(e, req)
			req.Group, req.Generation, req.RetentionTimeMillis = "cg-empty", -1, -1
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.Metadata = 1, int64(v), kmsg.StringPtr("m")
			rp.LeaderEpoch = -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}
	case kmsg.OffsetFetch:
		c.group = "cg-empty"
		c.req = func(e *corpusEnv) kmsg.Request { return withCorpusIDs(e, offsetFetchReq(v, "cg-empty")) }
	case kmsg.FindCoordinator:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrFindCoordinatorRequest())
			req.CoordinatorKey, req.CoordinatorKeys = "cg", []string{"cg"}
			return req
		}
	case kmsg.ListGroups:
		c.group = "cg" // each coordinator lists its own groups
		c.req = func(*corpusEnv) kmsg.Request { return at(v, kmsg.NewPtrListGroupsRequest()) }
	case kmsg.DescribeGroups:
		c.group = "cg-empty"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{"cg-empty"}
			return req
		}
	case kmsg.JoinGroup:
		c.group = "cg"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrJoinGroupRequest())
			req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = "cg", 6000, 6000, "consumer"
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name, p.Metadata = "range", []byte{0, 1}
			req.Protocols = append(req.Protocols, p)
			return req
		}
	case kmsg.Heartbeat:
		c.group = "cg"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrHeartbeatRequest())
			req.Group, req.Generation, req.MemberID = "cg", 1, "nobody"
			return req
		}
	case kmsg.LeaveGroup:
		c.group = "cg"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrLeaveGroupRequest())
			req.Group, req.MemberID = "cg", "nobody"
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID = "nobody"
			req.Members = append(req.Members, m)
			return req
		}
	case kmsg.SyncGroup:
		c.group = "cg"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrSyncGroupRequest())
			req.Group, req.Generation, req.MemberID = "cg", 1, "nobody"
			req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
			return req
		}
	case kmsg.ApiVersions:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrApiVersionsRequest())
			req.ClientSoftwareName, req.ClientSoftwareVersion = "reference", "1"
			return req
		}
	case kmsg.CreateTopics:
		c.req = func(*corpusEnv) kmsg.Request {
			return createTopicReq(v, fmt.Sprintf("created-v%d", v), 2, 3, map[string]string{"retention.ms": "60000"})
		}
	case kmsg.DeleteTopics:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDeleteTopicsRequest())
			req.TimeoutMillis = 30000
			name := "created-v7" // made by CreateTopics above; the second gets UNKNOWN_TOPIC_OR_PARTITION
			req.TopicNames = []string{name}
			t := kmsg.NewDeleteTopicsRequestTopic()
			t.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, t)
			return req
		}
	case kmsg.DeleteRecords:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDeleteRecordsRequest())
			req.TimeoutMillis = 10000
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Partition, rp.Offset = 2, 0
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}
	case kmsg.InitProducerID:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrInitProducerIDRequest())
			req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
			return req
		}
	case kmsg.OffsetForLeaderEpoch:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrOffsetForLeaderEpochRequest())
			req.ReplicaID = -1
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = "corpus"
			for _, epoch := range []int32{0, 5} {
				rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
				rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = epoch/5, -1, epoch
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			return req
		}
	case kmsg.DescribeConfigs:
		c.req = func(*corpusEnv) kmsg.Request {
			return describeConfigsReq(v, kmsg.ConfigResourceTypeTopic, "corpus", "min.insync.replicas", "retention.ms", "cleanup.policy")
		}
	case kmsg.AlterConfigs:
		c.req = func(*corpusEnv) kmsg.Request { return alterConfigsReq(v, "corpus", "retention.ms", "86400000") }
	case kmsg.DeleteGroups:
		c.group = "cg-empty"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDeleteGroupsRequest())
			req.Groups = []string{"no-such-group"}
			return req
		}
	case kmsg.ElectLeaders:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrElectLeadersRequest())
			req.TimeoutMillis = 10000
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic, rt.Partitions = "corpus", []int32{0}
			req.Topics = append(req.Topics, rt)
			return req
		}
	case kmsg.IncrementalAlterConfigs:
		c.req = func(*corpusEnv) kmsg.Request { return incAlterConfigsReq(v, "corpus", "retention.ms", "7200000") }
	case kmsg.OffsetDelete:
		c.group = "cg-empty"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrOffsetDeleteRequest())
			req.Group = "cg-empty"
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rp.Partition = 1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}
	case kmsg.ConsumerGroupDescribe:
		c.group = "cg-empty"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrConsumerGroupDescribeRequest())
			req.Groups = []string{"cg-empty", "no-such-group"}
			return req
		}
	default:
		// ConsumerGroupHeartbeat and the rest: covered by scenarios, or
		// stateful in ways a one-shot request cannot compare.
		return c, false
	}
	return c, true
}

// edgeCases are edge and invalid requests at the newest common version.
func edgeCases(latest func(kmsg.Key) int16) []corpusCase {
	pv, fv, lv := latest(kmsg.Produce), latest(kmsg.Fetch), latest(kmsg.ListOffsets)
	cv, mv := latest(kmsg.CreateTopics), latest(kmsg.Metadata)
	corrupt := simpleBatch("c")
	corrupt[len(corrupt)-1] ^= 0xff // the CRC no longer matches
	huge := simpleBatch(strings.Repeat("x", 1100000))
	cases := []corpusCase{
		{name: "ApiVersions/newer-than-both", req: func(*corpusEnv) kmsg.Request {
			req := at(kmsg.NewPtrApiVersionsRequest().MaxVersion()+1, kmsg.NewPtrApiVersionsRequest())
			req.ClientSoftwareName, req.ClientSoftwareVersion = "reference", "1"
			return req
		}},
		{name: "ApiVersions/truncated-body", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.ApiVersions), kmsg.NewPtrApiVersionsRequest())
			req.ClientSoftwareName, req.ClientSoftwareVersion = "reference-corpus", "1"
			return truncated{req, 3} // the name's length, then 2 of its 16 bytes
		}},
		{name: "Metadata/unknown-topic", req: func(*corpusEnv) kmsg.Request {
			req := at(mv, kmsg.NewPtrMetadataRequest())
			req.Topics = []kmsg.MetadataRequestTopic{topicReq("no-such-topic")}
			return req
		}},
		{name: "Metadata/invalid-topic-name", req: func(*corpusEnv) kmsg.Request {
			req := at(mv, kmsg.NewPtrMetadataRequest())
			req.Topics = []kmsg.MetadataRequestTopic{topicReq("bad/name")}
			return req
		}},
		{name: "Produce/unknown-topic", req: func(*corpusEnv) kmsg.Request {
			return produceReq(pv, "no-such-topic", 0, -1, simpleBatch("u"))
		}},
		{name: "Produce/partition-out-of-range", req: func(*corpusEnv) kmsg.Request {
			return produceReq(pv, "corpus", 9, -1, simpleBatch("u"))
		}},
		{name: "Produce/acks-2", req: func(*corpusEnv) kmsg.Request { return produceReq(pv, "corpus", 1, 2, simpleBatch("u")) }},
		{name: "Produce/corrupt-crc", req: func(*corpusEnv) kmsg.Request { return produceReq(pv, "corpus", 1, 1, corrupt) }},
		{name: "Produce/oversize-batch", req: func(*corpusEnv) kmsg.Request { return produceReq(pv, "corpus", 1, 1, huge) }},
		{name: "Fetch/offset-past-leo", req: func(e *corpusEnv) kmsg.Request { return fetchReq(fv, e, "corpus", 0, 100) }},
		{name: "Fetch/at-hw", req: func(e *corpusEnv) kmsg.Request { return fetchReq(fv, e, "corpus", 0, 10) }},
		{name: "Fetch/partition-out-of-range", req: func(e *corpusEnv) kmsg.Request { return fetchReq(fv, e, "corpus", 9, 0) }},
		{name: "Fetch/unknown-topic-id", req: func(e *corpusEnv) kmsg.Request {
			req := fetchReq(fv, e, "corpus", 0, 0)
			req.Topics[0].TopicID = [16]byte{1, 2, 3}
			return req
		}},
		{name: "ListOffsets/earliest", req: func(*corpusEnv) kmsg.Request { return listOffsetsReq(lv, "corpus", 0, -2) }},
		{name: "ListOffsets/by-timestamp", req: func(*corpusEnv) kmsg.Request { return listOffsetsReq(lv, "corpus", 0, 1700000000000) }},
		{name: "ListOffsets/max-timestamp", req: func(*corpusEnv) kmsg.Request { return listOffsetsReq(lv, "corpus", 0, -3) }},
		{name: "ListOffsets/unknown-partition", req: func(*corpusEnv) kmsg.Request { return listOffsetsReq(lv, "corpus", 9, -1) }},
		{name: "CreateTopics/rf-above-brokers", req: func(*corpusEnv) kmsg.Request { return createTopicReq(cv, "rf4", 1, 4, nil) }},
		{name: "CreateTopics/zero-partitions", req: func(*corpusEnv) kmsg.Request { return createTopicReq(cv, "p0", 0, 1, nil) }},
		{name: "CreateTopics/exists", req: func(*corpusEnv) kmsg.Request { return createTopicReq(cv, "corpus", 1, 1, nil) }},
		{name: "CreateTopics/bad-config", req: func(*corpusEnv) kmsg.Request {
			return createTopicReq(cv, "badcfg", 1, 1, map[string]string{"min.insync.replicas": "abc"})
		}},
		{name: "CreateTopics/unknown-config", req: func(*corpusEnv) kmsg.Request {
			return createTopicReq(cv, "unknowncfg", 1, 1, map[string]string{"no.such.config": "1"})
		}},
		{name: "CreateTopics/assignment-repeats-a-partition", req: func(*corpusEnv) kmsg.Request {
			req := createTopicReq(cv, "dup-assignment", -1, -1, nil)
			for range 2 {
				a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				a.Partition, a.Replicas = 0, []int32{1, 2}
				req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
			}
			return req
		}},
		{name: "CreateTopics/assignment-repeats-a-broker", req: func(*corpusEnv) kmsg.Request {
			req := createTopicReq(cv, "dup-broker", -1, -1, nil)
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = 0, []int32{1, 1}
			req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
			return req
		}},
		{name: "CreateTopics/invalid-name", req: func(*corpusEnv) kmsg.Request { return createTopicReq(cv, "bad/name", 1, 1, nil) }},
		{name: "CreateTopics/validate-only", req: func(*corpusEnv) kmsg.Request {
			req := createTopicReq(cv, "validated", 4, 2, nil)
			req.ValidateOnly = true
			return req
		}},
		{name: "DeleteRecords/past-hw", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DeleteRecords), kmsg.NewPtrDeleteRecordsRequest())
			req.TimeoutMillis = 10000
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Partition, rp.Offset = 0, 50
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}},
		{name: "DescribeConfigs/unknown-topic", req: func(*corpusEnv) kmsg.Request {
			return describeConfigsReq(latest(kmsg.DescribeConfigs), kmsg.ConfigResourceTypeTopic, "no-such-topic")
		}},
		{name: "DescribeConfigs/broker", req: func(*corpusEnv) kmsg.Request {
			return describeConfigsReq(latest(kmsg.DescribeConfigs), kmsg.ConfigResourceTypeBroker, "1",
				"min.insync.replicas", "default.replication.factor", "num.partitions", "message.max.bytes", "unclean.leader.election.enable")
		}},
		{name: "IncrementalAlterConfigs/bad-value", req: func(*corpusEnv) kmsg.Request {
			return incAlterConfigsReq(latest(kmsg.IncrementalAlterConfigs), "corpus", "min.insync.replicas", "abc")
		}},
		{name: "IncrementalAlterConfigs/unknown-name", req: func(*corpusEnv) kmsg.Request {
			return incAlterConfigsReq(latest(kmsg.IncrementalAlterConfigs), "corpus", "no.such.config", "1")
		}},
		{name: "AlterConfigs/unknown-topic", req: func(*corpusEnv) kmsg.Request {
			return alterConfigsReq(latest(kmsg.AlterConfigs), "no-such-topic", "retention.ms", "1")
		}},
		{name: "ElectLeaders/unclean-not-needed", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.ElectLeaders), kmsg.NewPtrElectLeadersRequest())
			req.TimeoutMillis, req.ElectionType = 10000, 1
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic, rt.Partitions = "corpus", []int32{0, 9}
			req.Topics = append(req.Topics, rt)
			return req
		}},
		{name: "OffsetFetch/unknown-group", group: "no-such-group", req: func(e *corpusEnv) kmsg.Request {
			return withCorpusIDs(e, offsetFetchReq(latest(kmsg.OffsetFetch), "no-such-group"))
		}},
		{name: "JoinGroup/bad-session-timeout", group: "cg", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.JoinGroup), kmsg.NewPtrJoinGroupRequest())
			req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = "cg", 10, 6000, "consumer"
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name = "range"
			req.Protocols = append(req.Protocols, p)
			return req
		}},
		{name: "OffsetForLeaderEpoch/unknown-partition", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.OffsetForLeaderEpoch), kmsg.NewPtrOffsetForLeaderEpochRequest())
			req.ReplicaID = -1
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = "corpus"
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 9, -1, 0
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			return req
		}},
	}
	return cases
}

// truncated is a request whose body is cut after n bytes: one no broker
// can parse (Kafka closes the connection).
type truncated struct {
	kmsg.Request
	n int
}

func (r truncated) AppendTo(dst []byte) []byte {
	return append(dst, r.Request.AppendTo(nil)[:r.n]...)
}
