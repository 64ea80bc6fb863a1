package server

// CreateTopics, versions 2-7.
//
// Any broker answers (Kafka brokers forward to the controller; we have one
// topic table). Creation is synchronous, so TimeoutMillis does not matter.
//
// Per topic: a name given more than once in the request gets one
// INVALID_REQUEST result and nothing is created for it, as in Kafka. An
// explicit ReplicaAssignment must name partitions 0..n-1 once each
// (INVALID_REPLICA_ASSIGNMENT), with NumPartitions and ReplicationFactor -1
// (INVALID_REQUEST); a null config value is INVALID_CONFIG. The rest of the
// validation (name, counts, brokers, config keys and values, an existing
// topic) is Cluster.createTopic's. ValidateOnly validates and answers as if
// created, without a topic ID.
//
// The result carries ErrorMessage (v1+); on success NumPartitions,
// ReplicationFactor and the explicitly set configs with source
// DYNAMIC_TOPIC_CONFIG (v5+), and the TopicID (v7+). Failed topics report
// -1 for the counts.
//
// With the authorizer a topic needs CREATE on the cluster or on itself
// (TOPIC_AUTHORIZATION_FAILED); without DESCRIBE_CONFIGS on it the result
// leaves the configs out, reports -1 for the partition count and the
// replication factor, and sets the config error code (tagged, v5+) to
// TOPIC_AUTHORIZATION_FAILED.
//
// Under a controller_mutation_rate quota each created topic takes its
// partition count (quotas_mutation.go); from v6 a topic over the quota is
// THROTTLING_QUOTA_EXCEEDED.

import (
	"fmt"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configSourceDynamicTopic is DescribeConfigs' DYNAMIC_TOPIC_CONFIG source.
const configSourceDynamicTopic = 1

func (cn *conn) handleCreateTopics(req *kmsg.CreateTopicsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)

	count := map[string]int{}
	for _, rt := range req.Topics {
		count[rt.Topic]++
	}
	reported := map[string]bool{}
	before := c.topics.Load().byName // what this request's names may collide with
	clusterCreate := cn.allowedCluster(authorizer.OpCreate)
	q := cn.mutationQuota(req.Version >= 6)
	defer q.done()
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		if count[rt.Topic] > 1 {
			if reported[rt.Topic] {
				continue
			}
			reported[rt.Topic] = true
			setCreateError(req.Version, &st, kerr.InvalidRequest, "Duplicate topic name.")
			resp.Topics = append(resp.Topics, st)
			continue
		}

		if !clusterCreate && !cn.allowedTopic(authorizer.OpCreate, rt.Topic) {
			setCreateError(req.Version, &st, kerr.TopicAuthorizationFailed, "Authorization failed.")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		spec, kerrv, msg := createSpec(rt)
		spec.before = before
		if kerrv != nil {
			setCreateError(req.Version, &st, kerrv, msg)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if q != nil && !req.ValidateOnly {
			// Validated first: only a creation that would happen takes quota.
			if _, kerrv, msg = c.createTopic(spec, true); kerrv == nil && !q.record(c.specPartitions(spec)) {
				kerrv, msg = errThrottlingQuota, errThrottlingQuota.Description
			}
			if kerrv != nil {
				setCreateError(req.Version, &st, kerrv, msg)
				resp.Topics = append(resp.Topics, st)
				continue
			}
		}
		t, kerrv, msg := c.createTopic(spec, req.ValidateOnly)
		if kerrv != nil {
			setCreateError(req.Version, &st, kerrv, msg)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if t != nil {
			st.TopicID = t.id
			st.NumPartitions = int32(len(t.partitions()))
			p0 := t.partitions()[0]
			p0.mu.Lock()
			st.ReplicationFactor = int16(len(p0.st.Replicas()))
			p0.mu.Unlock()
		} else { // validate-only: what createTopic would have used
			st.NumPartitions, st.ReplicationFactor = spec.partitions, spec.rf
			if len(spec.assignment) > 0 {
				st.NumPartitions, st.ReplicationFactor = int32(len(spec.assignment)), int16(len(spec.assignment[0]))
			}
			if st.NumPartitions == -1 {
				st.NumPartitions = int32(c.cfg.NumPartitions)
			}
			if st.ReplicationFactor == -1 {
				st.ReplicationFactor = int16(c.cfg.DefaultReplicationFactor)
			}
		}
		if !cn.allowedTopic(authorizer.OpDescribeConfigs, rt.Topic) {
			// Created, but its configs, partition count and replication
			// factor are not this principal's to see (Kafka's controller
			// leaves them at -1).
			st.ConfigErrorCode = errTopicAuth
			st.NumPartitions, st.ReplicationFactor = -1, -1
		} else if t != nil {
			// Every topic config, as DescribeConfigs would list it (v5+).
			st.Configs = createdConfigs(c.topicEntries(cn.b.id, t.cfg().configs))
		} else { // validate-only: as the topic would be
			st.Configs = createdConfigs(c.topicEntries(cn.b.id, spec.configs))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// specPartitions is how many partitions spec creates.
func (c *Cluster) specPartitions(spec topicSpec) int {
	switch {
	case len(spec.assignment) > 0:
		return len(spec.assignment)
	case spec.partitions == -1:
		return c.cfg.NumPartitions
	}
	return int(spec.partitions)
}

// createSpec turns one requested topic into a topicSpec, checking what
// createTopic cannot see in the spec: the assignment's partition indexes
// and null config values.
func createSpec(rt kmsg.CreateTopicsRequestTopic) (topicSpec, *kerr.Error, string) {
	s := topicSpec{name: rt.Topic, partitions: rt.NumPartitions, rf: rt.ReplicationFactor}
	if n := len(rt.ReplicaAssignment); n > 0 {
		s.assignment = make([][]int32, n)
		for _, a := range rt.ReplicaAssignment {
			if a.Partition < 0 || int(a.Partition) >= n || s.assignment[a.Partition] != nil {
				if a.Partition >= 0 && int(a.Partition) < n {
					return s, kerr.InvalidReplicaAssignment, fmt.Sprintf("Found multiple manual partition assignments for partition %d", a.Partition)
				}
				return s, kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence"
			}
			s.assignment[a.Partition] = slices.Clone(a.Replicas)
			if s.assignment[a.Partition] == nil {
				s.assignment[a.Partition] = []int32{} // an empty list; createTopic rejects it
			}
		}
	}
	if len(rt.Configs) > 0 {
		s.configs = make(map[string]string, len(rt.Configs))
		for _, cfg := range rt.Configs {
			if cfg.Value == nil {
				return s, kerr.InvalidConfig, fmt.Sprintf("Null value not supported for topic configs: %s", cfg.Name)
			}
			s.configs[cfg.Name] = *cfg.Value
		}
	}
	return s, nil, ""
}

func setCreateError(version int16, st *kmsg.CreateTopicsResponseTopic, err *kerr.Error, msg string) {
	st.ErrorCode = err.Code
	st.Configs = []kmsg.CreateTopicsResponseTopicConfig{} // Kafka sends an empty list, not null
	if version >= 1 && msg != "" {
		st.ErrorMessage = &msg
	}
}

// createdConfigs are a new topic's configs as CreateTopics lists them.
func createdConfigs(entries []configEntry) []kmsg.CreateTopicsResponseTopicConfig {
	out := make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(entries))
	for _, e := range entries {
		cfg := kmsg.NewCreateTopicsResponseTopicConfig()
		cfg.Name, cfg.Value, cfg.Source, cfg.ReadOnly, cfg.IsSensitive = e.name, e.value, int8(e.source), e.readOnly, e.sensitive
		out = append(out, cfg)
	}
	return out
}
