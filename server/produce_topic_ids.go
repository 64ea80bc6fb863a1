package server

// Produce v13 names each topic by its id instead of its name (KIP-516).
// Kafka resolves the id through its metadata cache; an id no topic has
// (including the zero id, since v13 carries no name to fall back on) gets
// UNKNOWN_TOPIC_ID on every partition of that entry, checked after the
// transactional id's authorization and before the topic's. The answer
// carries the request's id back (the name is not on the wire at v13).

import "github.com/twmb/franz-go/pkg/kerr"

// produceTopic is the topic a Produce entry names: by name up to v12, by
// id from v13. code is UNKNOWN_TOPIC_ID for a v13 id no topic has; t is
// nil for an unknown name too (UNKNOWN_TOPIC_OR_PARTITION, later).
func (c *Cluster) produceTopic(version int16, name string, id [16]byte) (t *topic, resolved string, code int16) {
	if version < 13 {
		return c.topic(name), name, 0
	}
	if t = c.topicByID(id); t == nil {
		return nil, "", kerr.UnknownTopicID.Code
	}
	return t, t.name, 0
}
