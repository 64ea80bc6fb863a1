package server

// Metadata requests Kafka 4.4 fails as a whole (KafkaApis throws, and the
// answer is MetadataRequest.getErrorResponse): every requested topic with
// the error, its name ("" for a null one) and the id it was asked by, no
// partitions, no brokers, no cluster id, controller -1 and, from v13
// (KIP-1102), the error in the top-level ErrorCode too.
//
//   - v10-11: a topic with a null name or a topic id: INVALID_REQUEST (only
//     v12 looks topics up by id).
//   - v12+: a topic with neither a name nor an id: UNKNOWN_SERVER_ERROR
//     (Kafka's lookup fails on it; compat/reference).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataRequestInvalid is the error Kafka fails req with as a whole, or 0.
func metadataRequestInvalid(req *kmsg.MetadataRequest) int16 {
	if req.Topics == nil || req.Version == 0 {
		return 0 // every topic (v0 cannot name a topic null or by id)
	}
	for _, rt := range req.Topics {
		byID := rt.TopicID != [16]byte{}
		switch {
		case req.Version < 12 && (rt.Topic == nil || byID):
			return kerr.InvalidRequest.Code
		case req.Version >= 12 && rt.Topic == nil && !byID:
			return kerr.UnknownServerError.Code
		}
	}
	return 0
}

// metadataRequestError is Kafka's answer to a Metadata request it fails as
// a whole with code.
func metadataRequestError(req *kmsg.MetadataRequest, code int16) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	resp.ErrorCode = code // on the wire from v13
	for _, rt := range req.Topics {
		st := kmsg.NewMetadataResponseTopic()
		name := ""
		if rt.Topic != nil {
			name = *rt.Topic
		}
		st.Topic, st.TopicID, st.ErrorCode = &name, rt.TopicID, code
		st.Partitions = []kmsg.MetadataResponseTopicPartition{}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
