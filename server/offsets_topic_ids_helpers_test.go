package server

import "github.com/twmb/franz-go/pkg/kmsg"

// withTopicIDs fills the topic ids of a hand-built OffsetCommit,
// TxnOffsetCommit or OffsetFetch request from its topic names, as a client
// does for the versions that name topics by id (OffsetCommit and
// OffsetFetch v10, TxnOffsetCommit v6), so one request works at every
// version a client may pick.
func withTopicIDs[R kmsg.Request](c *Cluster, req R) R {
	id := func(name string) [16]byte { v, _ := c.topicNameID(name); return v }
	switch r := any(req).(type) {
	case *kmsg.OffsetCommitRequest:
		for i := range r.Topics {
			r.Topics[i].TopicID = id(r.Topics[i].Topic)
		}
	case *kmsg.TxnOffsetCommitRequest:
		for i := range r.Topics {
			r.Topics[i].TopicID = id(r.Topics[i].Topic)
		}
	case *kmsg.OffsetFetchRequest:
		for i := range r.Groups {
			for j := range r.Groups[i].Topics {
				r.Groups[i].Topics[j].TopicID = id(r.Groups[i].Topics[j].Topic)
			}
		}
	}
	return req
}
