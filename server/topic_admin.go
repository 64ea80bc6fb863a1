package server

// Topic administration for the Go API and the control API: the same
// validation and results as CreateTopics, DeleteTopics and
// DescribeConfigs, without a client.

import (
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
)

// CreateTopicAssigned creates a topic with an explicit replica assignment,
// as CreateTopics with ReplicaAssignment does: assignment[i] lists the
// brokers of partition i, the first its preferred leader. Errors carry
// Kafka's error (TOPIC_ALREADY_EXISTS, INVALID_REPLICA_ASSIGNMENT,
// INVALID_CONFIG, ...).
func (c *Cluster) CreateTopicAssigned(name string, assignment [][]int32, configs map[string]string) error {
	if len(assignment) == 0 {
		return kafkaError(kerr.InvalidReplicaAssignment, "the assignment lists no partition")
	}
	as := make([][]int32, len(assignment))
	for i, rs := range assignment {
		as[i] = slices.Clone(rs)
	}
	_, e, msg := c.createTopic(topicSpec{name: name, partitions: -1, rf: -1, assignment: as, configs: maps.Clone(configs), goAPI: true}, false)
	return kafkaError(e, msg)
}

// DeleteTopic deletes a topic as DeleteTopics does: its partitions and
// their data go, and requests waiting on them wake. An unknown
// topic is UNKNOWN_TOPIC_OR_PARTITION, which also matches
// ErrUnknownPartition.
func (c *Cluster) DeleteTopic(name string) error {
	t := c.topic(name)
	if t == nil || !c.deleteTopic(t) {
		return &unknownTopicError{name}
	}
	return nil
}

// unknownTopicError is both ErrUnknownPartition and Kafka's
// UNKNOWN_TOPIC_OR_PARTITION.
type unknownTopicError struct{ name string }

func (e *unknownTopicError) Error() string { return "unknown topic " + strconv.Quote(e.name) }

func (e *unknownTopicError) Is(target error) bool {
	return target == ErrUnknownPartition || target == kerr.UnknownTopicOrPartition
}

// TopicConfig lists every config of topic in force, with its source, as
// DescribeConfigs does; false for an unknown topic.
func (c *Cluster) TopicConfig(topic string) (TopicConfigState, bool) {
	t := c.topic(topic)
	if t == nil {
		return TopicConfigState{}, false
	}
	out := TopicConfigState{Topic: topic, Configs: []ConfigEntry{}}
	for _, e := range c.topicConfigEntries(t) {
		v := "" // null (sensitive or no value) reads as empty
		if e.value != nil {
			v = *e.value
		}
		out.Configs = append(out.Configs, ConfigEntry{Name: e.name, Value: v, Source: e.source.String()})
	}
	return out, true
}
