package server

// Writing the classic group's metadata record (package group's Meta), and
// the topics a group's members subscribe to under either protocol.

import (
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

// storeMeta writes a snapshot to __consumer_offsets and waits until it is
// committed, unless a later snapshot was written already. Callers must not
// hold g.mu.
func (g *group) storeMeta(snap grp.MetaSnapshot) int16 {
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	if snap.Seq <= g.writtenSeq {
		return 0
	}
	if !g.current() {
		return kerr.NotCoordinator.Code
	}
	code := g.write([]coordinatorRecord{{key: recordKey{Group: g.id}, value: snap.Meta}})
	if code == 0 {
		g.writtenSeq = snap.Seq
	}
	return code
}

// subscribedTopics is the union of the members' subscriptions under the
// consumer protocol; ok is false when one cannot be read. Callers hold
// g.mu.
func (g *group) subscribedTopics() (topics map[string]bool, ok bool) {
	topics = map[string]bool{}
	for _, m := range g.Members {
		for _, p := range m.Protocols {
			if g.Protocol != "" && p.Name != g.Protocol {
				continue
			}
			ts, ok := grp.Subscription(p.Metadata)
			if !ok {
				return nil, false
			}
			for _, t := range ts {
				topics[t] = true
			}
		}
	}
	if cg := g.s.c.consumerGroupOf(g); cg != nil {
		for _, m := range cg.Members {
			for _, t := range m.Subscribed {
				topics[t] = true
			}
			if m.Regex != "" {
				for _, t := range g.s.c.subscribedTopics(m) {
					topics[t.name] = true
				}
			}
		}
	}
	return topics, true
}
