package reference

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus of the API keys Kafka 4.4 answers with the feature off or
// from its fixed topology (delegation tokens without a secret,
// UpdateFeatures, UnregisterBroker/Controller, Add/RemoveRaftVoter,
// StreamsGroupTopologyDescriptionUpdate without a plugin), and of the
// topic-id versions of OffsetCommit/OffsetFetch (v10) and TxnOffsetCommit
// (v6).

// withCorpusIDs gives the topic "corpus" its id in OffsetCommit,
// OffsetFetch and TxnOffsetCommit requests, as a client does at the
// versions that name topics by id; older versions ignore the field.
func withCorpusIDs(e *corpusEnv, req kmsg.Request) kmsg.Request {
	switch r := req.(type) {
	case *kmsg.OffsetCommitRequest:
		for i := range r.Topics {
			if r.Topics[i].Topic == "corpus" {
				r.Topics[i].TopicID = e.topicID
			}
		}
	case *kmsg.TxnOffsetCommitRequest:
		for i := range r.Topics {
			if r.Topics[i].Topic == "corpus" {
				r.Topics[i].TopicID = e.topicID
			}
		}
	case *kmsg.OffsetFetchRequest:
		for i := range r.Groups {
			for j := range r.Groups[i].Topics {
				if r.Groups[i].Topics[j].Topic == "corpus" {
					r.Groups[i].Topics[j].TopicID = e.topicID
				}
			}
		}
	}
	return req
}

// noSuchTopicID is an id no topic has.
var noSuchTopicID = [16]byte{0xde, 0xad}

func featureUpdateReq(v int16, validate bool, ups ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesRequest {
	req := at(v, kmsg.NewPtrUpdateFeaturesRequest())
	req.TimeoutMillis, req.ValidateOnly, req.FeatureUpdates = 10000, validate, ups
	return req
}

func featureUp(name string, level int16, typ int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType, u.AllowDowngrade = name, level, typ, typ == 2
	return u
}

// wireKeysCase is the corpus's valid request of the new keys at the oldest
// and newest common version.
func wireKeysCase(key, v int16, oldest bool) (corpusCase, bool) {
	c := corpusCase{name: fmt.Sprintf("%s/v%d", kmsg.NameForKey(key), v)}
	switch kmsg.Key(key) {
	case kmsg.CreateDelegationToken:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrCreateDelegationTokenRequest())
			req.MaxLifetimeMillis = 60000
			if !oldest {
				req.OwnerPrincipalType, req.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("bob")
			}
			return req
		}
	case kmsg.RenewDelegationToken:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrRenewDelegationTokenRequest())
			req.HMAC, req.RenewTimeMillis = []byte("not-a-token"), 1000
			return req
		}
	case kmsg.ExpireDelegationToken:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrExpireDelegationTokenRequest())
			req.HMAC, req.ExpiryPeriodMillis = []byte("not-a-token"), -1
			return req
		}
	case kmsg.DescribeDelegationToken:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrDescribeDelegationTokenRequest())
			if !oldest {
				o := kmsg.NewDescribeDelegationTokenRequestOwner()
				o.PrincipalType, o.PrincipalName = "User", "bob"
				req.Owners = append(req.Owners, o)
			}
			return req
		}
	case kmsg.UpdateFeatures:
		c.req = func(*corpusEnv) kmsg.Request {
			if oldest { // v0 has no validate-only: an empty update changes nothing
				return featureUpdateReq(v, false)
			}
			return featureUpdateReq(v, true, featureUp("transaction.version", 1, 2))
		}
	case kmsg.UnregisterBroker:
		// Never a registered broker: Kafka would take it out of the cluster.
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrUnregisterBrokerRequest())
			req.BrokerID = 7
			return req
		}
	case kmsg.AddRaftVoter:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrAddRaftVoterRequest())
			req.VoterID, req.TimeoutMillis = 7, 5000
			if !oldest {
				req.VoterDirectoryID = [16]byte{1}
				l := kmsg.NewAddRaftVoterRequestListener()
				l.Name, l.Host, l.Port = "CONTROLLER", "127.0.0.1", 9
				req.Listeners = append(req.Listeners, l)
			}
			return req
		}
	case kmsg.RemoveRaftVoter:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrRemoveRaftVoterRequest())
			req.VoterID, req.VoterDirectoryID = 7, [16]byte{1}
			return req
		}
	case kmsg.StreamsGroupTopologyDescriptionUpdate:
		c.group = "cg"
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest())
			req.Group, req.MemberID, req.TopologyEpoch = "cg", "m", 0
			return req
		}
	case kmsg.UnregisterController:
		c.req = func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrUnregisterControllerRequest())
			req.ControllerID = 7
			return req
		}
	default:
		return c, false
	}
	return c, true
}

// learnTopology keeps the target's active controller and cluster id.
func learnTopology(r *run, e *corpusEnv) {
	q := at(0, kmsg.NewPtrDescribeQuorumRequest())
	qt := kmsg.NewDescribeQuorumRequestTopic()
	qt.Topic = "__cluster_metadata"
	qt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
	q.Topics = append(q.Topics, qt)
	e.controller = r.do(1, q).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0].LeaderID
	m := at(12, kmsg.NewPtrMetadataRequest())
	if id := r.do(1, m).(*kmsg.MetadataResponse).ClusterID; id != nil {
		e.clusterID = *id
	}
}

// wireKeysEdgeCases are the error paths of the new keys and versions, at
// the newest common version.
func wireKeysEdgeCases(latest func(kmsg.Key) int16) []corpusCase {
	uf := func(name string, validate bool, ups ...kmsg.UpdateFeaturesRequestFeatureUpdate) corpusCase {
		return corpusCase{name: "UpdateFeatures/" + name, req: func(*corpusEnv) kmsg.Request {
			return featureUpdateReq(latest(kmsg.UpdateFeatures), validate, ups...)
		}}
	}
	commitIDs := func(generation int32, member string, topics ...kmsg.OffsetCommitRequestTopic) func(*corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(latest(kmsg.OffsetCommit), kmsg.NewPtrOffsetCommitRequest())
			req.Group, req.Generation, req.MemberID = "cg-ids", generation, member
			for _, t := range topics {
				if t.Topic == "corpus" {
					t.TopicID = e.topicID
				}
				req.Topics = append(req.Topics, t)
			}
			return req
		}
	}
	parts := func(ps ...int32) []kmsg.OffsetCommitRequestTopicPartition {
		var out []kmsg.OffsetCommitRequestTopicPartition
		for _, p := range ps {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.Metadata = p, 4, kmsg.StringPtr("ids")
			out = append(out, rp)
		}
		return out
	}
	fetchIDs := func(group string, all bool) func(*corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(latest(kmsg.OffsetFetch), kmsg.NewPtrOffsetFetchRequest())
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = group
			if !all {
				g.Topics = []kmsg.OffsetFetchRequestGroupTopic{
					{TopicID: e.topicID, Partitions: []int32{0, 1, 7}},
					{TopicID: noSuchTopicID, Partitions: []int32{0}},
				}
			}
			req.Groups = append(req.Groups, g)
			return req
		}
	}
	return []corpusCase{
		// Delegation tokens, off: a renewer that is not a User.
		{name: "CreateDelegationToken/group-renewer", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.CreateDelegationToken), kmsg.NewPtrCreateDelegationTokenRequest())
			req.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "Group", PrincipalName: "x"}}
			return req
		}},
		// UpdateFeatures: each of the controller's checks, validate-only.
		uf("upgrade-type-unknown", true, featureUp("share.version", 1, 0)),
		uf("negative-level", true, featureUp("share.version", -1, 2)),
		uf("above-supported", true, featureUp("transaction.version", 3, 1)),
		uf("unknown-feature", true, featureUp("no.such.version", 1, 1)),
		uf("unknown-feature-at-0", true, featureUp("no.such.version", 0, 2)),
		uf("downgrade-as-upgrade", true, featureUp("share.version", 1, 1)),
		uf("upgrade-as-downgrade", true, featureUp("eligible.leader.replicas.version", 1, 2)),
		uf("same-level", true, featureUp("transaction.version", 2, 1)),
		uf("metadata-version-downgrade", true, featureUp("metadata.version", 32, 2)),
		uf("metadata-version-unsafe-downgrade", true, featureUp("metadata.version", 32, 3)),
		uf("metadata-version-above", true, featureUp("metadata.version", 34, 1)),
		uf("kraft-version-upgrade", true, featureUp("kraft.version", 1, 1)),
		uf("kraft-version-downgrade", true, featureUp("kraft.version", 0, 3)),
		uf("group-version-downgrade", true, featureUp("group.version", 0, 2)),
		uf("streams-version-downgrade", true, featureUp("streams.version", 0, 3)),
		uf("transaction-version-downgrade", true, featureUp("transaction.version", 1, 2)),
		uf("one-bad-fails-all", true, featureUp("share.version", 1, 2), featureUp("no.such.version", 1, 1)),
		{name: "UpdateFeatures/v1-results", req: func(*corpusEnv) kmsg.Request {
			return featureUpdateReq(1, true, featureUp("share.version", 1, 2), featureUp("share.version", 2, 1), featureUp("group.version", 1, 1))
		}},
		{name: "UpdateFeatures/v0-downgrade-without-allow", req: func(*corpusEnv) kmsg.Request {
			return featureUpdateReq(0, false, featureUp("share.version", 1, 0))
		}},
		// The fixed topology: the active controller cannot unregister
		// itself; the quorum is static (kraft.version 0).
		{name: "UnregisterController/active", settle: learnTopology, req: func(e *corpusEnv) kmsg.Request {
			req := at(latest(kmsg.UnregisterController), kmsg.NewPtrUnregisterControllerRequest())
			req.ControllerID = e.controller
			return req
		}},
		{name: "UnregisterBroker/negative", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.UnregisterBroker), kmsg.NewPtrUnregisterBrokerRequest())
			req.BrokerID = -1
			return req
		}},
		{name: "AddRaftVoter/wrong-cluster", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.AddRaftVoter), kmsg.NewPtrAddRaftVoterRequest())
			req.ClusterID, req.VoterID, req.VoterDirectoryID = kmsg.StringPtr("no-such-cluster"), 7, [16]byte{1}
			return req
		}},
		{name: "AddRaftVoter/no-controller-endpoint", req: func(e *corpusEnv) kmsg.Request {
			req := at(latest(kmsg.AddRaftVoter), kmsg.NewPtrAddRaftVoterRequest())
			req.ClusterID, req.VoterID, req.VoterDirectoryID, req.TimeoutMillis = &e.clusterID, 7, [16]byte{1}, 5000
			return req
		}},
		{name: "AddRaftVoter/static-quorum", req: func(e *corpusEnv) kmsg.Request {
			req := at(latest(kmsg.AddRaftVoter), kmsg.NewPtrAddRaftVoterRequest())
			req.ClusterID, req.VoterID, req.VoterDirectoryID, req.TimeoutMillis = &e.clusterID, 7, [16]byte{1}, 5000
			req.Listeners = []kmsg.AddRaftVoterRequestListener{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9}}
			return req
		}},
		{name: "RemoveRaftVoter/no-directory-id", req: func(e *corpusEnv) kmsg.Request {
			req := at(latest(kmsg.RemoveRaftVoter), kmsg.NewPtrRemoveRaftVoterRequest())
			req.ClusterID, req.VoterID = &e.clusterID, e.controller
			return req
		}},
		{name: "RemoveRaftVoter/wrong-cluster", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.RemoveRaftVoter), kmsg.NewPtrRemoveRaftVoterRequest())
			req.ClusterID, req.VoterID, req.VoterDirectoryID = kmsg.StringPtr("no-such-cluster"), 7, [16]byte{1}
			return req
		}},
		{name: "StreamsGroupTopologyDescriptionUpdate/unknown-group", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.StreamsGroupTopologyDescriptionUpdate), kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest())
			req.Group, req.MemberID, req.TopologyEpoch = "no-such-group", "m", 3
			return req
		}},
		// Offsets by topic id: the broker's answers (an unknown id, a
		// missing partition) first, whatever the group says.
		{name: "OffsetCommit/ids-unknown-id-and-partition", group: "cg-ids", req: commitIDs(-1, "",
			kmsg.OffsetCommitRequestTopic{Topic: "corpus", Partitions: parts(0, 9, 1)},
			kmsg.OffsetCommitRequestTopic{TopicID: noSuchTopicID, Partitions: parts(0)})},
		{name: "OffsetCommit/ids-unknown-member", group: "cg-ids", req: commitIDs(4, "no-such-member",
			kmsg.OffsetCommitRequestTopic{TopicID: noSuchTopicID, Partitions: parts(2)},
			kmsg.OffsetCommitRequestTopic{Topic: "corpus", Partitions: parts(2, 9)})},
		{name: "OffsetCommit/ids-only-unknown", group: "cg-ids", req: commitIDs(4, "no-such-member",
			kmsg.OffsetCommitRequestTopic{TopicID: noSuchTopicID, Partitions: parts(0, 1)})},
		{name: "OffsetFetch/ids", group: "cg-ids", req: fetchIDs("cg-ids", false)},
		{name: "OffsetFetch/ids-all", group: "cg-ids", req: fetchIDs("cg-ids", true)},
		{name: "OffsetFetch/ids-unknown-group", group: "no-such-group", req: fetchIDs("no-such-group", false)},
		{name: "TxnOffsetCommit/ids-unknown-id", group: "cg-ids", req: func(e *corpusEnv) kmsg.Request {
			req := at(latest(kmsg.TxnOffsetCommit), kmsg.NewPtrTxnOffsetCommitRequest())
			req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "no-such-txn", "cg-ids", 4242, 0, -1
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.TopicID = noSuchTopicID
			rt.Partitions = []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}
			req.Topics = append(req.Topics, rt)
			return req
		}},
		// DescribeGroups v6 (KIP-1043): not found, not classic, classic.
		{name: "DescribeGroups/unknown-group", group: "no-such-group", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeGroups), kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{"no-such-group"}
			return req
		}},
		{name: "DescribeGroups/unknown-group-authorized-operations", group: "no-such-group", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeGroups), kmsg.NewPtrDescribeGroupsRequest())
			req.Groups, req.IncludeAuthorizedOperations = []string{"no-such-group"}, true
			return req
		}},
		{name: "DescribeGroups/v5-unknown-group-authorized-operations", group: "no-such-group", req: func(*corpusEnv) kmsg.Request {
			req := at(5, kmsg.NewPtrDescribeGroupsRequest())
			req.Groups, req.IncludeAuthorizedOperations = []string{"no-such-group"}, true
			return req
		}},
		{name: "DescribeGroups/classic-authorized-operations", group: "cg-ids", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeGroups), kmsg.NewPtrDescribeGroupsRequest())
			req.Groups, req.IncludeAuthorizedOperations = []string{"cg-ids"}, true
			return req
		}},
		{name: "DescribeGroups/consumer-group", group: corpusGroup, req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeGroups), kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{corpusGroup}
			return req
		}},
		{name: "DescribeGroups/simple-commits-only", group: "cg-ids", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeGroups), kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{"cg-ids"}
			return req
		}},
		{name: "DeleteGroups/empty-group", group: "cg-ids", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DeleteGroups), kmsg.NewPtrDeleteGroupsRequest())
			req.Groups = []string{"cg-ids"}
			return req
		}},
		{name: "DescribeGroups/deleted-group", group: "cg-ids", req: func(*corpusEnv) kmsg.Request {
			req := at(latest(kmsg.DescribeGroups), kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{"cg-ids"}
			return req
		}},
	}
}
