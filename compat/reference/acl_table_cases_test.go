package reference

// The scenes of TestACLTable. Connections come from 127.0.0.1, so hosts
// 127.0.0.1, 127.0.0.0/8, 0.0.0.0/0 and 127.0.0.1/32 match and 127.0.0.2,
// 10.0.0.0/8, ::1 and ::/0 do not.

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var principals = []string{"alice", "bob", "carol", "dave"}

const (
	rtTopic, rtGroup, rtCluster, rtTxn = kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeCluster, kmsg.ACLResourceTypeTransactionalId
	literal, prefixed                  = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	allowed, denied                    = kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny

	oAll, oRead, oWrite, oCreate, oDelete, oAlter, oDescribe = kmsg.ACLOperationAll, kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe
	oDescribeConfigs, oAlterConfigs, oIdempotentWrite        = kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite
)

// b is a binding for User:who (who may carry its own type, "Group:x").
func b(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, name, who, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) binding {
	if !strings.Contains(who, ":") {
		who = "User:" + who
	}
	return binding{rt, name, pt, who, host, op, perm}
}

// onT is an ALLOW of op on literal topic acl-t for who from any host.
func onT(who string, op kmsg.ACLOperation) binding {
	return b(rtTopic, literal, "acl-t", who, "*", op, allowed)
}

func onG(who string, op kmsg.ACLOperation) binding {
	return b(rtGroup, literal, "acl-g", who, "*", op, allowed)
}

func onC(who string, op kmsg.ACLOperation) binding {
	return b(rtCluster, literal, "kafka-cluster", who, "*", op, allowed)
}

// each is the checks for every one of who.
func each(who []string, checks ...func(who string) aclCheck) []aclCheck {
	var out []aclCheck
	for _, w := range who {
		for _, c := range checks {
			out = append(out, c(w))
		}
	}
	return out
}

var (
	topicChecks   = []func(string) aclCheck{metaTopic, metaAll, topicConfigs, produceT, fetchT, describeTopicPartitions}
	groupChecks   = []func(string) aclCheck{describeGroup, offsetFetchAll, offsetFetchT, findGroup, listGroups, consumerGroupDescribe}
	clusterChecks = []func(string) aclCheck{describeCluster, describeACLs, createTopicValidate, idempotentPID, brokerConfigs}
	txnChecks     = []func(string) aclCheck{findTxn, txnPID, describeTxn, listTxnsCheck}
)

func aclScenes(vers map[int16][2]int16) []aclScene {
	all := append([]string{"admin"}, principals...)
	var allChecks []func(string) aclCheck
	for _, cs := range [][]func(string) aclCheck{topicChecks, groupChecks, clusterChecks, txnChecks} {
		allChecks = append(allChecks, cs...)
	}
	scenes := []aclScene{
		{title: "no ACLs", checks: append(each(all, allChecks...), each([]string{"alice"}, offsetFetchOld(1), offsetFetchOld(2), offsetFetchOld(7))...)},
		{title: "alice DESCRIBE acl-t", acls: []binding{onT("alice", oDescribe)},
			checks: each([]string{"alice", "bob"}, topicChecks...)},
		{title: "alice READ acl-t (implies DESCRIBE)", acls: []binding{onT("alice", oRead)},
			checks: each([]string{"alice"}, topicChecks...)},
		{title: "alice WRITE acl-t (implies DESCRIBE)", acls: []binding{onT("alice", oWrite)},
			checks: each([]string{"alice"}, topicChecks...)},
		{title: "alice DELETE, bob ALTER acl-t (imply DESCRIBE)", acls: []binding{onT("alice", oDelete), onT("bob", oAlter)},
			checks: each([]string{"alice", "bob"}, topicChecks...)},
		{title: "alice CREATE, bob ALTER_CONFIGS, carol DESCRIBE_CONFIGS, dave ALL acl-t",
			acls:   []binding{onT("alice", oCreate), onT("bob", oAlterConfigs), onT("carol", oDescribeConfigs), onT("dave", oAll)},
			checks: each(principals, topicChecks...)},
		{title: "User:* READ acl-t", acls: []binding{onT("*", oRead)}, checks: each(principals, topicChecks...)},
		{title: "patterns: alice PREFIXED acl-, bob PREFIXED acl-t, carol LITERAL *, dave PREFIXED *",
			acls: []binding{b(rtTopic, prefixed, "acl-", "alice", "*", oDescribe, allowed), b(rtTopic, prefixed, "acl-t", "bob", "*", oDescribe, allowed),
				b(rtTopic, literal, "*", "carol", "*", oDescribe, allowed), b(rtTopic, prefixed, "*", "dave", "*", oDescribe, allowed)},
			checks: each(principals, metaTopic, metaAll)},
		{title: "hosts: alice 127.0.0.1, bob 127.0.0.2, carol 127.0.0.0/8, dave 10.0.0.0/8",
			acls: []binding{b(rtTopic, literal, "acl-t", "alice", "127.0.0.1", oRead, allowed), b(rtTopic, literal, "acl-t", "bob", "127.0.0.2", oRead, allowed),
				b(rtTopic, literal, "acl-t", "carol", "127.0.0.0/8", oRead, allowed), b(rtTopic, literal, "acl-t", "dave", "10.0.0.0/8", oRead, allowed)},
			checks: append(each(principals, metaTopic, fetchT, metaAll), describeACLsByHost("127.0.0.1"), describeACLsByHost("127.0.0.0/8"))},
		{title: "hosts: alice ::1, bob ::/0, carol 0.0.0.0/0, dave 127.0.0.1/32",
			acls: []binding{b(rtTopic, literal, "acl-t", "alice", "::1", oRead, allowed), b(rtTopic, literal, "acl-t", "bob", "::/0", oRead, allowed),
				b(rtTopic, literal, "acl-t", "carol", "0.0.0.0/0", oRead, allowed), b(rtTopic, literal, "acl-t", "dave", "127.0.0.1/32", oRead, allowed)},
			checks: each(principals, metaTopic, fetchT)},
		{title: "hosts: ranges 10.1.0.0/16, 127.0.0.9/8, fd00::/8, 127.0.0.0/31",
			acls: []binding{b(rtTopic, literal, "acl-t", "alice", "10.1.0.0/16", oRead, allowed), b(rtTopic, literal, "acl-t", "bob", "127.0.0.9/8", oRead, allowed),
				b(rtTopic, literal, "acl-t", "carol", "fd00::/8", oRead, allowed), b(rtTopic, literal, "acl-t", "dave", "127.0.0.0/31", oRead, allowed)},
			checks: each(principals, metaTopic, fetchT)},
		{title: "DENY over ALLOW: User:* ALL acl-t; DENY alice DESCRIBE, bob READ, carol ALL from 127.0.0.0/8, dave ALL from 10.0.0.0/8",
			acls: []binding{onT("*", oAll), b(rtTopic, literal, "acl-t", "alice", "*", oDescribe, denied), b(rtTopic, literal, "acl-t", "bob", "*", oRead, denied),
				b(rtTopic, literal, "acl-t", "carol", "127.0.0.0/8", oAll, denied), b(rtTopic, literal, "acl-t", "dave", "10.0.0.0/8", oAll, denied)},
			checks: each(principals, topicChecks...)},
		{title: "DENY by pattern: User:* DESCRIBE *; DENY alice PREFIXED acl-, bob acl-tx, carol from 127.0.0.1, dave from 127.0.0.2",
			acls: []binding{b(rtTopic, literal, "*", "*", "*", oDescribe, allowed), b(rtTopic, prefixed, "acl-", "alice", "*", oDescribe, denied),
				b(rtTopic, literal, "acl-tx", "bob", "*", oDescribe, denied), b(rtTopic, literal, "*", "carol", "127.0.0.1", oDescribe, denied),
				b(rtTopic, literal, "*", "dave", "127.0.0.2", oDescribe, denied)},
			checks: each(principals, metaTopic, metaAll)},
		{title: "DENY of one operation: alice WRITE+DENY READ, bob ALTER_CONFIGS+DENY DESCRIBE_CONFIGS, carol ALL+DENY DESCRIBE, dave READ+DENY WRITE",
			acls: []binding{onT("alice", oWrite), b(rtTopic, literal, "acl-t", "alice", "*", oRead, denied),
				onT("bob", oAlterConfigs), b(rtTopic, literal, "acl-t", "bob", "*", oDescribeConfigs, denied),
				onT("carol", oAll), b(rtTopic, literal, "acl-t", "carol", "*", oDescribe, denied),
				onT("dave", oRead), b(rtTopic, literal, "acl-t", "dave", "*", oWrite, denied)},
			checks: each(principals, topicChecks...)},
		{title: "super user: DENY User:* ALL on every resource", acls: []binding{b(rtTopic, literal, "*", "*", "*", oAll, denied),
			b(rtGroup, literal, "*", "*", "*", oAll, denied), b(rtCluster, literal, "kafka-cluster", "*", "*", oAll, denied)},
			checks: each([]string{"admin", "alice"}, metaTopic, topicConfigs, describeGroup, describeCluster)},
		{title: "principals are exact: User:Alice READ, Group:bob READ, User:carol READ", acls: []binding{onT("User:Alice", oRead), onT("Group:bob", oRead), onT("carol", oRead)},
			checks: each([]string{"alice", "bob", "carol"}, metaTopic)},
		{title: "groups: alice READ, bob DESCRIBE, carol DELETE, dave READ acl-g and DESCRIBE acl-t",
			acls: []binding{onG("alice", oRead), onG("bob", oDescribe), onG("carol", oDelete), onG("dave", oRead), onT("dave", oDescribe),
				b(rtGroup, literal, "acl-cg", "alice", "*", oDescribe, allowed), b(rtGroup, literal, "acl-cg", "bob", "*", oAlterConfigs, allowed),
				b(rtGroup, literal, "acl-cg", "carol", "*", oAll, allowed), b(rtGroup, literal, "acl-cg", "dave", "*", oDelete, allowed)},
			checks: each(principals, append(groupChecks, offsetFetchOld(1), offsetFetchOld(2), offsetFetchOld(7))...)},
		{title: "groups: alice ALL PREFIXED acl-, bob DESCRIBE *, carol DESCRIBE from 127.0.0.0/8, dave DESCRIBE from 10.0.0.0/8",
			acls: []binding{b(rtGroup, prefixed, "acl-", "alice", "*", oAll, allowed), b(rtGroup, literal, "*", "bob", "*", oDescribe, allowed),
				b(rtGroup, literal, "acl-g", "carol", "127.0.0.0/8", oDescribe, allowed), b(rtGroup, literal, "acl-g", "dave", "10.0.0.0/8", oDescribe, allowed)},
			checks: each(principals, groupChecks...)},
		{title: "groups: User:* DESCRIBE acl-g; DENY alice DESCRIBE, bob READ, carol from 127.0.0.1; dave ALTER_CONFIGS",
			acls: []binding{onG("*", oDescribe), b(rtGroup, literal, "acl-g", "alice", "*", oDescribe, denied), b(rtGroup, literal, "acl-g", "bob", "*", oRead, denied),
				b(rtGroup, literal, "acl-g", "carol", "127.0.0.1", oDescribe, denied), onG("dave", oAlterConfigs)},
			checks: each(principals, describeGroup, offsetFetchAll, listGroups)},
		{title: "cluster: alice DESCRIBE, bob CREATE, carol IDEMPOTENT_WRITE, dave ALTER",
			acls:   []binding{onC("alice", oDescribe), onC("bob", oCreate), onC("carol", oIdempotentWrite), onC("dave", oAlter)},
			checks: each(principals, clusterChecks...)},
		{title: "cluster: alice ALTER_CONFIGS, bob CREATE acl-new, carol CREATE+DESCRIBE_CONFIGS acl-new, dave ALL",
			acls: []binding{onC("alice", oAlterConfigs), b(rtTopic, literal, "acl-new", "bob", "*", oCreate, allowed),
				b(rtTopic, literal, "acl-new", "carol", "*", oCreate, allowed), b(rtTopic, literal, "acl-new", "carol", "*", oDescribeConfigs, allowed), onC("dave", oAll)},
			checks: each(principals, clusterChecks...)},
		{title: "cluster: User:* CREATE from 127.0.0.0/8; DENY bob CREATE; carol DESCRIBE_CONFIGS PREFIXED acl-; dave WRITE acl-t",
			acls: []binding{b(rtCluster, literal, "kafka-cluster", "*", "127.0.0.0/8", oCreate, allowed), b(rtCluster, literal, "kafka-cluster", "bob", "*", oCreate, denied),
				b(rtTopic, prefixed, "acl-", "carol", "*", oDescribeConfigs, allowed), onT("dave", oWrite)},
			checks: each(principals, createTopicValidate, idempotentPID, describeCluster)},
		{title: "transactions: alice WRITE acl-x, bob DESCRIBE acl-x, carol WRITE PREFIXED acl-, dave ALL * with DENY WRITE acl-x",
			acls: []binding{b(rtTxn, literal, "acl-x", "alice", "*", oWrite, allowed), b(rtTxn, literal, "acl-x", "bob", "*", oDescribe, allowed),
				b(rtTxn, prefixed, "acl-", "carol", "*", oWrite, allowed), b(rtTxn, literal, "*", "dave", "*", oAll, allowed),
				b(rtTxn, literal, "acl-x", "dave", "*", oWrite, denied)},
			checks: each(principals, txnChecks...)},
		{title: "CreateAcls hosts", checks: []aclCheck{createACLHosts("admin"), createACLHosts("alice")}},
		{title: "every API, no ACLs", checks: sweep(vers)},
	}
	return scenes
}

// allowEveryoneScenes run with allow.everyone.if.no.acl.found=true: a
// resource no ACL names is open to everyone; one that any ACL names (for
// anyone, any host, any operation) only to those its ACLs allow.
func allowEveryoneScenes() []aclScene {
	const e = "allow.everyone.if.no.acl.found: "
	open := []func(string) aclCheck{metaTopic, metaAll, topicConfigs, produceT, fetchT, describeGroup, offsetFetchAll,
		listGroups, describeCluster, describeACLs, createTopicValidate, idempotentPID, findTxn}
	return []aclScene{
		{title: e + "no ACLs", checks: each([]string{"alice"}, open...)},
		{title: e + "bob READ acl-t", acls: []binding{onT("bob", oRead)},
			checks: each([]string{"alice", "bob"}, metaTopic, metaAll, produceT, fetchT, topicConfigs)},
		{title: e + "DENY alice READ PREFIXED acl-", acls: []binding{b(rtTopic, prefixed, "acl-", "alice", "*", oRead, denied)},
			checks: each([]string{"alice", "bob"}, metaTopic, metaAll, fetchT)},
		{title: e + "carol CREATE on the cluster from 10.0.0.0/8", acls: []binding{b(rtCluster, literal, "kafka-cluster", "carol", "10.0.0.0/8", oCreate, allowed)},
			checks: each([]string{"carol", "dave"}, describeCluster, describeACLs, createTopicValidate, idempotentPID)},
		{title: e + "User:* DESCRIBE acl-g, DENY dave DESCRIBE acl-g", acls: []binding{onG("*", oDescribe), b(rtGroup, literal, "acl-g", "dave", "*", oDescribe, denied)},
			checks: each([]string{"carol", "dave"}, describeGroup, offsetFetchAll, findGroup)},
	}
}

// check is an aclCheck.
func check(who, what string, req func(s *aclSide) kmsg.Request, obs func(kmsg.Response) string) aclCheck {
	return aclCheck{who: who, what: what, req: req, obs: obs}
}

func metaTopic(who string) aclCheck {
	return check(who, "Metadata acl-t", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{topicReq("acl-t")}
		req.IncludeTopicAuthorizedOperations = true
		return req
	}, func(r kmsg.Response) string {
		t := r.(*kmsg.MetadataResponse).Topics[0]
		return fmt.Sprintf("%s, %d partitions, ops %s", errName(t.ErrorCode), len(t.Partitions), opNames(t.AuthorizedOperations))
	})
}

func metaAll(who string) aclCheck {
	return check(who, "Metadata all topics", func(*aclSide) kmsg.Request { return kmsg.NewPtrMetadataRequest() },
		func(r kmsg.Response) string {
			var names []string
			for _, t := range r.(*kmsg.MetadataResponse).Topics {
				names = append(names, *t.Topic)
			}
			return visible(names)
		})
}

// configsShown says whether any config came back.
func configsShown(n int) string {
	if n == 0 {
		return "no configs"
	}
	return "configs shown"
}

func topicConfigs(who string) aclCheck {
	return check(who, "DescribeConfigs acl-t", func(*aclSide) kmsg.Request {
		return describeConfigsReq(0, kmsg.ConfigResourceTypeTopic, "acl-t")
	}, func(r kmsg.Response) string {
		res := r.(*kmsg.DescribeConfigsResponse).Resources[0]
		return errName(res.ErrorCode) + ", " + configsShown(len(res.Configs))
	})
}

func brokerConfigs(who string) aclCheck {
	return check(who, "DescribeConfigs broker 1", func(*aclSide) kmsg.Request {
		return describeConfigsReq(0, kmsg.ConfigResourceTypeBroker, "1")
	}, func(r kmsg.Response) string {
		res := r.(*kmsg.DescribeConfigsResponse).Resources[0]
		return errName(res.ErrorCode) + ", " + configsShown(len(res.Configs))
	})
}

func produceT(who string) aclCheck {
	return check(who, "Produce acl-t", func(s *aclSide) kmsg.Request {
		req := produceReq(0, "acl-t", 0, 1, simpleBatch("v"))
		req.Topics[0].TopicID = s.topicID("acl-t")
		return req
	}, func(r kmsg.Response) string {
		return errName(r.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
	})
}

func fetchT(who string) aclCheck {
	return check(who, "Fetch acl-t", func(s *aclSide) kmsg.Request {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxBytes, req.SessionEpoch = -1, 1<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "acl-t", s.topicID("acl-t")
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = 1<<20, -1, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}, func(r kmsg.Response) string {
		resp := r.(*kmsg.FetchResponse)
		if resp.ErrorCode != 0 || len(resp.Topics) == 0 {
			return "top level " + errName(resp.ErrorCode)
		}
		return errName(resp.Topics[0].Partitions[0].ErrorCode)
	})
}

func describeTopicPartitions(who string) aclCheck {
	return check(who, "DescribeTopicPartitions acl-t", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit = 10
		req.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "acl-t"}}
		return req
	}, func(r kmsg.Response) string {
		t := r.(*kmsg.DescribeTopicPartitionsResponse).Topics[0]
		return fmt.Sprintf("%s, %d partitions, ops %s", errName(t.ErrorCode), len(t.Partitions), opNames(t.AuthorizedOperations))
	})
}

func describeGroup(who string) aclCheck {
	return check(who, "DescribeGroups acl-g", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups, req.IncludeAuthorizedOperations = []string{"acl-g"}, true
		return req
	}, func(r kmsg.Response) string {
		g := r.(*kmsg.DescribeGroupsResponse).Groups[0]
		return fmt.Sprintf("%s, state %q, ops %s", errName(g.ErrorCode), g.State, opNames(g.AuthorizedOperations))
	})
}

// consumerGroupDescribe asks for acl-g (a classic group: not a consumer
// group to this API) and acl-cg (a KIP-848 group without members).
func consumerGroupDescribe(who string) aclCheck {
	return check(who, "ConsumerGroupDescribe acl-g acl-cg", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups, req.IncludeAuthorizedOperations = []string{"acl-g", "acl-cg"}, true
		return req
	}, func(r kmsg.Response) string {
		var out []string
		for _, g := range r.(*kmsg.ConsumerGroupDescribeResponse).Groups {
			out = append(out, fmt.Sprintf("%s: %s, state %q, ops %s", g.Group, errName(g.ErrorCode), g.State, opNames(g.AuthorizedOperations)))
		}
		return strings.Join(out, "; ")
	})
}

func offsetFetchAll(who string) aclCheck {
	return check(who, "OffsetFetch acl-g (all topics)", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrOffsetFetchRequest()
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = "acl-g"
		req.Groups = append(req.Groups, g)
		return req
	}, offsetsListed)
}

func offsetFetchT(who string) aclCheck {
	return check(who, "OffsetFetch acl-g acl-t/0", func(s *aclSide) kmsg.Request {
		req := kmsg.NewPtrOffsetFetchRequest()
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = "acl-g"
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.TopicID, rt.Partitions = "acl-t", s.topicID("acl-t"), []int32{0}
		g.Topics = append(g.Topics, rt)
		req.Groups = append(req.Groups, g)
		return req
	}, offsetsListed)
}

// offsetFetchOld is OffsetFetch of acl-t/0 at version v, before groups
// (v8): the group's error is the response's (v2-7) or each partition's.
func offsetFetchOld(v int16) func(who string) aclCheck {
	return func(who string) aclCheck {
		c := check(who, fmt.Sprintf("OffsetFetch v%d acl-g acl-t/0", v), func(*aclSide) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Group = "acl-g"
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = "acl-t", []int32{0}
			req.Topics = append(req.Topics, rt)
			return req
		}, func(r kmsg.Response) string {
			resp := r.(*kmsg.OffsetFetchResponse)
			var parts []string
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					parts = append(parts, fmt.Sprintf("%s/%d@%d %s", t.Topic, p.Partition, p.Offset, errName(p.ErrorCode)))
				}
			}
			return fmt.Sprintf("%s, %d partitions listed %s", errName(resp.ErrorCode), len(parts), strings.Join(parts, " "))
		})
		c.at = v
		return c
	}
}

// offsetsListed is OffsetFetch's group error and the partitions it lists.
func offsetsListed(r kmsg.Response) string {
	g := r.(*kmsg.OffsetFetchResponse).Groups[0]
	var parts []string
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d@%d %s", t.Topic, p.Partition, p.Offset, errName(p.ErrorCode)))
		}
	}
	return fmt.Sprintf("%s, %d partitions listed %s", errName(g.ErrorCode), len(parts), strings.Join(parts, " "))
}

func findGroup(who string) aclCheck {
	return check(who, "FindCoordinator acl-g", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKeys = []string{"acl-g"}
		return req
	}, func(r kmsg.Response) string {
		return errName(r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode)
	})
}

func listGroups(who string) aclCheck {
	return check(who, "ListGroups", func(*aclSide) kmsg.Request { return kmsg.NewPtrListGroupsRequest() },
		func(r kmsg.Response) string {
			resp := r.(*kmsg.ListGroupsResponse)
			var names []string
			for _, g := range resp.Groups {
				names = append(names, g.Group)
			}
			return errName(resp.ErrorCode) + ", " + visible(names)
		})
}

func describeCluster(who string) aclCheck {
	return check(who, "DescribeCluster", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.IncludeClusterAuthorizedOperations = true
		return req
	}, func(r kmsg.Response) string {
		resp := r.(*kmsg.DescribeClusterResponse)
		return fmt.Sprintf("%s, ops %s", errName(resp.ErrorCode), opNames(resp.ClusterAuthorizedOperations))
	})
}

func describeACLsReq(host *string) *kmsg.DescribeACLsRequest {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType, req.Host = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny, host
	return req
}

func describedACLs(r kmsg.Response) string {
	resp := r.(*kmsg.DescribeACLsResponse)
	n := 0
	for _, res := range resp.Resources {
		n += len(res.ACLs)
	}
	return fmt.Sprintf("%s, %d ACLs", errName(resp.ErrorCode), n)
}

func describeACLs(who string) aclCheck {
	return check(who, "DescribeAcls", func(*aclSide) kmsg.Request { return describeACLsReq(nil) }, describedACLs)
}

// describeACLsByHost: a filter's host is compared as a string, never as a
// range.
func describeACLsByHost(host string) aclCheck {
	return check("admin", "DescribeAcls host="+host, func(*aclSide) kmsg.Request { return describeACLsReq(&host) }, describedACLs)
}

func createTopicValidate(who string) aclCheck {
	return check(who, "CreateTopics acl-new (validate only)", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly, req.TimeoutMillis = true, 30000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "acl-new", 2, 1
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = "retention.ms", kmsg.StringPtr("1000")
		rt.Configs = append(rt.Configs, c)
		req.Topics = append(req.Topics, rt)
		return req
	}, func(r kmsg.Response) string {
		t := r.(*kmsg.CreateTopicsResponse).Topics[0]
		return fmt.Sprintf("%s, configs %s, partitions %d, rf %d, %s", errName(t.ErrorCode), errName(t.ConfigErrorCode),
			t.NumPartitions, t.ReplicationFactor, configsShown(len(t.Configs)))
	})
}

func idempotentPID(who string) aclCheck {
	return check(who, "InitProducerId (idempotent)", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
		return req
	}, func(r kmsg.Response) string { return errName(r.(*kmsg.InitProducerIDResponse).ErrorCode) })
}

func findTxn(who string) aclCheck {
	return check(who, "FindCoordinator txn acl-x", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKeys = 1, []string{"acl-x"}
		return req
	}, func(r kmsg.Response) string {
		return errName(r.(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorCode)
	})
}

func txnPID(who string) aclCheck {
	return check(who, "InitProducerId acl-x", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = kmsg.StringPtr("acl-x")
		req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
		return req
	}, func(r kmsg.Response) string { return errName(r.(*kmsg.InitProducerIDResponse).ErrorCode) })
}

func describeTxn(who string) aclCheck {
	return check(who, "DescribeTransactions acl-x", func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{"acl-x"}
		return req
	}, func(r kmsg.Response) string {
		return errName(r.(*kmsg.DescribeTransactionsResponse).TransactionStates[0].ErrorCode)
	})
}

func listTxnsCheck(who string) aclCheck {
	return check(who, "ListTransactions", func(*aclSide) kmsg.Request { return kmsg.NewPtrListTransactionsRequest() },
		func(r kmsg.Response) string {
			resp := r.(*kmsg.ListTransactionsResponse)
			var names []string
			for _, s := range resp.TransactionStates {
				names = append(names, s.TransactionalID)
			}
			return errName(resp.ErrorCode) + ", " + visible(names)
		})
}

// createACLHosts creates ACLs with hosts Kafka 4.4 accepts (ranges) and
// refuses (malformed ranges, an empty host); the scene's cleanup deletes
// what it created.
func createACLHosts(who string) aclCheck {
	hosts := []string{"10.1.0.0/16", "fd00::/8", "127.0.0.1/32", "10.0.0.0/33", "fd00::/129", "abc/8", "10.0.0/8", "", "not-an-address"}
	return check(who, "CreateAcls hosts "+strings.Join(hosts, " "), func(*aclSide) kmsg.Request {
		req := kmsg.NewPtrCreateACLsRequest()
		for _, h := range hosts {
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType, c.ResourceName, c.ResourcePatternType = rtTopic, "acl-hosts", literal
			c.Principal, c.Host, c.Operation, c.PermissionType = "User:bob", h, oRead, allowed
			req.Creations = append(req.Creations, c)
		}
		return req
	}, func(r kmsg.Response) string {
		var out []string
		for _, res := range r.(*kmsg.CreateACLsResponse).Results {
			out = append(out, errName(res.ErrorCode))
		}
		return strings.Join(out, " ")
	})
}

// sweep is one request per API key both clusters serve, sent by dave
// without any ACL: the request corpus's first request for the key (its
// well-formed one where it has one), at the newest common version,
// compared by every error code in the answer.
func sweep(vers map[int16][2]int16) []aclCheck {
	first := map[int16]corpusCase{}
	for _, c := range corpusCases(vers) {
		if key, ok := standalone(c); ok {
			if _, seen := first[key]; !seen {
				first[key] = c
			}
		}
	}
	var out []aclCheck
	for key := int16(0); key < 200; key++ {
		v, ok := vers[key]
		if !ok || key == 17 || key == 36 { // SASL: every login
			continue
		}
		c, ok := validCase(key, v[1])
		if !ok {
			if c, ok = first[key]; !ok {
				continue // TestACLTable reports the key as not covered
			}
		}
		out = append(out, check("dave", kmsg.NameForKey(key), func(s *aclSide) kmsg.Request {
			req := c.req(s.env)
			produceTopicIDs(s.env, req)
			return req
		}, errorCodes))
	}
	return out
}

// standalone says whether c's request can be built without what earlier
// corpus cases learn (some read their answers), and its key.
func standalone(c corpusCase) (key int16, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return c.req(&corpusEnv{}).Key(), true
}

// aclTableDifferences explains every row where fakekafka's answer differs
// from Kafka's and is left so, keyed by the row's title.
var aclTableDifferences = map[string]string{}
