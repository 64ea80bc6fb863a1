package server

// The rows of TestACLEveryAPI: one or more per API key, in key order, each
// the check Kafka 4.x makes (KafkaApis, ControllerApis, ConfigHelper).

import (
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func onTopic(ops ...authorizer.Operation) []authorizer.ACL {
	return grant(authorizer.ResourceTopic, "t", ops...)
}

func onGroup(ops ...authorizer.Operation) []authorizer.ACL {
	return grant(authorizer.ResourceGroup, "g", ops...)
}

func onCluster(ops ...authorizer.Operation) []authorizer.ACL {
	return grant(authorizer.ResourceCluster, authorizer.ClusterName, ops...)
}

func onTxn(ops ...authorizer.Operation) []authorizer.ACL {
	return grant(authorizer.ResourceTransactionalID, "x", ops...)
}

const (
	opRead, opWrite, opCreate, opDelete, opAlter, opDescribe = authorizer.OpRead, authorizer.OpWrite, authorizer.OpCreate, authorizer.OpDelete, authorizer.OpAlter, authorizer.OpDescribe
	opClusterAction, opDescribeConfigs, opAlterConfigs       = authorizer.OpClusterAction, authorizer.OpDescribeConfigs, authorizer.OpAlterConfigs
)

func aclCases() []aclCase {
	cases := []aclCase{
		{name: "Produce", key: 0, want: errTopicAuth, grants: onTopic(opWrite),
			req: func(e *aclEnv) kmsg.Request { return byTopicID(e.c, rawProduce(e.t, "t", 1, 5000, "v")) },
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "Fetch", key: 1, want: errTopicAuth, grants: onTopic(opRead), req: fetchReq,
			code: func(r kmsg.Response) int16 { return r.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "ListOffsets", key: 2, want: errTopicAuth, grants: onTopic(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrListOffsetsRequest()
				req.ReplicaID = -1
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "t"
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "Metadata/by-name", key: 3, want: errTopicAuth, grants: onTopic(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrMetadataRequest()
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = kmsg.StringPtr("t")
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.MetadataResponse).Topics[0].ErrorCode }},
		{name: "Metadata/all", key: 3, want: leftOut, grants: onTopic(opDescribe),
			req: func(*aclEnv) kmsg.Request { return &kmsg.MetadataRequest{} }, // null topics: all
			code: func(r kmsg.Response) int16 {
				for _, t := range r.(*kmsg.MetadataResponse).Topics {
					if *t.Topic == "t" {
						return t.ErrorCode
					}
				}
				return leftOut
			}},
		{name: "OffsetCommit/group", key: 8, want: errGroupAuth, grants: slices.Concat(onGroup(opRead), onTopic(opRead)),
			req:  func(e *aclEnv) kmsg.Request { return withTopicIDs(e.c, offsetCommitReq()) },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "OffsetCommit/topic", key: 8, want: errTopicAuth, base: onGroup(opRead), grants: onTopic(opRead),
			req:  func(e *aclEnv) kmsg.Request { return withTopicIDs(e.c, offsetCommitReq()) },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "OffsetFetch/group", key: 9, want: errGroupAuth, grants: onGroup(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = "g"
				req.Groups = append(req.Groups, rg)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.OffsetFetchResponse).Groups[0].ErrorCode }},
		{name: "OffsetFetch/topic", key: 9, want: errTopicAuth, base: onGroup(opDescribe), grants: onTopic(opDescribe),
			req: func(e *aclEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = "g"
				rt := kmsg.NewOffsetFetchRequestGroupTopic()
				rt.Topic, rt.Partitions = "t", []int32{0}
				rg.Topics = append(rg.Topics, rt)
				req.Groups = append(req.Groups, rg)
				return withTopicIDs(e.c, req)
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.OffsetFetchResponse).Groups[0].Topics[0].Partitions[0].ErrorCode
			}},
		{name: "FindCoordinator/group", key: 10, want: errGroupAuth, grants: onGroup(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorKeys = []string{"g"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode }},
		{name: "FindCoordinator/transaction", key: 10, want: errTxnAuth, grants: onTxn(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorType, req.CoordinatorKeys = 1, []string{"x"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode }},
		{name: "JoinGroup", key: 11, want: errGroupAuth, grants: onGroup(opRead),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = "g", 10000, 10000, "consumer"
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "range", []byte{}
				req.Protocols = append(req.Protocols, p)
				return req // no member id yet: MEMBER_ID_REQUIRED once allowed
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.JoinGroupResponse).ErrorCode }},
		{name: "Heartbeat", key: 12, want: errGroupAuth, grants: onGroup(opRead),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group, req.Generation, req.MemberID = "g", 1, "m"
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.HeartbeatResponse).ErrorCode }},
		{name: "LeaveGroup", key: 13, want: errGroupAuth, grants: onGroup(opRead),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrLeaveGroupRequest()
				req.Group, req.MemberID = "g", "m"
				m := kmsg.NewLeaveGroupRequestMember()
				m.MemberID = "m"
				req.Members = append(req.Members, m)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.LeaveGroupResponse).ErrorCode }},
		{name: "SyncGroup", key: 14, want: errGroupAuth, grants: onGroup(opRead),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrSyncGroupRequest()
				req.Group, req.Generation, req.MemberID = "g", 1, "m"
				req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.SyncGroupResponse).ErrorCode }},
		{name: "DescribeGroups", key: 15, want: errGroupAuth, grants: onGroup(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups = []string{"g"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode }},
		{name: "ListGroups/group", key: 16, want: leftOut, grants: onGroup(opDescribe), setup: (*aclEnv).commitOffset,
			req: func(*aclEnv) kmsg.Request { return kmsg.NewPtrListGroupsRequest() }, code: listedGroup},
		{name: "ListGroups/cluster", key: 16, want: leftOut, grants: onCluster(opDescribe), setup: (*aclEnv).commitOffset,
			req: func(*aclEnv) kmsg.Request { return kmsg.NewPtrListGroupsRequest() }, code: listedGroup},
		{name: "CreateTopics/topic", key: 19, want: errTopicAuth, grants: grant(authorizer.ResourceTopic, "new", opCreate),
			req: createTopicsReq, code: createTopicsCode},
		{name: "CreateTopics/cluster", key: 19, want: errTopicAuth, grants: onCluster(opCreate),
			req: createTopicsReq, code: createTopicsCode},
		{name: "DeleteTopics/topic", key: 20, want: errTopicAuth, grants: onTopic(opDelete), req: deleteTopicsReq, code: deleteTopicsCode},
		{name: "DeleteTopics/cluster", key: 20, want: errTopicAuth, grants: onCluster(opDelete), req: deleteTopicsReq, code: deleteTopicsCode},
		{name: "DeleteRecords", key: 21, want: errTopicAuth, grants: onTopic(opDelete),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteRecordsRequest()
				rt := kmsg.NewDeleteRecordsRequestTopic()
				rt.Topic = "t"
				rt.Partitions = append(rt.Partitions, kmsg.NewDeleteRecordsRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode }},
		{name: "InitProducerId/transactional", key: 22, want: errTxnAuth, grants: onTxn(opWrite),
			req:  func(*aclEnv) kmsg.Request { return initProducerIDReq(kmsg.StringPtr("x")) },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }},
		{name: "InitProducerId/idempotent", key: 22, want: errClusterAuth, grants: onCluster(authorizer.OpIdempotentWrite),
			req:  func(*aclEnv) kmsg.Request { return initProducerIDReq(nil) },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }},
		{name: "OffsetForLeaderEpoch", key: 23, want: errTopicAuth, grants: onTopic(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrOffsetForLeaderEpochRequest()
				req.ReplicaID = -1
				rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
				rt.Topic = "t"
				rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
				rp.CurrentLeaderEpoch = -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "AddPartitionsToTxn/v3-id", key: 24, pin: 3, want: errTxnAuth, grants: slices.Concat(onTxn(opWrite), onTopic(opWrite)),
			req: addPartitionsV3Req, code: addPartitionsV3Code},
		{name: "AddPartitionsToTxn/v3-topic", key: 24, pin: 3, want: errTopicAuth, base: onTxn(opWrite), grants: onTopic(opWrite),
			req: addPartitionsV3Req, code: addPartitionsV3Code},
		{name: "AddPartitionsToTxn/v4-broker", key: 24, want: errClusterAuth, grants: onCluster(opClusterAction),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
				tx.TransactionalID, tx.ProducerID, tx.VerifyOnly = "x", 1, true
				rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
				rt.Topic, rt.Partitions = "t", []int32{0}
				tx.Topics = append(tx.Topics, rt)
				req.Transactions = append(req.Transactions, tx)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AddPartitionsToTxnResponse).ErrorCode }},
		{name: "AddOffsetsToTxn/id", key: 25, want: errTxnAuth, grants: slices.Concat(onTxn(opWrite), onGroup(opRead)),
			req: addOffsetsReq, code: addOffsetsCode},
		{name: "AddOffsetsToTxn/group", key: 25, want: errGroupAuth, base: onTxn(opWrite), grants: onGroup(opRead),
			req: addOffsetsReq, code: addOffsetsCode},
		{name: "EndTxn", key: 26, want: errTxnAuth, grants: onTxn(opWrite),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrEndTxnRequest()
				req.TransactionalID, req.ProducerID, req.Commit = "x", 1, true
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.EndTxnResponse).ErrorCode }},
		{name: "WriteTxnMarkers/alter", key: 27, want: errClusterAuth, grants: onCluster(opAlter), req: writeTxnMarkersReq, code: writeTxnMarkersCode},
		{name: "WriteTxnMarkers/cluster-action", key: 27, want: errClusterAuth, grants: onCluster(opClusterAction), req: writeTxnMarkersReq, code: writeTxnMarkersCode},
		{name: "TxnOffsetCommit/id", key: 28, want: errTxnAuth, grants: slices.Concat(onTxn(opWrite), onGroup(opRead), onTopic(opRead)),
			req: txnOffsetCommitReq, code: txnOffsetCommitCode},
		{name: "TxnOffsetCommit/group", key: 28, want: errGroupAuth, base: onTxn(opWrite), grants: slices.Concat(onGroup(opRead), onTopic(opRead)),
			req: txnOffsetCommitReq, code: txnOffsetCommitCode},
		{name: "TxnOffsetCommit/topic", key: 28, want: errTopicAuth, base: slices.Concat(onTxn(opWrite), onGroup(opRead)), grants: onTopic(opRead),
			req: txnOffsetCommitReq, code: txnOffsetCommitCode},
		{name: "DescribeAcls", key: 29, want: errClusterAuth, grants: onCluster(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeACLsRequest()
				req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
				req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeACLsResponse).ErrorCode }},
		{name: "CreateAcls", key: 30, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrCreateACLsRequest()
				cr := kmsg.NewCreateACLsRequestCreation()
				cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "u", kmsg.ACLResourcePatternTypeLiteral
				cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:bob", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
				req.Creations = append(req.Creations, cr)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.CreateACLsResponse).Results[0].ErrorCode }},
		{name: "DeleteAcls", key: 31, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteACLsRequest()
				f := kmsg.NewDeleteACLsRequestFilter()
				f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeLiteral
				f.ResourceName, f.Principal = kmsg.StringPtr("u"), kmsg.StringPtr("User:bob")
				f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				req.Filters = append(req.Filters, f)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteACLsResponse).Results[0].ErrorCode }},
		{name: "DescribeConfigs/topic", key: 32, want: errTopicAuth, grants: onTopic(opDescribeConfigs),
			req: func(*aclEnv) kmsg.Request { return configReq(kmsg.ConfigResourceTypeTopic, "t") }, code: describeConfigsCode},
		{name: "DescribeConfigs/broker", key: 32, want: errClusterAuth, grants: onCluster(opDescribeConfigs),
			req: func(*aclEnv) kmsg.Request { return configReq(kmsg.ConfigResourceTypeBroker, "1") }, code: describeConfigsCode},
		{name: "DescribeConfigs/client-metrics", key: 32, want: errClusterAuth, grants: onCluster(opDescribeConfigs),
			req: func(*aclEnv) kmsg.Request { return configReq(kmsg.ConfigResourceType(16), "m") }, code: describeConfigsCode},
		{name: "AlterConfigs/topic", key: 33, want: errTopicAuth, grants: onTopic(opAlterConfigs),
			req: func(*aclEnv) kmsg.Request {
				return alterConfigsReq(kmsg.ConfigResourceTypeTopic, "t", "retention.ms", "1000")
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode }},
		{name: "AlterConfigs/broker", key: 33, want: errClusterAuth, grants: onCluster(opAlterConfigs),
			req: func(*aclEnv) kmsg.Request {
				return alterConfigsReq(kmsg.ConfigResourceTypeBroker, "", "min.insync.replicas", "1")
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode }},
		{name: "AlterReplicaLogDirs", key: 34, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrAlterReplicaLogDirsRequest()
				rd := kmsg.NewAlterReplicaLogDirsRequestDir()
				rd.Dir = LogDir(1)
				rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
				rt.Topic, rt.Partitions = "t", []int32{0}
				rd.Topics = append(rd.Topics, rt)
				req.Dirs = append(req.Dirs, rd)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.AlterReplicaLogDirsResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeLogDirs", key: 35, want: errClusterAuth, grants: onCluster(opDescribe),
			req: func(*aclEnv) kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() },
			code: func(r kmsg.Response) int16 {
				resp := r.(*kmsg.DescribeLogDirsResponse)
				if resp.ErrorCode == 0 && len(resp.Dirs) == 0 {
					return leftOut // allowed answers list the broker's dir
				}
				return resp.ErrorCode
			}},
		{name: "CreatePartitions", key: 37, want: errTopicAuth, grants: onTopic(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.ValidateOnly = true
				rt := kmsg.NewCreatePartitionsRequestTopic()
				rt.Topic, rt.Count = "t", 2
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode }},
		{name: "DeleteGroups", key: 42, want: errGroupAuth, grants: onGroup(opDelete),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{"g"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode }},
		{name: "ElectLeaders", key: 43, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrElectLeadersRequest()
				rt := kmsg.NewElectLeadersRequestTopic()
				rt.Topic, rt.Partitions = "t", []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ElectLeadersResponse).ErrorCode }},
		{name: "IncrementalAlterConfigs/topic", key: 44, want: errTopicAuth, grants: onTopic(opAlterConfigs),
			req: func(*aclEnv) kmsg.Request {
				return incrementalAlterReq(kmsg.ConfigResourceTypeTopic, "t", "retention.ms", "1000")
			},
			code: incrementalAlterCode},
		{name: "IncrementalAlterConfigs/broker", key: 44, want: errClusterAuth, grants: onCluster(opAlterConfigs),
			req: func(*aclEnv) kmsg.Request {
				return incrementalAlterReq(kmsg.ConfigResourceTypeBroker, "", "min.insync.replicas", "1")
			},
			code: incrementalAlterCode},
		{name: "IncrementalAlterConfigs/group", key: 44, want: errGroupAuth, grants: onGroup(opAlterConfigs),
			req: func(*aclEnv) kmsg.Request {
				return incrementalAlterReq(kmsg.ConfigResourceType(32), "g", "consumer.session.timeout.ms", "45000")
			},
			code: incrementalAlterCode},
		{name: "AlterPartitionReassignments", key: 45, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
				rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
				rt.Topic = "t"
				rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
				rp.Replicas = []int32{1}
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				resp := r.(*kmsg.AlterPartitionAssignmentsResponse)
				if p := resp.Topics[0].Partitions[0].ErrorCode; p != resp.ErrorCode {
					return -2 // Kafka fails every partition with the top-level error
				}
				return resp.ErrorCode
			}},
		{name: "ListPartitionReassignments", key: 46, want: errClusterAuth, grants: onCluster(opDescribe),
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrListPartitionReassignmentsRequest() },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode }},
		{name: "OffsetDelete/group", key: 47, want: errGroupAuth, grants: slices.Concat(onGroup(opDelete), onTopic(opRead)),
			setup: (*aclEnv).commitOffset, req: offsetDeleteReq, code: offsetDeleteCode},
		{name: "OffsetDelete/topic", key: 47, want: errTopicAuth, base: onGroup(opDelete), grants: onTopic(opRead),
			setup: (*aclEnv).commitOffset, req: offsetDeleteReq, code: offsetDeleteCode},
		{name: "DescribeClientQuotas", key: 48, want: errClusterAuth, grants: onCluster(opDescribeConfigs),
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrDescribeClientQuotasRequest() },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeClientQuotasResponse).ErrorCode }},
		{name: "AlterClientQuotas", key: 49, want: errClusterAuth, grants: onCluster(opAlterConfigs),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrAlterClientQuotasRequest()
				re := kmsg.NewAlterClientQuotasRequestEntry()
				re.Entity = []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id", Name: kmsg.StringPtr("app")}}
				re.Ops = []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1024}}
				req.Entries = append(req.Entries, re)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode }},
		{name: "DescribeUserScramCredentials", key: 50, want: errClusterAuth, grants: onCluster(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
				req.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "alice"}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				resp := r.(*kmsg.DescribeUserSCRAMCredentialsResponse)
				if resp.Results[0].ErrorCode != resp.ErrorCode && resp.ErrorCode != 0 {
					return -2 // Kafka fails every user asked with the top-level error
				}
				return resp.ErrorCode
			}},
		{name: "AlterUserScramCredentials", key: 51, want: errClusterAuth, grants: onCluster(opAlter),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
				req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "alice", Mechanism: 1}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode }},
		{name: "DescribeQuorum", key: 55, want: errClusterAuth, grants: onCluster(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeQuorumRequest()
				rt := kmsg.NewDescribeQuorumRequestTopic()
				rt.Topic = clusterMetadataTopic
				rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeQuorumResponse).ErrorCode }},
		{name: "DescribeCluster", key: 60, // no ACL: only the cluster's authorized operations need DESCRIBE
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrDescribeClusterRequest() },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeClusterResponse).ErrorCode }},
		{name: "DescribeProducers", key: 61, want: errTopicAuth, grants: onTopic(opRead),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic, rt.Partitions = "t", []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{name: "DescribeTransactions", key: 65, want: errTxnAuth, grants: onTxn(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeTransactionsRequest()
				req.TransactionalIDs = []string{"x"}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DescribeTransactionsResponse).TransactionStates[0].ErrorCode
			}},
		{name: "ListTransactions", key: 66, want: leftOut, grants: onTxn(opDescribe), setup: (*aclEnv).beginTxn,
			req: func(*aclEnv) kmsg.Request { return kmsg.NewPtrListTransactionsRequest() },
			code: func(r kmsg.Response) int16 {
				for _, s := range r.(*kmsg.ListTransactionsResponse).TransactionStates {
					if s.TransactionalID == "x" {
						return 0
					}
				}
				return leftOut
			}},
		{name: "ConsumerGroupHeartbeat/group", key: 68, want: errGroupAuth, grants: slices.Concat(onGroup(opRead), onTopic(opDescribe)),
			req: consumerHeartbeatReq, code: consumerHeartbeatCode},
		{name: "ConsumerGroupHeartbeat/topic", key: 68, want: errTopicAuth, base: onGroup(opRead), grants: onTopic(opDescribe),
			req: consumerHeartbeatReq, code: consumerHeartbeatCode},
		{name: "ConsumerGroupDescribe", key: 69, want: errGroupAuth, grants: onGroup(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrConsumerGroupDescribeRequest()
				req.Groups = []string{"g"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ConsumerGroupDescribeResponse).Groups[0].ErrorCode }},
		{name: "GetTelemetrySubscriptions", key: 71, // no ACL, as in Kafka
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrGetTelemetrySubscriptionsRequest() },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.GetTelemetrySubscriptionsResponse).ErrorCode }},
		{name: "PushTelemetry", key: 72, // no ACL: an unknown subscription, not an authorization error
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrPushTelemetryRequest()
				req.ClientInstanceID, req.SubscriptionID = [16]byte{1}, telemetrySubscriptionID([16]byte{1})
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.PushTelemetryResponse).ErrorCode }},
		{name: "ListConfigResources", key: 74, want: errClusterAuth, grants: onCluster(opDescribeConfigs),
			req:  func(*aclEnv) kmsg.Request { return kmsg.NewPtrListConfigResourcesRequest() },
			code: func(r kmsg.Response) int16 { return r.(*kmsg.ListConfigResourcesResponse).ErrorCode }},
		{name: "DescribeTopicPartitions", key: 75, want: errTopicAuth, grants: onTopic(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrDescribeTopicPartitionsRequest()
				req.ResponsePartitionLimit = 10
				req.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "t"}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.DescribeTopicPartitionsResponse).Topics[0].ErrorCode }},
		{name: "StreamsGroupHeartbeat", key: 88, want: errGroupAuth, grants: onGroup(opRead), req: streamsHeartbeatACLReq,
			code: func(r kmsg.Response) int16 { return r.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode }},
		{name: "StreamsGroupDescribe", key: 89, want: errGroupAuth, grants: onGroup(opDescribe),
			req: func(*aclEnv) kmsg.Request {
				req := kmsg.NewPtrStreamsGroupDescribeRequest()
				req.Groups = []string{"g"}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.StreamsGroupDescribeResponse).Groups[0].ErrorCode }},
	}
	cases = append(cases, shareCoordACLCases()...) // share_coord_acl_cases_test.go
	cases = append(cases, shareACLCases()...)      // keys 76-79 (share_acl_cases_test.go)
	cases = append(cases, wireKeysACLCases()...)   // acl_wire_keys_cases_test.go
	for i := range cases {
		if cases[i].pin == 0 {
			cases[i].pin = -1
		}
	}
	return cases
}
