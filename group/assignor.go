package group

// The server-side assignors of KIP-848 groups ("uniform", the default, and
// "range"), over the topic metadata the coordinator passes in.

import (
	"maps"
	"slices"
	"strings"
)

// Topic is a topic as an assignor sees it.
type Topic struct {
	ID         [16]byte
	Name       string
	Partitions int
}

// Topics is the cluster's topic metadata as the assignors read it; the
// server implements it over its live topic table.
type Topics interface {
	// Subscribed resolves m's subscription (names, or a regex that must
	// match a whole name, limited to what the principal that set it may
	// describe) to the existing topics, sorted by name.
	Subscribed(m *ConsumerMember) []Topic
	// Lookup and ByID find one topic by name or id (the classic
	// protocol's assignments name topics; the consumer group's hold ids).
	Lookup(name string) (Topic, bool)
	ByID(id [16]byte) (Topic, bool)
	// ByNames resolves a list of topic names (a share member's
	// subscription) to the existing topics, sorted by name.
	ByNames(names []string) []Topic
}

// ComputeTarget runs the group's assignor for the current group epoch.
func (cg *ConsumerGroup) ComputeTarget(topics Topics) {
	ids := slices.Sorted(maps.Keys(cg.Members))
	subs := map[string][]Topic{}
	byID := map[[16]byte]Topic{}
	for _, id := range ids {
		subs[id] = topics.Subscribed(cg.Members[id])
		for _, t := range subs[id] {
			byID[t.ID] = t
		}
	}
	next := map[string]Assignment{}
	for _, id := range ids {
		next[id] = Assignment{}
	}
	subscribes := func(id string, t Topic) bool {
		return slices.ContainsFunc(subs[id], func(s Topic) bool { return s.ID == t.ID })
	}
	if cg.Assignor == "range" {
		for _, t := range sortedTopics(byID) {
			var ms []string
			for _, id := range ids {
				if subscribes(id, t) {
					ms = append(ms, id)
				}
			}
			n, k := t.Partitions, len(ms)
			for i, id := range ms {
				lo, hi := i*n/k, (i+1)*n/k
				for p := lo; p < hi; p++ {
					next[id].Add(t.ID, int32(p))
				}
			}
		}
	} else {
		cg.uniform(ids, subscribes, byID, next)
	}
	cg.Target = next
	cg.AssignmentEpoch = cg.Epoch
	cg.TopicsSeen = cg.SubscribedPartitions(topics)
}

// SubscribedPartitions maps every topic some member subscribes to, to its
// partition count.
func (cg *ConsumerGroup) SubscribedPartitions(topics Topics) map[[16]byte]int {
	out := map[[16]byte]int{}
	for _, m := range cg.Members {
		for _, t := range topics.Subscribed(m) {
			out[t.ID] = t.Partitions
		}
	}
	return out
}

// SubscriptionsMoved reports whether a subscribed topic appeared, vanished
// or grew since the target was computed (Kafka bumps the group epoch on
// such metadata changes too).
func (cg *ConsumerGroup) SubscriptionsMoved(topics Topics) bool {
	return !maps.Equal(cg.SubscribedPartitions(topics), cg.TopicsSeen)
}

func sortedTopics(byID map[[16]byte]Topic) []Topic {
	ts := slices.Collect(maps.Values(byID))
	slices.SortFunc(ts, func(a, b Topic) int { return strings.Compare(a.Name, b.Name) })
	return ts
}

// uniform spreads every subscribed partition evenly over the members that
// subscribe to its topic, keeping partitions where they are when that stays
// balanced (a sticky, balanced assignor like Kafka's "uniform").
func (cg *ConsumerGroup) uniform(ids []string, subscribes func(string, Topic) bool, byID map[[16]byte]Topic, next map[string]Assignment) {
	total := 0
	for _, t := range byID {
		total += t.Partitions
	}
	quota := func(i int) int { // members sorted: the first total%n get one more
		q := total / len(ids)
		if i < total%len(ids) {
			q++
		}
		return q
	}
	count := map[string]int{}
	taken := map[[16]byte]map[int32]bool{}
	for i, id := range ids { // keep what stays valid and fits the quota
		for tid, ps := range cg.Target[id] {
			t, ok := byID[tid]
			if !ok || !subscribes(id, t) {
				continue
			}
			for _, p := range ps {
				if int(p) < t.Partitions && count[id] < quota(i) {
					next[id].Add(tid, p)
					count[id]++
					if taken[tid] == nil {
						taken[tid] = map[int32]bool{}
					}
					taken[tid][p] = true
				}
			}
		}
	}
	for _, t := range sortedTopics(byID) {
		for p := range int32(t.Partitions) {
			if taken[t.ID][p] {
				continue
			}
			best := ""
			for _, id := range ids {
				if subscribes(id, t) && (best == "" || count[id] < count[best]) {
					best = id
				}
			}
			if best != "" {
				next[best].Add(t.ID, p)
				count[best]++
			}
		}
	}
}
