package server

// UnregisterController, version 0 (KIP-1171's controller registrations):
// forwarded by Kafka's brokers to the active controller. fakekafka reports
// a combined-mode quorum (describe_quorum.go): every broker is a
// controller and the active one is the lowest running broker. The active
// controller cannot unregister itself (INVALID_REQUEST); an id that is
// no controller is CONTROLLER_ID_NOT_REGISTERED; another controller gets
// no error, and stays, as a running controller registers again. Needs
// ALTER on the cluster.

import (
	"fmt"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleUnregisterController(req *kmsg.UnregisterControllerRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.UnregisterControllerResponse)
	switch {
	case !cn.allowedCluster(authorizer.OpAlter):
		resp.ErrorCode = errClusterAuth
	case req.ControllerID == c.controller():
		resp.ErrorCode = kerr.InvalidRequest.Code
		resp.ErrorMessage = kmsg.StringPtr("Controller cannot unregister itself while it is active.")
	case req.ControllerID < 1 || int(req.ControllerID) > len(c.brokers):
		resp.ErrorCode = kerr.ControllerIDNotRegistered.Code
		resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Controller ID %d is not currently registered.", req.ControllerID))
	default:
		resp.ErrorMessage = kmsg.StringPtr("")
	}
	return resp, nil
}
