package server

// RemoveRaftVoter, version 0 (KIP-853), answered as AddRaftVoter is
// (add_raft_voter.go): the static voter set cannot change.

import (
	"fmt"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleRemoveRaftVoter(req *kmsg.RemoveRaftVoterRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.RemoveRaftVoterResponse)
	if !cn.allowedCluster(authorizer.OpAlter) {
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	resp.ErrorCode, resp.ErrorMessage = cn.b.c.checkVoter(req.ClusterID, req.VoterID, req.VoterDirectoryID, "Remove voter")
	if resp.ErrorCode == 0 {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		resp.ErrorMessage = kmsg.StringPtr("Cluster doesn't support removing voter because the kraft.version feature is 0")
	}
	return resp, nil
}

// checkVoter is the KRaft leader's check of a voter change's arguments:
// the cluster id, then the voter.
func (c *Cluster) checkVoter(clusterID *string, voterID int32, dir [16]byte, what string) (int16, *string) {
	switch {
	case clusterID != nil && *clusterID != c.cfg.ClusterID:
		return kerr.InconsistentClusterID.Code, kmsg.StringPtr(fmt.Sprintf("The given id %q doesn't match the cluster id %q", *clusterID, c.cfg.ClusterID))
	case voterID < 0 || dir == [16]byte{}:
		return kerr.InvalidRequest.Code, kmsg.StringPtr(what + " request didn't include a valid voter")
	}
	return 0, nil
}
