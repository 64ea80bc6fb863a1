package server

// ApiVersions v5 (KIP-1242) lets a client say which cluster and node it
// means to reach (ClusterId, NodeId), so that after a cluster is rebuilt on
// the same addresses it learns it must bootstrap again. As Kafka 4.4's
// KafkaApis: with a non-null ClusterId, a cluster id other than this
// cluster's or a NodeId other than this broker's (including the default -1:
// the two go together) gets REBOOTSTRAP_REQUIRED, with no API keys. A null
// ClusterId checks nothing. Before SASL authentication Kafka's
// authenticator answers ApiVersions without this check, and so does
// fakekafka.

import (
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// answerApiVersions answers an ApiVersions request of the given version
// whose body is body.
func (cn *conn) answerApiVersions(version int16, body []byte) *kmsg.ApiVersionsResponse {
	c := cn.b.c
	if version >= 5 && (cn.sasl == nil || cn.sasl.phase == saslDone) {
		if r, ok := protocol.Lookup(apiVersionsKey); ok && version <= r.Max {
			req := kmsg.NewPtrApiVersionsRequest()
			req.SetVersion(version)
			if req.ReadFrom(body) == nil && req.ClusterID != nil &&
				(*req.ClusterID != c.cfg.ClusterID || req.NodeID != cn.b.id) {
				c.log.Debug("ApiVersions for another cluster or node", "broker", cn.b.id,
					"cluster_id", *req.ClusterID, "node_id", req.NodeID)
				resp := kmsg.NewPtrApiVersionsResponse()
				resp.SetVersion(version)
				resp.ErrorCode = kerr.RebootstrapRequired.Code
				return resp
			}
		}
	}
	return c.apiVersions(version)
}
