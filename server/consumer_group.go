package server

// KIP-848 consumer groups on the group coordinator: package group holds
// the protocol (epochs, target assignment, reconciliation, assignors);
// this file binds it to a group's lifecycle: restoring it after a load,
// the members' session timers, the topic metadata the assignors read and
// writing its record.

import (
	"bytes"
	"encoding/json"
	"maps"
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

// consumerMember returns the KIP-848 member with id, or nil. Callers hold
// g.mu.
func (g *group) consumerMember(id string) *consumerMember {
	if g.consumer == nil || id == "" {
		return nil
	}
	return g.consumer.Members[id]
}

// consumerGroupOf returns g's KIP-848 state, rebuilding it from the last
// record after a coordinator load; members get fresh session timers, as a
// new coordinator gives them. Callers hold g.mu.
func (c *Cluster) consumerGroupOf(g *group) *consumerGroup {
	g.ready() // binds the copy to its coordinator, for its timers
	if g.consumer != nil || g.consumerMeta == nil {
		return g.consumer
	}
	var r grp.ConsumerGroupRecord
	if err := json.Unmarshal(g.consumerMeta, &r); err != nil {
		c.log.Warn("unreadable consumer group record", "group", g.id, "error", err)
		return nil
	}
	cg := grp.RestoreConsumerGroup(r)
	for _, id := range slices.Sorted(maps.Keys(cg.Members)) {
		c.touchConsumerMember(g, cg.Members[id])
	}
	cg.TopicsSeen = cg.SubscribedPartitions(assignorTopics{c})
	cg.Persisted, _ = json.Marshal(cg.Record())
	g.consumer = cg
	return cg
}

// persistConsumerGroup writes g's KIP-848 state if it changed since the
// last write, and waits for it to commit. Callers hold g.writeMu, not g.mu.
func (c *Cluster) persistConsumerGroup(g *group) int16 {
	g.mu.Lock()
	cg := g.consumer
	if cg == nil {
		g.mu.Unlock()
		return 0
	}
	rec := cg.Record()
	raw, _ := json.Marshal(rec)
	same := bytes.Equal(raw, cg.Persisted)
	g.mu.Unlock()
	if same {
		return 0
	}
	var value any = rec
	if len(rec.Members) == 0 && len(g.offsetsSnapshot()) == 0 {
		value = nil // an empty group with nothing committed is forgotten
	}
	code := g.write([]coordinatorRecord{{key: recordKey{Kind: consumerKind, Group: g.id}, value: value}})
	if code == 0 {
		g.mu.Lock()
		cg.Persisted = raw
		g.mu.Unlock()
	}
	return code
}

// offsetsSnapshot is a copy of the committed offsets. Callers must not
// hold g.mu.
func (g *group) offsetsSnapshot() map[grp.TopicPartition]committedOffset {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.Committed)
}

// revertConsumer drops g's KIP-848 state after its write failed: a failed
// write leaves nothing applied, and the next use restores the state from
// the last committed record (consumerMeta), as a new coordinator would.
// Callers hold g.mu.
func (g *group) revertConsumer() {
	if g.consumer == nil {
		return
	}
	for _, m := range g.consumer.Members {
		if m.Session != nil {
			m.Session.Stop()
		}
	}
	g.consumer = nil
}
