package server

// ConsumerGroupDescribe, versions 0-1 (KIP-848): each group's state
// (Empty, Assigning, Reconciling, Stable), group and assignment epochs,
// assignor, and per member its epoch, subscription, current and target
// assignment. GROUP_ID_NOT_FOUND for an unknown group ("Group g not
// found.") or one that is not a consumer group ("Group g is not a consumer
// group."), INVALID_GROUP_ID for an empty id, the coordinator errors
// (NOT_COORDINATOR, ...) without a message, as Kafka 4.4. Many groups are
// answered in Kafka's order (group_batch_order.go): denied ones first.
// With the authorizer a group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED)
// and, since Kafka 4.0 (KAFKA-18813), DESCRIBE on every topic in its
// members' current and target assignments: otherwise the group is
// described only by TOPIC_AUTHORIZATION_FAILED.

import (
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleConsumerGroupDescribe(req *kmsg.ConsumerGroupDescribeRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	var denied, allowed []int
	for i, id := range req.Groups {
		if cn.allowedGroup(authorizer.OpDescribe, id) {
			allowed = append(allowed, i)
		} else {
			denied = append(denied, i)
		}
	}
	order := append(denied, c.groupsInKafkaOrder(req.Groups, allowed, func(g string) bool { return g == "" })...)
	for _, i := range order {
		id := req.Groups[i]
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		rg.Group = id
		rg.AuthorizedOperations = -2147483648
		var msg *string // Kafka words only some errors
		var g *group
		code := int16(0)
		if id != "" && cn.allowedGroup(authorizer.OpDescribe, id) {
			g, code = c.group(cn.b.id, id, false)
		}
		switch {
		case !cn.allowedGroup(authorizer.OpDescribe, id):
			rg.ErrorCode = errGroupAuth
			msg = kmsg.StringPtr(kerr.GroupAuthorizationFailed.Error())
		case id == "":
			rg.ErrorCode = kerr.InvalidGroupID.Code
		case code != 0:
			rg.ErrorCode = code
		case g == nil:
			rg.ErrorCode, msg = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+id+" not found.")
		default:
			g.Mu.Lock()
			if cg := g.ConsumerGroup(); cg == nil {
				rg.ErrorCode, msg = kerr.GroupIDNotFound.Code, kmsg.StringPtr("Group "+id+" is not a consumer group.")
			} else {
				describeConsumerGroup(c, cg, &rg)
				if !cn.allowedGroupTopics(&rg) {
					rg = kmsg.NewConsumerGroupDescribeResponseGroup()
					rg.Group, rg.ErrorCode, rg.AuthorizedOperations = id, errTopicAuth, -2147483648
					msg = kmsg.StringPtr(kerr.TopicAuthorizationFailed.Error())
				} else if req.IncludeAuthorizedOperations {
					rg.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceGroup, id)
				}
			}
			g.Mu.Unlock()
		}
		rg.ErrorMessage = msg
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

// allowedGroupTopics says whether the principal may DESCRIBE every topic
// the described group's members are assigned or targeted.
func (cn *conn) allowedGroupTopics(rg *kmsg.ConsumerGroupDescribeResponseGroup) bool {
	for _, m := range rg.Members {
		for _, a := range []kmsg.Assignment{m.Assignment, m.TargetAssignment} {
			for _, tp := range a.TopicPartitions {
				if tp.Topic != "" && !cn.allowedTopic(authorizer.OpDescribe, tp.Topic) {
					return false
				}
			}
		}
	}
	return true
}

func describeConsumerGroup(c *Cluster, cg *consumerGroup, rg *kmsg.ConsumerGroupDescribeResponseGroup) {
	rg.State, rg.Epoch, rg.AssignmentEpoch, rg.AssignorName = cg.State(), cg.Epoch, cg.AssignmentEpoch, cg.Assignor
	ids := make([]string, 0, len(cg.Members))
	for id := range cg.Members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		m := cg.Members[id]
		rm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		rm.MemberID, rm.InstanceID, rm.RackID, rm.MemberEpoch = m.ID, m.InstanceID, m.RackID, m.Epoch
		rm.ClientID, rm.ClientHost = m.ClientID, m.ClientHost
		rm.SubscribedTopics = slices.Clone(m.Subscribed)
		rm.SubscribedTopicRegex = kmsg.StringPtr(m.Regex) // Kafka: "" when none
		rm.Assignment = c.kmsgAssignment(m.Assigned)
		rm.TargetAssignment = c.kmsgAssignment(cg.Target[m.ID])
		rm.MemberType = 1 // the consumer protocol
		if m.Classic != nil {
			rm.MemberType = 0 // a classic member inside the consumer group
		}
		rg.Members = append(rg.Members, rm)
	}
}

func (c *Cluster) kmsgAssignment(a assignment) kmsg.Assignment {
	out := kmsg.NewAssignment()
	for _, id := range a.TopicIDs() {
		tp := kmsg.NewAssignmentTopicPartition()
		tp.TopicID, tp.Partitions = id, slices.Clone(a[id])
		if t := c.topicByID(id); t != nil {
			tp.Topic = t.name
		}
		out.TopicPartitions = append(out.TopicPartitions, tp)
	}
	return out
}
