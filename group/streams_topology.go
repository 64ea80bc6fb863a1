package group

// A streams group's topology and its validation against the cluster's
// topics, as Kafka 4.4's InternalTopicManager does it: source topics must
// exist; flexible repartition topics take the partition count of the
// subtopology writing them; copartitioned topics must agree; changelog
// topics have one partition per task; internal topics that exist must have
// the partitions the topology needs, and missing ones are to be created by
// the broker with the configs the topology asks for.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// TopicInfo is an internal topic of a topology: its name, its partition
// count (0: decided by the coordinator), replication factor (0: the
// broker's default) and topic configs.
type TopicInfo struct {
	Name              string            `json:"name"`
	Partitions        int32             `json:"partitions,omitempty"`
	ReplicationFactor int16             `json:"replication_factor,omitempty"`
	Configs           map[string]string `json:"configs,omitempty"`
}

// Subtopology is one sub-topology: the tasks of one subtopology read the
// same partition of each of its source topics.
type Subtopology struct {
	ID                      string      `json:"id"`
	SourceTopics            []string    `json:"source_topics,omitempty"`
	SourceTopicRegex        []string    `json:"source_topic_regex,omitempty"`
	RepartitionSinkTopics   []string    `json:"repartition_sink_topics,omitempty"`
	RepartitionSourceTopics []TopicInfo `json:"repartition_source_topics,omitempty"`
	StateChangelogTopics    []TopicInfo `json:"state_changelog_topics,omitempty"`
	// CopartitionGroups are sets of topic names (sources and repartition
	// sources) that must have the same partition count.
	CopartitionGroups [][]string `json:"copartition_groups,omitempty"`
}

// Topology is a streams group's topology, its subtopologies sorted by id.
type Topology struct {
	Epoch         int32         `json:"epoch"`
	Subtopologies []Subtopology `json:"subtopologies"`
}

// Stateful says whether a subtopology keeps state (has changelogs).
func (s Subtopology) Stateful() bool { return len(s.StateChangelogTopics) > 0 }

// RequiredTopics are every topic the topology reads or writes.
func (t *Topology) RequiredTopics() []string {
	set := map[string]bool{}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			set[n] = true
		}
		for _, n := range s.RepartitionSinkTopics {
			set[n] = true
		}
		for _, ti := range s.RepartitionSourceTopics {
			set[ti.Name] = true
		}
		for _, ti := range s.StateChangelogTopics {
			set[ti.Name] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// Status codes of a StreamsGroupHeartbeat answer (Kafka's
// StreamsGroupHeartbeatResponse.Status).
const (
	StatusStaleTopology          int8 = 0
	StatusMissingSourceTopics    int8 = 1
	StatusIncorrectlyPartitioned int8 = 2
	StatusMissingInternalTopics  int8 = 3
	StatusShutdownApplication    int8 = 4
	StatusAssignmentDelayed      int8 = 5
	StatusMissingClientTags      int8 = 6
	statusNone                   int8 = -1
)

// Status is one status of a heartbeat answer.
type Status struct {
	Code    int8
	Message string
}

// StreamsTopics is the cluster's topic metadata as the streams
// coordinator reads it.
type StreamsTopics interface {
	// Partitions is the partition count of topic name, false when it does
	// not exist.
	Partitions(name string) (int, bool)
}

// ConfiguredTopology is a topology validated against the topics.
type ConfiguredTopology struct {
	Epoch int32
	// Status says why the topology is not ready (nil when it is).
	Status *Status
	// Tasks is the number of tasks of each subtopology (when the source
	// topics exist).
	Tasks    map[string]int
	Stateful map[string]bool
	// Create are the internal topics the broker is to create.
	Create []TopicInfo
}

// Ready says whether tasks can be assigned.
func (ct *ConfiguredTopology) Ready() bool { return ct != nil && ct.Status == nil }

type topologyError struct{ Status }

// summarizeTopics is how Kafka lists topics in a status: the first three
// and how many more.
func summarizeTopics(names []string) string {
	if len(names) == 0 {
		return "<none>"
	}
	s := strings.Join(names[:min(3, len(names))], ", ")
	if len(names) > 3 {
		s += fmt.Sprintf(" and %d additional topics", len(names)-3)
	}
	return s
}

// Configure validates topology t against topics.
func Configure(t *Topology, topics StreamsTopics) *ConfiguredTopology {
	ct := &ConfiguredTopology{Epoch: t.Epoch, Tasks: map[string]int{}, Stateful: map[string]bool{}}
	var missing []string
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			if _, ok := topics.Partitions(n); !ok && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		ct.Status = &Status{StatusMissingSourceTopics, "Source topics " + summarizeTopics(missing) + " are missing."}
		return ct
	}
	decided := map[string]int{}
	// Internal topics count as the topology decides (an existing one with
	// another count is reported below), other topics as they are.
	count := func(n string) (int, bool) {
		if p, ok := decided[n]; ok {
			return p, true
		}
		return topics.Partitions(n)
	}
	if err := decideRepartition(t, count, decided); err != nil {
		ct.Status = &err.Status
		return ct
	}
	if err := enforceCopartitioning(t, count, decided); err != nil {
		ct.Status = &err.Status
		return ct
	}
	for _, s := range t.Subtopologies {
		n := 0
		for _, src := range s.SourceTopics {
			p, _ := count(src)
			n = max(n, p)
		}
		for _, ti := range s.RepartitionSourceTopics {
			p, _ := count(ti.Name)
			n = max(n, p)
		}
		ct.Tasks[s.ID] = n
		ct.Stateful[s.ID] = s.Stateful()
		for _, ti := range s.StateChangelogTopics {
			decided[ti.Name] = n // one changelog partition per task
		}
	}
	// Internal topics: create what is missing, refuse what exists with
	// another partition count.
	want := map[string]TopicInfo{}
	var order []string // as Kafka fills its map: by subtopology, repartition topics first
	for _, s := range t.Subtopologies {
		for _, ti := range append(slices.Clone(s.RepartitionSourceTopics), s.StateChangelogTopics...) {
			ti.Partitions = int32(decided[ti.Name])
			if p, ok := topics.Partitions(ti.Name); ok {
				if int32(p) != ti.Partitions {
					ct.Status = &Status{StatusIncorrectlyPartitioned, fmt.Sprintf(
						"Existing topic %s has different number of partitions: expected %d, found %d", ti.Name, ti.Partitions, p)}
					ct.Create = nil
					return ct
				}
				continue
			}
			if _, ok := want[ti.Name]; !ok {
				order = append(order, ti.Name)
			}
			want[ti.Name] = ti
		}
	}
	for _, n := range slices.Sorted(maps.Keys(want)) {
		ct.Create = append(ct.Create, want[n])
	}
	if len(ct.Create) > 0 {
		ct.Status = &Status{StatusMissingInternalTopics, "Internal topics are missing: " + summarizeTopics(javaHashOrder(order))}
	}
	return ct
}

// decideRepartition gives each flexible repartition topic the task count
// of the subtopologies writing it (the largest), resolving chains of
// repartitions until nothing changes.
func decideRepartition(t *Topology, count func(string) (int, bool), decided map[string]int) *topologyError {
	writers := map[string][]Subtopology{}
	for _, s := range t.Subtopologies {
		for _, sink := range s.RepartitionSinkTopics {
			writers[sink] = append(writers[sink], s)
		}
	}
	var pending []TopicInfo
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Partitions > 0 {
				decided[ti.Name] = int(ti.Partitions)
			} else {
				pending = append(pending, ti) // even when it exists: it must have this count
			}
		}
	}
	for len(pending) > 0 {
		var next []TopicInfo
		for _, ti := range pending {
			ws := writers[ti.Name]
			if len(ws) == 0 {
				return &topologyError{Status{StatusMissingSourceTopics, "Failed to compute number of partitions for all repartition topics, because a repartition source topic is never used as a sink topic."}}
			}
			n, known := 0, false
			for _, w := range ws {
				for _, src := range w.SourceTopics {
					if p, ok := count(src); ok {
						n, known = max(n, p), true
					}
				}
				for _, rs := range w.RepartitionSourceTopics {
					if p, ok := count(rs.Name); ok {
						n, known = max(n, p), true
					}
				}
			}
			if known {
				decided[ti.Name] = n
			} else {
				next = append(next, ti)
			}
		}
		if len(next) == len(pending) {
			return &topologyError{Status{StatusMissingSourceTopics, "Failed to compute number of partitions for all repartition topics. There may be loops in the topology that cannot be resolved."}}
		}
		pending = next
	}
	return nil
}

// enforceCopartitioning checks each copartition group: its source topics
// must agree, fixed repartition topics must match them, and flexible ones
// take their count.
func enforceCopartitioning(t *Topology, count func(string) (int, bool), decided map[string]int) *topologyError {
	fixed, flexible := map[string]bool{}, map[string]bool{}
	for _, s := range t.Subtopologies {
		for _, ti := range s.RepartitionSourceTopics {
			if ti.Partitions > 0 {
				fixed[ti.Name] = true
			} else {
				flexible[ti.Name] = true
			}
		}
	}
	for _, s := range t.Subtopologies {
		for _, group := range s.CopartitionGroups {
			if len(group) == 0 {
				continue
			}
			names := slices.Sorted(slices.Values(group))
			var sources []string
			for _, n := range names {
				if !fixed[n] && !flexible[n] {
					sources = append(sources, n)
				}
			}
			want := -1
			if len(sources) > 0 {
				for _, n := range sources {
					p, _ := count(n)
					if want >= 0 && p != want {
						var parts []string
						for _, m := range sources {
							q, _ := count(m)
							parts = append(parts, fmt.Sprintf("%s:%d", m, q))
						}
						return &topologyError{Status{StatusIncorrectlyPartitioned, fmt.Sprintf(
							"Following topics do not have the same number of partitions: [%s]", strings.Join(parts, ", "))}}
					}
					want = p
				}
			}
			for _, n := range names {
				if fixed[n] {
					p, _ := count(n)
					if want < 0 {
						want = p
					} else if p != want {
						return &topologyError{Status{StatusIncorrectlyPartitioned, fmt.Sprintf(
							"Number of partitions [%d] of repartition topic [%s] doesn't match number of partitions [%d] of the source topic.", p, n, want)}}
					}
				}
			}
			if want < 0 { // only flexible repartition topics: the largest
				for _, n := range names {
					if p, ok := count(n); ok {
						want = max(want, p)
					}
				}
			}
			if want > 0 {
				for _, n := range names {
					if flexible[n] {
						decided[n] = want
					}
				}
			}
		}
	}
	return nil
}

// TopicsSeen is the partition count of every topic the topology names, as
// the coordinator saw them (-1: missing): a change bumps the group epoch,
// as Kafka's metadata hash does.
func (t *Topology) TopicsSeen(topics StreamsTopics) map[string]int {
	out := map[string]int{}
	for _, n := range t.RequiredTopics() {
		p, ok := topics.Partitions(n)
		if !ok {
			p = -1
		}
		out[n] = p
	}
	return out
}
