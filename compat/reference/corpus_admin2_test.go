package reference

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Admin and describe APIs' argument errors and edge answers (issue 25):
// topic-name collisions, validate-only answers, topic config validation,
// batched FindCoordinator and OffsetFetch across coordinators, authorized
// operations without an authorizer, transaction listing filters,
// DescribeProducers on a follower, ElectLeaders and DescribeConfigs
// argument errors. Cases whose ErrorMessage Kafka words set exactMessages:
// fakekafka's text must equal Kafka's there.

// elsewhere is, per cluster, what a case picked on that cluster (a group
// another broker coordinates) and the name it shows as in the answer, so
// that both clusters' answers compare.
var elsewhere sync.Map // *corpusEnv -> map[string]string (picked -> shown)

// otherGroup is a group that broker does not coordinate (typ 0) or a
// transactional id it does not (typ 1), shown as shown.
func otherGroup(r *run, e *corpusEnv, notOn int32, typ int8, shown string) string {
	for i := range 200 {
		key := fmt.Sprintf("admin2-%d", i)
		req := at(4, kmsg.NewPtrFindCoordinatorRequest())
		req.CoordinatorType, req.CoordinatorKeys = typ, []string{key}
		c := r.do(0, req).(*kmsg.FindCoordinatorResponse).Coordinators[0]
		if c.ErrorCode == 0 && c.NodeID != notOn {
			m, _ := elsewhere.LoadOrStore(e, map[string]string{})
			m.(map[string]string)[key] = shown
			return key
		}
	}
	r.Fatalf("%s: no group coordinated away from broker %d", r.tg.Name(), notOn)
	return ""
}

// picked is the name otherGroup picked on e's cluster for shown.
func picked(e *corpusEnv, shown string) string {
	m, _ := elsewhere.Load(e)
	for k, v := range m.(map[string]string) {
		if v == shown {
			return k
		}
	}
	return ""
}

// showPicked renames picked groups in an OffsetFetch answer.
func showPicked(e *corpusEnv, resp kmsg.Response) {
	m, _ := elsewhere.Load(e)
	names, _ := m.(map[string]string)
	rename := func(g *string) {
		if s, ok := names[*g]; ok {
			*g = s
		}
	}
	switch r := resp.(type) {
	case *kmsg.OffsetFetchResponse:
		for i := range r.Groups {
			rename(&r.Groups[i].Group)
		}
	// Kafka answers many groups in the HashMap order of their partitions
	// (server/group_batch_order.go); the picked group's partition differs
	// between the clusters, so these compare sorted.
	case *kmsg.DescribeGroupsResponse:
		for i := range r.Groups {
			rename(&r.Groups[i].Group)
		}
		slices.SortFunc(r.Groups, func(a, b kmsg.DescribeGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	case *kmsg.ConsumerGroupDescribeResponse:
		for i := range r.Groups {
			rename(&r.Groups[i].Group)
		}
		slices.SortFunc(r.Groups, func(a, b kmsg.ConsumerGroupDescribeResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	}
}

func createValidateOnly(v int16, name string, configs map[string]string) func(*corpusEnv) kmsg.Request {
	return func(*corpusEnv) kmsg.Request {
		req := createTopicReq(v, name, 1, 1, configs)
		req.ValidateOnly = true
		return req
	}
}

func findCoordinators(v int16, typ int8, keys ...string) func(*corpusEnv) kmsg.Request {
	return func(*corpusEnv) kmsg.Request {
		req := at(v, kmsg.NewPtrFindCoordinatorRequest())
		req.CoordinatorType, req.CoordinatorKeys = typ, keys
		return req
	}
}

func describeConfigsWith(v int16, synonyms, docs bool, typ kmsg.ConfigResourceType, name string, keys ...string) func(*corpusEnv) kmsg.Request {
	return func(*corpusEnv) kmsg.Request {
		req := describeConfigsReq(v, typ, name, keys...)
		req.IncludeSynonyms, req.IncludeDocumentation = synonyms, docs
		return req
	}
}

func electReq(v int16, typ int8, topics map[string][]int32, order ...string) func(*corpusEnv) kmsg.Request {
	return func(*corpusEnv) kmsg.Request {
		req := at(v, kmsg.NewPtrElectLeadersRequest())
		req.TimeoutMillis, req.ElectionType = 10000, typ
		if topics == nil {
			req.Topics = nil
			return req
		}
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for _, name := range order {
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic, rt.Partitions = name, topics[name]
			req.Topics = append(req.Topics, rt)
		}
		return req
	}
}

func listTxns(v int16, states []string, pids func(e *corpusEnv) []int64, duration int64, pattern *string) func(*corpusEnv) kmsg.Request {
	return func(e *corpusEnv) kmsg.Request {
		req := at(v, kmsg.NewPtrListTransactionsRequest())
		req.StateFilters = states
		if pids != nil {
			req.ProducerIDFilters = pids(e)
		}
		req.DurationFilterMillis, req.TransactionalIDPattern = duration, pattern
		return req
	}
}

// exactMessageAPIs are the APIs whose every corpus case compares
// ErrorMessage exactly: fakekafka words their messages as Kafka 4.4 does.
var exactMessageAPIs = []string{"CreateTopics/", "CreatePartitions/", "AlterPartitionAssignments/",
	"ElectLeaders/", "DescribeConfigs/", "AlterConfigs/", "IncrementalAlterConfigs/", "FindCoordinator/",
	"DescribeProducers/", "DescribeTransactions/", "ListTransactions/", "ConsumerGroupDescribe/", "DescribeCluster/",
	"DescribeTopicPartitions/", "ListPartitionReassignments/"}

// exactMessages says whether case name compares ErrorMessage exactly.
func exactMessages(name string) bool {
	for _, p := range exactMessageAPIs {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// admin2Cases are sent last: the collisions create topics, and the final
// ElectLeaders over every partition may move leaders.
func admin2Cases(versions map[int16][2]int16) []corpusCase {
	latest := func(k kmsg.Key) int16 { return versions[k.Int16()][1] }
	has := func(k kmsg.Key, v int16) bool {
		r, ok := versions[k.Int16()]
		return ok && r[0] <= v && v <= r[1]
	}
	cv, mv, cp := latest(kmsg.CreateTopics), latest(kmsg.Metadata), latest(kmsg.CreatePartitions)
	ac, iac, dc := latest(kmsg.AlterConfigs), latest(kmsg.IncrementalAlterConfigs), latest(kmsg.DescribeConfigs)
	var out []corpusCase
	add := func(c corpusCase) { out = append(out, c) }
	exact := func(c corpusCase) { c.exactMessages = true; out = append(out, c) }

	// Topic-name collisions: '.' and '_' collide in metric names.
	exact(corpusCase{name: "CreateTopics/collision-dot-first", req: func(*corpusEnv) kmsg.Request {
		return createTopicReq(cv, "admin2.dot", 1, 1, nil)
	}})
	exact(corpusCase{name: "CreateTopics/collision-underscore-second", req: func(*corpusEnv) kmsg.Request {
		return createTopicReq(cv, "admin2_dot", 1, 1, nil)
	}})
	exact(corpusCase{name: "CreateTopics/collision-underscore-first", req: func(*corpusEnv) kmsg.Request {
		return createTopicReq(cv, "admin2_us", 1, 1, nil)
	}})
	exact(corpusCase{name: "CreateTopics/collision-dot-second-validate-only", req: createValidateOnly(cv, "admin2.us", nil)})
	exact(corpusCase{name: "CreateTopics/collision-dot-second", req: func(*corpusEnv) kmsg.Request {
		return createTopicReq(cv, "admin2.us", 1, 1, nil)
	}})
	exact(corpusCase{name: "CreateTopics/exists-with-collision-chars", req: func(*corpusEnv) kmsg.Request {
		return createTopicReq(cv, "admin2.dot", 1, 1, nil)
	}})
	exact(corpusCase{name: "CreateTopics/internal-topic-exists", req: func(*corpusEnv) kmsg.Request {
		return createTopicReq(cv, "__consumer_offsets", 1, 1, nil)
	}})
	exact(corpusCase{name: "CreateTopics/collision-in-one-request", req: func(*corpusEnv) kmsg.Request {
		req := createTopicReq(cv, "admin2.pair", 1, 1, nil)
		req.Topics = append(req.Topics, createTopicReq(cv, "admin2_pair", 1, 1, nil).Topics...)
		return req
	}, placed: true})
	exact(corpusCase{name: "Metadata/auto-create-collision", req: func(*corpusEnv) kmsg.Request {
		req := at(mv, kmsg.NewPtrMetadataRequest())
		req.AllowAutoTopicCreation = true
		req.Topics = []kmsg.MetadataRequestTopic{topicReq("admin2_dot")}
		return req
	}})

	// Validate-only answers.
	add(corpusCase{name: "CreateTopics/validate-only-configs", req: func(*corpusEnv) kmsg.Request {
		req := createTopicReq(cv, "admin2-v", 2, 3, map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"})
		req.ValidateOnly = true
		return req
	}})
	add(corpusCase{name: "CreateTopics/validate-only-defaults", req: func(*corpusEnv) kmsg.Request {
		req := createTopicReq(cv, "admin2-v", -1, -1, nil)
		req.ValidateOnly = true
		return req
	}})
	add(corpusCase{name: "CreateTopics/validate-only-assignment", req: func(*corpusEnv) kmsg.Request {
		req := createTopicReq(cv, "admin2-v", -1, -1, nil)
		for i, rs := range [][]int32{{1, 2}, {2, 3}} {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), rs
			req.Topics[0].ReplicaAssignment = append(req.Topics[0].ReplicaAssignment, a)
		}
		req.ValidateOnly = true
		return req
	}})
	exact(corpusCase{name: "CreateTopics/validate-only-exists", req: createValidateOnly(cv, "corpus", nil)})
	exact(corpusCase{name: "CreatePartitions/validate-only-below-current", req: func(*corpusEnv) kmsg.Request {
		req := createPartitionsReq(cp, "corpus", 2)
		req.ValidateOnly = true
		return req
	}})
	exact(corpusCase{name: "CreatePartitions/validate-only-assignment", req: func(*corpusEnv) kmsg.Request {
		req := createPartitionsReq(cp, "corpus", 4, []int32{2, 3, 1})
		req.ValidateOnly = true
		return req
	}})
	exact(corpusCase{name: "CreatePartitions/validate-only-too-few-assignments", req: func(*corpusEnv) kmsg.Request {
		req := createPartitionsReq(cp, "corpus", 5, []int32{2, 3, 1})
		req.ValidateOnly = true
		return req
	}})
	alterVO := func(kv ...string) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := alterConfigsReq(ac, "corpus", kv...)
			req.ValidateOnly = true
			return req
		}
	}
	exact(corpusCase{name: "AlterConfigs/validate-only", req: alterVO("retention.ms", "1000")})
	exact(corpusCase{name: "AlterConfigs/validate-only-segment-bytes-too-small", req: alterVO("segment.bytes", "1000")})
	exact(corpusCase{name: "AlterConfigs/validate-only-unknown-name", req: alterVO("no.such.config", "1")})
	incVO := func(name, value string, op int8) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := incAlterConfigsReq(iac, "corpus", name, value)
			req.Resources[0].Configs[0].Op = kmsg.IncrementalAlterConfigOp(op)
			req.ValidateOnly = true
			return req
		}
	}
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only", req: incVO("retention.ms", "1000", 0)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-segment-bytes-too-small", req: incVO("segment.bytes", "1000", 0)})
	exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-append-to-non-list", req: incVO("retention.ms", "1000", 2)})
	exact(corpusCase{name: "IncrementalAlterConfigs/segment-bytes-too-small", req: func(*corpusEnv) kmsg.Request {
		return incAlterConfigsReq(iac, "corpus", "segment.bytes", "1000")
	}})

	// Broker configs, validate-only at the cluster level ("") and broker 1.
	brokerVO := func(name, key, value string) {
		exact(corpusCase{name: "IncrementalAlterConfigs/validate-only-broker-" + key + "=" + value, req: func(*corpusEnv) kmsg.Request {
			req := at(iac, kmsg.NewPtrIncrementalAlterConfigsRequest())
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, name
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = key, kmsg.StringPtr(value)
			rr.Configs = append(rr.Configs, c)
			req.Resources = append(req.Resources, rr)
			req.ValidateOnly = true
			return req
		}})
	}
	for _, kv := range [][2]string{
		{"log.segment.bytes", "1000"}, {"log.segment.bytes", "x"}, {"min.insync.replicas", "0"},
		{"num.partitions", "0"}, {"log.retention.ms", "-2"}, {"compression.type", "bogus"},
		{"log.cleanup.policy", "bogus"}, {"broker.id", "5"}, {"message.max.bytes", "-1"},
		{"log.retention.bytes", "100"}, {"unclean.leader.election.enable", "maybe"},
	} {
		brokerVO("", kv[0], kv[1])
	}
	brokerVO("1", "log.segment.bytes", "1000")
	brokerVO("1", "min.insync.replicas", "2")

	// Topic config values Kafka 4.4's LogConfig refuses (and a few it takes),
	// validate-only so that nothing is created.
	for _, c := range []struct{ name, key, value string }{
		{"segment-bytes-too-small", "segment.bytes", "1048575"},
		{"segment-bytes-minimum", "segment.bytes", "1048576"},
		{"segment-ms-zero", "segment.ms", "0"},
		{"segment-index-bytes-too-small", "segment.index.bytes", "3"},
		{"min-insync-replicas-zero", "min.insync.replicas", "0"},
		{"min-insync-replicas-above-rf", "min.insync.replicas", "3"},
		{"cleanup-policy-unknown", "cleanup.policy", "bogus"},
		{"cleanup-policy-empty", "cleanup.policy", ""},
		{"compression-type-unknown", "compression.type", "brotli"},
		{"compression-gzip-level", "compression.gzip.level", "10"},
		{"compression-lz4-level", "compression.lz4.level", "0"},
		{"compression-zstd-level", "compression.zstd.level", "23"},
		{"max-message-bytes-negative", "max.message.bytes", "-1"},
		{"min-cleanable-dirty-ratio", "min.cleanable.dirty.ratio", "1.5"},
		{"message-timestamp-type", "message.timestamp.type", "Foo"},
		{"retention-ms", "retention.ms", "-2"},
		{"local-retention-ms", "local.retention.ms", "-3"},
		{"throttled-replicas-bad", "follower.replication.throttled.replicas", "bogus"},
		{"throttled-replicas-ok", "leader.replication.throttled.replicas", "0:1,0:2"},
		{"throttled-replicas-wildcard", "leader.replication.throttled.replicas", "*"},
		{"delete-retention-ms", "delete.retention.ms", "-1"},
		{"flush-messages", "flush.messages", "0"},
		{"index-interval-bytes", "index.interval.bytes", "-1"},
		{"max-compaction-lag-ms", "max.compaction.lag.ms", "0"},
		{"max-decompressed-message-bytes", "max.decompressed.message.bytes", "0"},
		{"preallocate", "preallocate", "yes"},
		{"unclean-leader-election", "unclean.leader.election.enable", "maybe"},
		{"message-downconversion-removed", "message.downconversion.enable", "true"},
		{"remote-storage-enable", "remote.storage.enable", "true"},
		{"int-overflow", "segment.bytes", "4294967296"},
	} {
		exact(corpusCase{name: "CreateTopics/config-" + c.name, req: createValidateOnly(cv, "admin2-cfg", map[string]string{c.key: c.value})})
	}
	out = append(out, topicConfigCases(cv)...)
	exact(corpusCase{name: "CreateTopics/config-compaction-lags-crossed", req: createValidateOnly(cv, "admin2-cfg",
		map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})})
	exact(corpusCase{name: "CreateTopics/config-local-retention-bytes-above-retention", req: createValidateOnly(cv, "admin2-cfg",
		map[string]string{"local.retention.bytes": "2000", "retention.bytes": "1000"})})
	exact(corpusCase{name: "CreateTopics/config-local-retention-ms-above-retention", req: createValidateOnly(cv, "admin2-cfg",
		map[string]string{"local.retention.ms": "2000", "retention.ms": "1000"})})
	exact(corpusCase{name: "CreateTopics/config-null-value", req: func(*corpusEnv) kmsg.Request {
		req := createTopicReq(cv, "admin2-cfg", 1, 1, map[string]string{"retention.ms": "1"})
		req.Topics[0].Configs[0].Value = nil
		req.ValidateOnly = true
		return req
	}})

	// Batched FindCoordinator (v4+): per-key answers.
	if fv := latest(kmsg.FindCoordinator); fv >= 4 {
		exact(corpusCase{name: "FindCoordinator/batched-groups", req: findCoordinators(fv, 0, "cg", "cg-empty", "", "no-such-group")})
		exact(corpusCase{name: "FindCoordinator/batched-transactions", req: findCoordinators(fv, 1, corpusTxn, "", "no-such-txn")})
		exact(corpusCase{name: "FindCoordinator/batched-no-keys", req: findCoordinators(fv, 0)})
		exact(corpusCase{name: "FindCoordinator/unknown-type", req: findCoordinators(fv, 7, "cg", "cg-empty")})
		exact(corpusCase{name: "FindCoordinator/v3-empty-key", req: func(*corpusEnv) kmsg.Request {
			req := at(3, kmsg.NewPtrFindCoordinatorRequest())
			return req
		}})
	}

	// Batched OffsetFetch (v8+): groups coordinated elsewhere answer
	// NOT_COORDINATOR each, beside the ones this broker coordinates.
	if ov := latest(kmsg.OffsetFetch); ov >= 8 {
		exact(corpusCase{name: "OffsetFetch/batched-across-coordinators",
			to: func(r *run, e *corpusEnv) int32 {
				here := r.coordinator("cg-empty")
				otherGroup(r, e, here, 0, "<coordinated-elsewhere>")
				return here
			},
			req: func(e *corpusEnv) kmsg.Request {
				req := offsetFetchReq(ov, "cg-empty")
				g := kmsg.NewOffsetFetchRequestGroup()
				g.Group = picked(e, "<coordinated-elsewhere>")
				req.Groups = append(req.Groups, g) // null topics: all
				g2 := kmsg.NewOffsetFetchRequestGroup()
				g2.Group = "cg-empty" // all of them
				req.Groups = append(req.Groups, g2)
				return req
			},
			after: showPicked})
	}

	// Batched DescribeGroups and ConsumerGroupDescribe likewise.
	elsewhereTo := func(r *run, e *corpusEnv) int32 {
		here := r.coordinator("cg-empty")
		otherGroup(r, e, here, 0, "<coordinated-elsewhere>")
		return here
	}
	if dg := latest(kmsg.DescribeGroups); true {
		exact(corpusCase{name: "DescribeGroups/batched-across-coordinators", to: elsewhereTo, after: showPicked,
			req: func(e *corpusEnv) kmsg.Request {
				req := at(dg, kmsg.NewPtrDescribeGroupsRequest())
				req.Groups = []string{picked(e, "<coordinated-elsewhere>"), "cg-empty"}
				return req
			}})
		exact(corpusCase{name: "DescribeGroups/batched-authorized-operations", to: elsewhereTo, after: showPicked,
			req: func(e *corpusEnv) kmsg.Request {
				req := at(dg, kmsg.NewPtrDescribeGroupsRequest())
				req.Groups, req.IncludeAuthorizedOperations = []string{picked(e, "<coordinated-elsewhere>"), "cg-empty"}, true
				return req
			}})
		// An empty id is routed like any other (Dead, no error).
		exact(corpusCase{name: "DescribeGroups/empty-id", to: func(r *run, _ *corpusEnv) int32 { return r.coordinator("") },
			req: func(*corpusEnv) kmsg.Request {
				req := at(dg, kmsg.NewPtrDescribeGroupsRequest())
				req.Groups = []string{""}
				return req
			}})
	}
	if v, ok := versions[kmsg.ConsumerGroupDescribe.Int16()]; ok {
		exact(corpusCase{name: "ConsumerGroupDescribe/batched-across-coordinators", to: elsewhereTo, after: showPicked,
			req: func(e *corpusEnv) kmsg.Request {
				req := at(v[1], kmsg.NewPtrConsumerGroupDescribeRequest())
				req.Groups = []string{picked(e, "<coordinated-elsewhere>"), "cg-empty", ""}
				return req
			}})
	}

	// Authorized operations without an authorizer.
	if has(kmsg.Metadata, 10) {
		add(corpusCase{name: "Metadata/v10-authorized-operations", req: func(*corpusEnv) kmsg.Request {
			req := at(10, kmsg.NewPtrMetadataRequest())
			req.IncludeClusterAuthorizedOperations, req.IncludeTopicAuthorizedOperations = true, true
			req.Topics = []kmsg.MetadataRequestTopic{topicReq("corpus"), topicReq("no-such-topic")}
			return req
		}})
	}
	add(corpusCase{name: "Metadata/topic-authorized-operations", req: func(*corpusEnv) kmsg.Request {
		req := at(mv, kmsg.NewPtrMetadataRequest())
		req.IncludeTopicAuthorizedOperations = true
		req.Topics = []kmsg.MetadataRequestTopic{topicReq("corpus")}
		return req
	}})
	if dg := latest(kmsg.DescribeGroups); dg >= 3 {
		add(corpusCase{name: "DescribeGroups/authorized-operations", group: "cg-empty", req: func(*corpusEnv) kmsg.Request {
			req := at(dg, kmsg.NewPtrDescribeGroupsRequest())
			req.Groups, req.IncludeAuthorizedOperations = []string{"cg-empty"}, true
			return req
		}})
	}
	if v, ok := versions[kmsg.ConsumerGroupDescribe.Int16()]; ok {
		add(corpusCase{name: "ConsumerGroupDescribe/authorized-operations", group: corpusGroup, req: func(*corpusEnv) kmsg.Request {
			req := at(v[1], kmsg.NewPtrConsumerGroupDescribeRequest())
			req.Groups, req.IncludeAuthorizedOperations = []string{corpusGroup}, true
			return req
		}})
	}

	// DescribeTransactions and ListTransactions filters and errors.
	{
		tv := latest(kmsg.DescribeTransactions)
		exact(corpusCase{name: "DescribeTransactions/empty-and-unknown-ids", txnID: corpusTxn, req: func(*corpusEnv) kmsg.Request {
			req := at(tv, kmsg.NewPtrDescribeTransactionsRequest())
			req.TransactionalIDs = []string{"", "no-such-txn"}
			return req
		}})
		exact(corpusCase{name: "DescribeTransactions/not-the-coordinator",
			to: func(r *run, e *corpusEnv) int32 { return r.txnCoordinator(corpusTxn)%3 + 1 },
			req: func(*corpusEnv) kmsg.Request {
				req := at(tv, kmsg.NewPtrDescribeTransactionsRequest())
				req.TransactionalIDs = []string{corpusTxn}
				return req
			}})
	}
	lt := latest(kmsg.ListTransactions)
	pid := func(e *corpusEnv) []int64 { return []int64{e.pid} }
	other := func(*corpusEnv) []int64 { return []int64{424242} }
	exact(corpusCase{name: "ListTransactions/unknown-state", txnID: corpusTxn, req: listTxns(lt, []string{"Bogus"}, nil, -1, nil)})
	exact(corpusCase{name: "ListTransactions/known-and-unknown-states", txnID: corpusTxn, req: listTxns(lt, []string{"CompleteCommit", "Bogus"}, nil, -1, nil)})
	exact(corpusCase{name: "ListTransactions/producer-id", txnID: corpusTxn, req: listTxns(lt, nil, pid, -1, nil)})
	exact(corpusCase{name: "ListTransactions/unknown-producer-id", txnID: corpusTxn, req: listTxns(lt, nil, other, -1, nil)})
	if lt >= 1 {
		exact(corpusCase{name: "ListTransactions/duration-zero", txnID: corpusTxn, req: listTxns(lt, nil, pid, 0, nil)})
		exact(corpusCase{name: "ListTransactions/duration-long", txnID: corpusTxn, req: listTxns(lt, nil, pid, 1<<40, nil)})
	}
	if lt >= 2 {
		exact(corpusCase{name: "ListTransactions/pattern", txnID: corpusTxn, req: listTxns(lt, nil, nil, -1, kmsg.StringPtr("corpus-t.*"))})
		exact(corpusCase{name: "ListTransactions/pattern-empty", txnID: corpusTxn, req: listTxns(lt, nil, pid, -1, kmsg.StringPtr(""))})
		exact(corpusCase{name: "ListTransactions/pattern-invalid", txnID: corpusTxn, req: listTxns(lt, nil, nil, -1, kmsg.StringPtr("corpus-[txn"))})
		exact(corpusCase{name: "ListTransactions/pattern-partial", txnID: corpusTxn, req: listTxns(lt, nil, nil, -1, kmsg.StringPtr("txn"))})
	}

	// DescribeProducers on a follower and on unknown partitions.
	dp := latest(kmsg.DescribeProducers)
	producers := func(topic string, partitions ...int32) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(dp, kmsg.NewPtrDescribeProducersRequest())
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = topic, partitions
			req.Topics = append(req.Topics, rt)
			return req
		}
	}
	// The follower answers from its replica: first wait until it has
	// replicated what the leader knows.
	caughtUp := func(r *run, e *corpusEnv) {
		r.waitFor("broker 2's producer state as broker 1's", func() bool {
			return reflect.DeepEqual(normalise(r.do(1, producers("corpus", 0, 1)(e))), normalise(r.do(2, producers("corpus", 0, 1)(e))))
		})
	}
	exact(corpusCase{name: "DescribeProducers/follower", settle: caughtUp, to: func(*run, *corpusEnv) int32 { return 2 }, req: producers("corpus", 0, 1)})
	exact(corpusCase{name: "DescribeProducers/unknown-topic", req: producers("no-such-topic", 0)})

	// DescribeConfigs argument errors and versions.
	exact(corpusCase{name: "DescribeConfigs/unknown-resource-type", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, 99, "x")
	}})
	exact(corpusCase{name: "DescribeConfigs/resource-type-unknown", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, 0, "x")
	}})
	exact(corpusCase{name: "DescribeConfigs/broker-id-not-a-number", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeBroker, "abc", "num.partitions")
	}})
	exact(corpusCase{name: "DescribeConfigs/other-broker", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeBroker, "2", "num.partitions")
	}})
	exact(corpusCase{name: "DescribeConfigs/broker-default", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeBroker, "", "num.partitions", "log.retention.ms")
	}})
	exact(corpusCase{name: "DescribeConfigs/other-broker-logger", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeBrokerLogger, "2", "kafka")
	}})
	exact(corpusCase{name: "DescribeConfigs/broker-logger-not-a-number", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeBrokerLogger, "abc")
	}})
	exact(corpusCase{name: "DescribeConfigs/empty-topic", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeTopic, "")
	}})
	exact(corpusCase{name: "DescribeConfigs/invalid-topic-name", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeTopic, "bad/name")
	}})
	exact(corpusCase{name: "DescribeConfigs/empty-group", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceType(32), "")
	}})
	exact(corpusCase{name: "DescribeConfigs/unknown-group", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceType(32), "no-such-group", "consumer.session.timeout.ms")
	}})
	exact(corpusCase{name: "DescribeConfigs/unknown-config-name", req: func(*corpusEnv) kmsg.Request {
		return describeConfigsReq(dc, kmsg.ConfigResourceTypeTopic, "corpus", "no.such.config")
	}})
	exact(corpusCase{name: "DescribeConfigs/same-topic-twice", req: func(*corpusEnv) kmsg.Request {
		req := describeConfigsReq(dc, kmsg.ConfigResourceTypeTopic, "corpus", "retention.ms")
		req.Resources = append(req.Resources, req.Resources[0])
		return req
	}})
	add(corpusCase{name: "DescribeConfigs/group-synonyms-and-docs",
		req: describeConfigsWith(dc, true, true, kmsg.ConfigResourceType(32), "cg-empty", "consumer.session.timeout.ms", "share.record.lock.duration.ms")})
	for _, v := range []int16{0, 1, 2, 3, dc} {
		if !has(kmsg.DescribeConfigs, v) {
			continue
		}
		add(corpusCase{name: fmt.Sprintf("DescribeConfigs/v%d-synonyms-and-docs-topic", v),
			req: describeConfigsWith(v, true, true, kmsg.ConfigResourceTypeTopic, "corpus", "retention.ms", "cleanup.policy")})
		add(corpusCase{name: fmt.Sprintf("DescribeConfigs/v%d-synonyms-and-docs-broker", v),
			req: describeConfigsWith(v, true, true, kmsg.ConfigResourceTypeBroker, "1", "log.retention.ms", "log.retention.hours", "log.segment.bytes")})
	}

	out = append(out, admin2MoreCases(versions)...)

	// ElectLeaders argument errors.
	ev := latest(kmsg.ElectLeaders)
	exact(corpusCase{name: "ElectLeaders/unknown-election-type", req: electReq(ev, 5, map[string][]int32{"corpus": {0}}, "corpus")})
	exact(corpusCase{name: "ElectLeaders/unknown-partitions", req: electReq(ev, 0,
		map[string][]int32{"corpus": {0, 9}, "no-such-topic": {0}}, "corpus", "no-such-topic")})
	exact(corpusCase{name: "ElectLeaders/duplicate-partitions", req: electReq(ev, 0, map[string][]int32{"corpus": {0, 0}}, "corpus")})
	exact(corpusCase{name: "ElectLeaders/same-topic-twice", req: func(e *corpusEnv) kmsg.Request {
		req := electReq(ev, 0, map[string][]int32{"corpus": {0}}, "corpus")(e).(*kmsg.ElectLeadersRequest)
		req.Topics = append(req.Topics, req.Topics[0])
		return req
	}})
	exact(corpusCase{name: "ElectLeaders/no-topics", req: electReq(ev, 0, map[string][]int32{})})
	exact(corpusCase{name: "ElectLeaders/no-partitions", req: electReq(ev, 0, map[string][]int32{"corpus": {}}, "corpus")})
	if ev >= 1 {
		// Every partition (null topics); corpus/2's preferred leader is 3
		// since its reassignment to [3 2 1], so this one moves.
		exact(corpusCase{name: "ElectLeaders/all-partitions", req: electReq(ev, 0, nil), placed: true})
	}
	return out
}
