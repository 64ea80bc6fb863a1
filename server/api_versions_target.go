package server

// What Kafka 4.4 checks in an ApiVersions request it serves, in its order
// (KafkaApis.handleApiVersionsRequest; a version it does not serve gets
// KIP-511's fallback first, protocol.ApiVersionsResponse):
//
//   - v3+: ClientSoftwareName and ClientSoftwareVersion must match
//     [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?; v5+: ClusterId and NodeId
//     (KIP-1242) come both or neither (a null ClusterId with NodeId -1).
//     Else INVALID_REQUEST.
//   - v5+ with a ClusterId: a cluster id other than this cluster's, or a
//     NodeId other than this broker's, gets REBOOTSTRAP_REQUIRED, so that a
//     client whose addresses now reach another cluster or node bootstraps
//     again. Before SASL authentication Kafka's authenticator answers
//     ApiVersions without this check, and so does fakekafka.
//
// Both errors are answered at the request's version with no API keys. A
// body that does not parse at a version Kafka serves is not answered:
// Kafka's RequestContext.parseRequest throws InvalidRequestException and
// the connection closes, before and after SASL authentication alike.

import (
	"fmt"
	"regexp"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var softwareNameVersion = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

// answerApiVersions answers an ApiVersions request of the given version
// whose body is body; an error closes the connection.
func (cn *conn) answerApiVersions(version int16, body []byte) (*kmsg.ApiVersionsResponse, error) {
	c := cn.b.c
	r, ok := protocol.Lookup(apiVersionsKey)
	if !ok || version > r.Max {
		return c.apiVersions(version), nil // KIP-511: not parsed
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("malformed ApiVersions v%d request: %w", version, err)
	}
	if version < 3 {
		return c.apiVersions(version), nil
	}
	var code int16
	switch {
	case !validApiVersions(req):
		code = kerr.InvalidRequest.Code
	case version >= 5 && req.ClusterID != nil && (cn.sasl == nil || cn.sasl.phase == saslDone) &&
		(*req.ClusterID != c.cfg.ClusterID || req.NodeID != cn.b.id):
		code = kerr.RebootstrapRequired.Code
	default:
		return c.apiVersions(version), nil
	}
	c.log.Debug("ApiVersions refused", "broker", cn.b.id, "version", version, "error", kerr.ErrorForCode(code),
		"software", req.ClientSoftwareName, "software_version", req.ClientSoftwareVersion, "node_id", req.NodeID)
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(version)
	resp.ErrorCode = code
	return resp, nil
}

// validApiVersions is Kafka's ApiVersionsRequest.isValid.
func validApiVersions(req *kmsg.ApiVersionsRequest) bool {
	if req.Version >= 5 && (req.ClusterID == nil) != (req.NodeID == -1) {
		return false
	}
	return softwareNameVersion.MatchString(req.ClientSoftwareName) && softwareNameVersion.MatchString(req.ClientSoftwareVersion)
}

// apiVersionsBodyValid reports whether an ApiVersions request of version
// with body parses and passes validApiVersions.
func apiVersionsBodyValid(version int16, body []byte) bool {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(version)
	return req.ReadFrom(body) == nil && (version < 3 || validApiVersions(req))
}
