package server

// KIP-848 consumer groups on the group coordinator: package group holds
// the protocol (epochs, target assignment, reconciliation, assignors);
// this file is the topic metadata the assignors read.

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
)

type (
	consumerGroup  = grp.ConsumerGroup
	consumerMember = grp.ConsumerMember
	assignment     = grp.Assignment
)

// subscribedTopics resolves a member's subscription to existing topics. A
// regex must match a whole name and, as in Kafka's group coordinator, may
// match internal topics too (clients filter those themselves when they
// resolve a regex locally). With the authorizer a regex matches only the
// topics the principal that set it may DESCRIBE (Kafka 4.0, KAFKA-18813).
func (c *Cluster) subscribedTopics(m *consumerMember) []*topic {
	var re *regexp.Regexp
	if m.Regex != "" {
		re, _ = grp.CompileSubscription(m.Regex)
	}
	var out []*topic
	for name, t := range c.topics.Load().byName {
		if slices.Contains(m.Subscribed, name) || (re != nil && re.MatchString(name) && c.regexMayDescribe(m, name)) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *topic) int { return strings.Compare(a.name, b.name) })
	return out
}

// regexMayDescribe says whether the principal that set m's regex may
// DESCRIBE topic name.
func (c *Cluster) regexMayDescribe(m *consumerMember, name string) bool {
	if !c.cfg.Authorizer || m.RegexPrincipal == "" {
		return true
	}
	return c.acls.Load().Authorize(authorizer.Action{Principal: m.RegexPrincipal, Host: m.RegexHost,
		Operation: authorizer.OpDescribe, ResourceType: authorizer.ResourceTopic, Name: name})
}

// assignorTopics is the live topic table as package group's assignors
// read it.
type assignorTopics struct{ c *Cluster }

func (at assignorTopics) Subscribed(m *consumerMember) []grp.Topic {
	ts := at.c.subscribedTopics(m)
	out := make([]grp.Topic, len(ts))
	for i, t := range ts {
		out[i] = grp.Topic{ID: t.id, Name: t.name, Partitions: len(t.partitions())}
	}
	return out
}

func (at assignorTopics) Lookup(name string) (grp.Topic, bool) {
	t := at.c.topic(name)
	if t == nil {
		return grp.Topic{}, false
	}
	return grp.Topic{ID: t.id, Name: t.name, Partitions: len(t.partitions())}, true
}

func (at assignorTopics) ByID(id [16]byte) (grp.Topic, bool) {
	t := at.c.topicByID(id)
	if t == nil {
		return grp.Topic{}, false
	}
	return grp.Topic{ID: t.id, Name: t.name, Partitions: len(t.partitions())}, true
}
