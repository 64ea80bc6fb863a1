package server

// Topic-name collisions: Kafka's metrics replace '.' with '_' in topic
// names, so its controller refuses a new topic whose name, so unified,
// equals an existing topic's (INVALID_TOPIC_EXCEPTION, "Topic 'a_b'
// collides with existing topic: a.b"), after it checks for the same name
// existing (TOPIC_ALREADY_EXISTS). A CreateTopics request's names are
// checked against the topics that existed when it arrived, not against
// each other (Kafka 4.4 creates both "a.b" and "a_b" sent together).

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// unifyCollisionChars is the name with '.' replaced by '_'.
func unifyCollisionChars(name string) string { return strings.ReplaceAll(name, ".", "_") }

// hasCollisionChars says whether name has '.' or '_'.
func hasCollisionChars(name string) bool { return strings.ContainsAny(name, "._") }

// collidingTopic is a topic of byName (nil: the topics now) that name
// collides with, or "". The same name is not a collision: it exists
// (TOPIC_ALREADY_EXISTS, which Kafka checks first).
func (c *Cluster) collidingTopic(byName map[string]*topic, name string) string {
	if !hasCollisionChars(name) {
		return ""
	}
	if byName == nil {
		byName = c.topics.Load().byName
	}
	if _, ok := byName[name]; ok {
		return ""
	}
	unified := unifyCollisionChars(name)
	for other := range byName {
		if other != name && hasCollisionChars(other) && unifyCollisionChars(other) == unified {
			return other
		}
	}
	return ""
}

// collisionError is Kafka's answer to a colliding name.
func collisionError(name, existing string) (*kerr.Error, string) {
	return kerr.InvalidTopicException, "Topic '" + name + "' collides with existing topic: " + existing
}
