package server

// Metadata, versions 0-13. v13's top-level ErrorCode (KIP-1102) is set,
// as in Kafka 4.4, only on a request failed as a whole
// (metadata_request_errors.go): a null topic name before v12, a topic with
// neither name nor id from v12.
//
// Any broker answers. Brokers lists every broker that is up; ClusterID (v2+)
// and ControllerID (v1+, the lowest live broker) follow. An empty topic list
// in v0 or a null one in v1+ means every topic; an empty list in v1+ means
// none.
//
// A requested topic that does not exist is auto-created when
// auto.create.topics.enable is on and (v4+) the request allows it. Kafka
// 4.4 asks its controller to create it and answers the request that asked
// before the topic exists: UNKNOWN_TOPIC_OR_PARTITION, no partitions, no
// topic id (compat/reference); ours exists at once, so the next request
// finds it. Otherwise the topic gets UNKNOWN_TOPIC_OR_PARTITION, or
// INVALID_TOPIC_EXCEPTION for an illegal name. v12 may ask by topic ID alone
// (UNKNOWN_TOPIC_ID when unknown; never auto-created).
//
// Per partition, as KRaft brokers do (KRaftMetadataCache): a leader that is
// -1 or on a broker that is down gives LEADER_NOT_AVAILABLE with leader -1,
// but the leader epoch (v7+), replicas in assignment order and the ISR are
// still filled in, unfiltered. OfflineReplicas (v5+) are replicas on brokers
// that are down. Only v0 drops unavailable replicas from the lists, with
// REPLICA_NOT_AVAILABLE.
//
// With the authorizer (KafkaApis.handleTopicMetadataRequest): a listing of
// every topic leaves out those the principal may not DESCRIBE; a topic asked
// for by name or ID without DESCRIBE gets TOPIC_AUTHORIZATION_FAILED
// whether it exists or not (by ID with a null name); auto-creation needs
// CREATE on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED.
// Authorized operations (v8+ topics, v8-10 cluster) are what the ACLs allow;
// the cluster's are 0 without DESCRIBE on it.

import (
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleMetadata(req *kmsg.MetadataRequest) (kmsg.Response, error) {
	c := cn.b.c
	if code := metadataRequestInvalid(req); code != 0 {
		c.log.Debug("metadata request refused as a whole", "broker", cn.b.id, "version", req.Version, "error", kerr.ErrorForCode(code))
		return metadataRequestError(req, code), nil
	}
	resp := req.ResponseKind().(*kmsg.MetadataResponse)

	for _, b := range c.brokers {
		if !b.registered() {
			continue
		}
		rb := kmsg.NewMetadataResponseBroker()
		rb.NodeID = b.id
		rb.Host, rb.Port = cn.advertisedOf(b)
		resp.Brokers = append(resp.Brokers, rb)
	}
	if req.Version >= 2 {
		resp.ClusterID = &c.cfg.ClusterID
	}
	resp.ControllerID = c.controller()
	if req.IncludeClusterAuthorizedOperations && req.Version >= 8 && req.Version <= 10 {
		resp.AuthorizedOperations = 0 // Kafka tells nothing without DESCRIBE
		if cn.allowedCluster(authorizer.OpDescribe) {
			resp.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceCluster, authorizer.ClusterName)
		}
	}

	// Before v4 there is no flag and auto-creation follows the broker alone.
	autoCreate := *c.cfg.AutoCreateTopics && (req.Version < 4 || req.AllowAutoTopicCreation)

	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if allTopics {
		for _, t := range c.topics.Load().byName {
			if !cn.allowedQuiet(authorizer.OpDescribe, authorizer.ResourceTopic, t.name) {
				continue // hidden, as Kafka hides them
			}
			resp.Topics = append(resp.Topics, cn.describeTopic(req, t))
		}
	} else {
		seenNames := map[string]bool{}
		seenIDs := map[[16]byte]bool{}
		for _, rt := range req.Topics {
			switch {
			case rt.TopicID != [16]byte{} || rt.Topic == nil:
				if rt.TopicID != [16]byte{} && seenIDs[rt.TopicID] {
					continue
				}
				seenIDs[rt.TopicID] = true
				resp.Topics = append(resp.Topics, cn.describeTopicByID(req, rt))
			default:
				name := *rt.Topic
				if seenNames[name] {
					continue // Kafka collects the names into a set
				}
				seenNames[name] = true
				resp.Topics = append(resp.Topics, cn.describeTopicByName(req, name, autoCreate))
			}
		}
	}

	// Stable output: by name, topics without a name (unknown IDs) last.
	slices.SortStableFunc(resp.Topics, func(a, b kmsg.MetadataResponseTopic) int {
		switch {
		case a.Topic == nil && b.Topic == nil:
			return 0
		case a.Topic == nil:
			return 1
		case b.Topic == nil:
			return -1
		}
		return strings.Compare(*a.Topic, *b.Topic)
	})
	return resp, nil
}

// describeTopicByName answers one topic requested by name, creating it if
// allowed.
func (cn *conn) describeTopicByName(req *kmsg.MetadataRequest, name string, autoCreate bool) kmsg.MetadataResponseTopic {
	c := cn.b.c
	rt := kmsg.NewMetadataResponseTopic()
	rt.Topic = &name
	if !cn.allowedTopic(authorizer.OpDescribe, name) {
		rt.ErrorCode = errTopicAuth // whether it exists or not
		return rt
	}
	if t := c.topic(name); t != nil {
		return cn.describeTopic(req, t)
	}
	if err := legalTopicName(name); err != nil {
		rt.ErrorCode = kerr.InvalidTopicException.Code
		return rt
	}
	if autoCreate && !cn.allowedCluster(authorizer.OpCreate) && !cn.allowedTopic(authorizer.OpCreate, name) {
		rt.ErrorCode = errTopicAuth
		return rt
	}
	if autoCreate {
		c.autoCreate(name) // answered below as Kafka answers it, not yet there
	}
	rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
	if req.IncludeTopicAuthorizedOperations && req.Version >= 8 {
		// Kafka reports them for a topic it may describe, known or not.
		rt.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceTopic, name)
	}
	return rt
}

// describeTopicByID answers one topic requested by ID. Kafka serves lookups
// by ID from v12 on only and refuses them (and null names) before.
func (cn *conn) describeTopicByID(req *kmsg.MetadataRequest, rt kmsg.MetadataRequestTopic) kmsg.MetadataResponseTopic {
	out := kmsg.NewMetadataResponseTopic()
	out.Topic, out.TopicID = rt.Topic, rt.TopicID
	if req.Version < 12 || rt.TopicID == [16]byte{} {
		out.ErrorCode = kerr.InvalidRequest.Code
		return out
	}
	t := cn.b.c.topicByID(rt.TopicID)
	if t == nil { // the ID wins over a name sent alongside it, as in Kafka
		out.ErrorCode = kerr.UnknownTopicID.Code
		return out
	}
	if !cn.allowedTopic(authorizer.OpDescribe, t.name) {
		out.Topic, out.ErrorCode = nil, errTopicAuth
		return out
	}
	return cn.describeTopic(req, t)
}

// describeTopic reports an existing topic, each partition read under its
// own lock.
func (cn *conn) describeTopic(req *kmsg.MetadataRequest, t *topic) kmsg.MetadataResponseTopic {
	c := cn.b.c
	rt := kmsg.NewMetadataResponseTopic()
	name := t.name
	rt.Topic = &name
	rt.TopicID = t.id
	rt.IsInternal = isInternalTopic(name)
	if req.IncludeTopicAuthorizedOperations && req.Version >= 8 {
		rt.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceTopic, name)
	}
	up := func(id int32) bool {
		b := c.broker(id)
		return b != nil && b.registered()
	}
	parts := t.partitions()
	rt.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(parts))
	for i, p := range parts {
		rp := &rt.Partitions[i]
		*rp = kmsg.NewMetadataResponseTopicPartition()
		rp.Partition = p.index

		p.mu.Lock()
		// A zombie leader's stale metadata still names itself.
		leader, epoch, isr := p.st.View(cn.b.id)
		if p.st.Replica(leader) == nil || !up(leader) {
			leader = -1
		}
		rp.LeaderEpoch = epoch
		rp.ISR = isr
		for _, r := range p.st.Replicas() {
			rp.Replicas = append(rp.Replicas, r.Broker)
			if !up(r.Broker) {
				rp.OfflineReplicas = append(rp.OfflineReplicas, r.Broker)
			}
		}
		p.mu.Unlock()

		rp.Leader = leader
		if leader < 0 {
			rp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		if rp.Replicas == nil {
			rp.Replicas = []int32{}
		}
		if rp.ISR == nil {
			rp.ISR = []int32{}
		}
		if req.Version == 0 && len(rp.OfflineReplicas) > 0 {
			offline := func(id int32) bool { return slices.Contains(rp.OfflineReplicas, id) }
			rp.Replicas = slices.DeleteFunc(rp.Replicas, offline)
			rp.ISR = slices.DeleteFunc(rp.ISR, offline)
			if rp.ErrorCode == 0 {
				rp.ErrorCode = kerr.ReplicaNotAvailable.Code
			}
		}
	}
	return rt
}
