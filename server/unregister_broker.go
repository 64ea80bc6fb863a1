package server

// UnregisterBroker, version 0 (KIP-631): Kafka's brokers forward it to the
// controller, which removes a decommissioned broker's registration. Every
// broker of the fixed topology (1..Brokers, running or stopped) is
// registered, so the answer is no error (with the empty message Kafka's
// controller gives); any other id is BROKER_ID_NOT_REGISTERED. fakekafka's
// brokers are never removed: a running one would register again, and a
// stopped one stays part of the topology so it can be started. Needs
// ALTER on the cluster.

import (
	"fmt"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleUnregisterBroker(req *kmsg.UnregisterBrokerRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	switch {
	case !cn.allowedCluster(authorizer.OpAlter):
		resp.ErrorCode = errClusterAuth
	case req.BrokerID < 1 || int(req.BrokerID) > len(cn.b.c.brokers):
		resp.ErrorCode = kerr.BrokerIDNotRegistered.Code
		resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Broker ID %d is not currently registered", req.BrokerID))
	default:
		resp.ErrorMessage = kmsg.StringPtr("")
		cn.b.c.log.Info("UnregisterBroker answered; the broker stays in the fixed topology", "broker", req.BrokerID)
	}
	return resp, nil
}
