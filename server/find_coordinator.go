package server

// FindCoordinator, versions 0-6 (batched keys from v4).
//
// A group's coordinator (key type 0) is the leader of its __consumer_offsets
// partition, a transactional id's (key type 1) the leader of its
// __transaction_state partition (each topic is created on the first
// request). COORDINATOR_NOT_AVAILABLE while that partition has no live
// leader, so clients retry and find the new one after a failover. A share
// partition's share coordinator (key type 2, SHARE, v6 only; key
// "group:topicId:partition") is the leader of its __share_group_state
// partition: INVALID_REQUEST before v6 or for a key not of that form,
// CLUSTER_AUTHORIZATION_FAILED without CLUSTER_ACTION (share_coordinator.go).
// Other key types INVALID_REQUEST. An empty key is a key like any other
// (Kafka 4.4 names its coordinator); an answer without a coordinator has
// node -1, host "" and port -1, as Kafka's.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleFindCoordinator(req *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, key := range keys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key, co.NodeID = key, -1
		var msg string
		switch {
		case req.CoordinatorType == 2:
			co.ErrorCode = cn.findShareCoordinator(req.Version, key, &co)
		case req.CoordinatorType != 0 && req.CoordinatorType != 1:
			co.ErrorCode, msg = kerr.InvalidRequest.Code, msgInvalidRequest
		case req.CoordinatorType == 0 && !cn.allowedGroup(authorizer.OpDescribe, key):
			co.ErrorCode = errGroupAuth
		case req.CoordinatorType == 1 && !cn.allowedTxn(authorizer.OpDescribe, key):
			co.ErrorCode = errTxnAuth
		default:
			coordinatorOf := c.coordinatorOf
			if req.CoordinatorType == 1 {
				coordinatorOf = c.txnCoordinatorOf
			}
			id, code := coordinatorOf(key)
			co.ErrorCode = code
			if b := c.broker(id); code == 0 && b != nil {
				co.NodeID = b.id
				co.Host, co.Port = cn.advertisedOf(b)
			}
		}
		if co.NodeID == -1 {
			co.Port = -1 // Kafka's Node.noNode()
		}
		if msg != "" {
			co.ErrorMessage = &msg
		} else if co.ErrorCode == 0 {
			// Kafka's message for no error: "" in a v4+ coordinator,
			// Errors.NONE's name in a v1-v3 answer.
			co.ErrorMessage = noMessage(req.Version, 4)
			if req.Version >= 1 && req.Version < 4 {
				co.ErrorMessage = kmsg.StringPtr("NONE")
			}
		}
		resp.Coordinators = append(resp.Coordinators, co)
	}
	if req.Version < 4 && len(resp.Coordinators) == 1 {
		co := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = co.ErrorCode, co.ErrorMessage, co.NodeID, co.Host, co.Port
		resp.Coordinators = nil
	}
	return resp, nil
}
