package server

// ElectLeaders, versions 0-2.
//
// ElectionType (v1+; v0 is always preferred) 0 is a preferred election:
// the first replica in assignment order takes over if it is alive and in
// the ISR, else PREFERRED_LEADER_NOT_AVAILABLE; ELECTION_NOT_NEEDED when it
// already leads. 1 is an unclean election, which as in Kafka's controller
// only touches leaderless partitions (ELECTION_NOT_NEEDED for the others):
// the first live ISR member in assignment order, else the first live
// replica even though the topic does not enable unclean elections (the
// request is the operator's explicit consent), whose log becomes the truth
// and the ISR just itself; ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica
// is alive. Another ElectionType gets INVALID_REQUEST at the top level and
// on every listed partition ("Unknown election type 5").
//
// Null Topics means every partition of every topic; the answer then lists
// every topic but leaves out the partitions that needed no election, as
// Kafka's does. An unknown partition gets UNKNOWN_TOPIC_OR_PARTITION ("No
// such topic as t", "No such partition as t-9"). The answer follows the
// request: a topic or partition listed twice is answered twice, with the
// first one's result (Kafka's controller decides each against the state
// before the request). Elections are synchronous, so TimeoutMillis does not
// matter.

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	electPreferred = 0
	electUnclean   = 1
)

func (cn *conn) handleElectLeaders(req *kmsg.ElectLeadersRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	typ := req.ElectionType
	if req.Version == 0 {
		typ = electPreferred
	}
	if typ != electPreferred && typ != electUnclean {
		resp.ErrorCode = kerr.InvalidRequest.Code
		resp.Topics = electAnswers(req.Topics, kerr.InvalidRequest.Code, fmt.Sprintf("Unknown election type %d", typ))
		return resp, nil
	}

	denied := !cn.allowedCluster(authorizer.OpAlter)
	if denied {
		// Every requested partition and the request itself fail.
		resp.ErrorCode = errClusterAuth
	}
	all := req.Topics == nil && !denied
	topics := req.Topics
	if all {
		byName := c.topics.Load().byName
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic = name
			for i := range byName[name].partitions() {
				rt.Partitions = append(rt.Partitions, int32(i))
			}
			topics = append(topics, rt)
		}
	}

	type tp struct {
		topic string
		part  int32
	}
	decided := map[tp]kmsg.ElectLeadersResponseTopicPartition{}
	for _, rt := range topics {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = []kmsg.ElectLeadersResponseTopicPartition{}
		for _, part := range rt.Partitions {
			if sp, ok := decided[tp{rt.Topic, part}]; ok {
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			var err error
			if denied {
				err = kerr.ClusterAuthorizationFailed
			} else {
				err = c.electForRequest(rt.Topic, part, typ)
			}
			if all && errors.Is(err, kerr.ElectionNotNeeded) {
				continue
			}
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition = part
			if err != nil {
				sp.ErrorCode = errorCode(err)
				msg := c.electMessage(rt.Topic, part, err)
				sp.ErrorMessage = &msg
			}
			decided[tp{rt.Topic, part}] = sp
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// electForRequest runs one partition's election; the error wraps the
// Kafka error to answer.
func (c *Cluster) electForRequest(topicName string, index int32, typ int8) error {
	p, err := c.mustPartition(topicName, index)
	if err != nil {
		return err
	}
	p.mu.Lock()
	leader := p.st.Leader()
	preferred := p.st.Replicas()[0].Broker
	fallback := int32(-1) // the first live replica, for an unclean election
	for _, r := range p.st.Replicas() {
		if b := c.broker(r.Broker); r.Online() && b != nil && b.up.Load() {
			fallback = r.Broker
			break
		}
	}
	p.mu.Unlock()

	if typ == electPreferred {
		if leader == preferred {
			return kerr.ElectionNotNeeded
		}
		return c.ElectPreferredLeader(topicName, index)
	}
	if leader >= 0 {
		return kerr.ElectionNotNeeded
	}
	// Kafka's choice first: a live ISR member elects cleanly.
	_, err = c.ElectLeader(topicName, index, -1, true)
	if errors.Is(err, kerr.EligibleLeadersNotAvailable) && fallback >= 0 {
		_, err = c.ElectLeader(topicName, index, fallback, true)
	}
	return err
}

// errorCode is the Kafka error code err wraps.
func errorCode(err error) int16 {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return ke.Code
	case errors.Is(err, errUnknownPartition):
		return kerr.UnknownTopicOrPartition.Code
	}
	return kerr.UnknownServerError.Code
}

// electAnswers answers every listed partition with one error.
func electAnswers(topics []kmsg.ElectLeadersRequestTopic, code int16, msg string) []kmsg.ElectLeadersResponseTopic {
	var out []kmsg.ElectLeadersResponseTopic
	for _, rt := range topics {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = []kmsg.ElectLeadersResponseTopicPartition{}
		for _, part := range rt.Partitions {
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.ErrorMessage = part, code, kmsg.StringPtr(msg)
			st.Partitions = append(st.Partitions, sp)
		}
		out = append(out, st)
	}
	return out
}

// electMessage is Kafka's ErrorMessage for a partition's failed election.
func (c *Cluster) electMessage(topic string, part int32, err error) string {
	switch {
	case errors.Is(err, kerr.ElectionNotNeeded):
		return msgElectionNotNeeded
	case errors.Is(err, errUnknownPartition) && c.topic(topic) == nil:
		return "No such topic as " + topic
	case errors.Is(err, errUnknownPartition):
		return fmt.Sprintf("No such partition as %s-%d", topic, part)
	}
	return err.Error()
}
