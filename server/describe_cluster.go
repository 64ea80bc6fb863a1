package server

// DescribeCluster, versions 0-2 (KIP-700; the endpoint type from v1,
// KIP-919; fenced brokers from v2, KIP-1073).
//
// As Metadata: the cluster id, the controller (the lowest live broker) and
// the live brokers at the advertised addresses of the listener the request
// came in on. Brokers are the only endpoint type served: asking for
// controllers (2) is MISMATCHED_ENDPOINT_TYPE, an unknown type
// UNSUPPORTED_ENDPOINT_TYPE, as Kafka answers (v0 has no endpoint type and
// always means brokers).
// With IncludeFencedBrokers, stopped brokers the controller has fenced are
// listed too, with IsFenced. ClusterAuthorizedOperations, when asked for,
// is what the ACLs allow on the cluster (every operation without the
// authorizer; 0 without DESCRIBE, as Kafka answers rather than failing),
// else Kafka's "not requested" value, the minimum int32.

import (
	"fmt"
	"math"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	endpointTypeBroker     = 1
	endpointTypeController = 2
)

func (cn *conn) handleDescribeCluster(req *kmsg.DescribeClusterRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = endpointTypeBroker
	fail := func(code *kerr.Error, msg string) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage = code.Code, &msg
		return resp, nil
	}
	switch req.EndpointType {
	case endpointTypeBroker:
	case endpointTypeController:
		return fail(kerr.MismatchedEndpointType, "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
	default:
		return fail(kerr.UnsupportedEndpointType, fmt.Sprintf("Unsupported endpoint type %d", req.EndpointType))
	}
	resp.ClusterID = c.cfg.ClusterID
	resp.ControllerID = c.controller()
	resp.ClusterAuthorizedOperations = math.MinInt32
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = 0 // Kafka tells nothing without DESCRIBE
		if cn.allowedCluster(authorizer.OpDescribe) {
			resp.ClusterAuthorizedOperations = cn.authorizedOps(authorizer.ResourceCluster, authorizer.ClusterName)
		}
	}
	for _, b := range c.brokers {
		fenced := !b.registered()
		if fenced && !req.IncludeFencedBrokers {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID = b.id
		rb.Host, rb.Port = cn.advertisedOf(b)
		rb.IsFenced = fenced
		resp.Brokers = append(resp.Brokers, rb)
	}
	return resp, nil
}
