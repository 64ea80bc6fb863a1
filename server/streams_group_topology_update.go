package server

// StreamsGroupTopologyDescriptionUpdate, version 0 (KIP-1071's follow-up:
// a streams member sends its topology's description for tools to show).
// Kafka 4.4 keeps the descriptions only through a broker plugin, none by
// default; without one every request that may READ the group is answered
// UNSUPPORTED_VERSION with the broker's message, before any coordinator
// looks at the group. fakekafka has no such plugin, so it answers the
// same. Denied READ on the group: GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fakekafka/fakekafka/authorizer"
)

func (cn *conn) handleStreamsGroupTopologyDescriptionUpdate(req *kmsg.StreamsGroupTopologyDescriptionUpdateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	if !cn.allowedGroup(authorizer.OpRead, req.Group) {
		resp.ErrorCode = errGroupAuth
		return resp, nil
	}
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ErrorMessage = kmsg.StringPtr("The broker has no streams group topology description plugin configured.")
	return resp, nil
}
