package server

// AddRaftVoter, versions 0-1 (KIP-853), forwarded by Kafka's brokers to the
// KRaft leader. fakekafka's quorum is a fixed, static voter set
// (kraft.version 0, features.go), which cannot change, and answers as a
// static Kafka quorum does: a cluster id that is not this cluster's is
// INCONSISTENT_CLUSTER_ID, a request without a valid voter (a directory
// id) or without an endpoint for the controller listener (CONTROLLER)
// INVALID_REQUEST, anything else UNSUPPORTED_VERSION because kraft.version
// is 0. Needs ALTER on the cluster.

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleAddRaftVoter(req *kmsg.AddRaftVoterRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AddRaftVoterResponse)
	if !cn.allowedCluster(authorizer.OpAlter) {
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	resp.ErrorCode, resp.ErrorMessage = cn.b.c.checkVoter(req.ClusterID, req.VoterID, req.VoterDirectoryID, "Add voter")
	if resp.ErrorCode != 0 {
		return resp, nil
	}
	if !slices.ContainsFunc(req.Listeners, func(l kmsg.AddRaftVoterRequestListener) bool { return l.Name == controllerListener }) {
		var eps []string
		for _, l := range req.Listeners {
			eps = append(eps, fmt.Sprintf("ListenerName(%s)=%s", l.Name, net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))))
		}
		resp.ErrorCode = kerr.InvalidRequest.Code
		resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Add voter request didn't include the endpoint (Endpoints(endpoints={%s})) for the default listener ListenerName(%s)",
			strings.Join(eps, ", "), controllerListener))
		return resp, nil
	}
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ErrorMessage = kmsg.StringPtr("Cluster doesn't support adding voter because the kraft.version feature is 0")
	return resp, nil
}

// controllerListener is the controllers' listener name, as DescribeQuorum
// v2 reports the voters' endpoints.
const controllerListener = "CONTROLLER"
