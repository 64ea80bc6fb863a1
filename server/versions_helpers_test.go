package server

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// byTopicID names each topic of a Produce built by name by its id too:
// kgo sends Produce at v13 to fakekafka, which carries ids only (KIP-516),
// so a request built by name alone would get UNKNOWN_TOPIC_ID.
func byTopicID(c *Cluster, req *kmsg.ProduceRequest) *kmsg.ProduceRequest {
	for i := range req.Topics {
		if t := c.topic(req.Topics[i].Topic); t != nil {
			req.Topics[i].TopicID = t.id
		}
	}
	return req
}

// topicIDVia asks cl's cluster for topic's id, as a client learns it.
func topicIDVia(ctx context.Context, cl *kgo.Client, topic string) ([16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return [16]byte{}, err
	}
	if len(resp.Topics) != 1 {
		return [16]byte{}, fmt.Errorf("metadata for %s: %d topics", topic, len(resp.Topics))
	}
	return resp.Topics[0].TopicID, kerr.ErrorForCode(resp.Topics[0].ErrorCode)
}
