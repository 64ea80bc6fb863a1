package reference

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Streams groups (KIP-1071) with raw StreamsGroupHeartbeats: how the
// coordinator validates a topology against the topics (the statuses), the
// internal topics it creates, and its first assignment of two members.
func init() {
	acceptedDifferences["streams group: a second member (another process) joins the ready topology; the first assignment once both are stable"] =
		"both processes get one task each, balanced the same way; which one gets the first task when their loads are equal is Kafka's PriorityQueue/HashMap order, not traced yet (fakekafka picks the process with the lowest id)"
	scenarios = append(scenarios, scenario{
		name: "streams-group",
		rows: []string{
			"streams group (raw StreamsGroupHeartbeat, re-key then count): the topology's source topic missing, then created; the statuses and the internal topics the coordinator creates",
			"streams group: a second member (another process) joins the ready topology; the first assignment once both are stable",
		},
		run: func(r *run) []string {
			const group = "st-app"
			coord := r.coordinator(group)
			members := map[string]*streamsMember{"m1": {id: "m1", process: "p1"}, "m2": {id: "m2", process: "p2"}}
			m1, m2 := members["m1"], members["m2"]
			var first []string
			first = append(first, m1.beat(r, &coord, group))
			r.create("st-in", nil)
			// The coordinator sees the topic at its next heartbeat.
			var second string
			r.waitFor("a status other than MISSING_SOURCE_TOPICS", func() bool {
				second = m1.beat(r, &coord, group)
				return !strings.Contains(second, "MISSING_SOURCE_TOPICS")
			})
			// Whether the initial delay (3 s) is still on by now depends on
			// how fast the topic was made: left out.
			second = strings.Replace(second, `ASSIGNMENT_DELAYED("Assignment delayed due to the configured initial rebalance delay."), `, "", 1)
			first = append(first, second)
			internal := []string{"st-app-rekey-repartition", "st-app-counts-changelog"}
			r.waitFor("the internal topics", func() bool {
				for _, t := range internal {
					if _, ok := r.partitions(t); !ok {
						return false
					}
				}
				return true
			})
			for _, t := range internal {
				n, _ := r.partitions(t)
				first = append(first, fmt.Sprintf("%s: %d partitions", t, n))
			}

			// m2 joins; both heartbeat (with what they own) until the
			// group is stable with every task placed.
			m2.beat(r, &coord, group)
			m1.stable, m2.stable = true, true
			var last []string
			r.waitFor("a stable streams group", func() bool {
				last = []string{m1.beat(r, &coord, group), m2.beat(r, &coord, group)}
				d := r.describeStreams(coord, group)
				return strings.HasPrefix(d, "Stable") && m1.tasks() != "-" && m2.tasks() != "-"
			})
			// Epochs depend on when the delay's end meets the heartbeats:
			// only the statuses, the tasks and the state are compared.
			out := []string{
				strings.Join(first, "; "),
				fmt.Sprintf("%s; m1 %s; m2 %s; %s", strings.Join(last, "; "), m1.tasks(), m2.tasks(), r.describeStreams(coord, group)),
			}
			for _, m := range []*streamsMember{m1, m2} { // leave, for the scenarios after this one
				m.epoch = -1
				m.beat(r, &coord, group)
			}
			return out
		},
	})
}

// streamsMember is a raw streams group member: what it was last told.
type streamsMember struct {
	id, process string
	epoch       int32
	joined      bool
	stable      bool // summaries leave the epoch out
	active      []kmsg.TaskIDs
	standby     []kmsg.TaskIDs
}

func streamsCountTopology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID, s0.SourceTopics, s0.RepartitionSinkTopics = "0", []string{"st-in"}, []string{"st-app-rekey-repartition"}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	rp := kmsg.NewTopicInfo()
	rp.Topic = "st-app-rekey-repartition"
	rp.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "delete"}}
	cl := kmsg.NewTopicInfo()
	cl.Topic = "st-app-counts-changelog"
	cl.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}
	s1.RepartitionSourceTopics, s1.StateChangelogTopics = []kmsg.TopicInfo{rp}, []kmsg.TopicInfo{cl}
	cg := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup()
	cg.RepartitionSourceTopics = []int16{0}
	s1.CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{cg}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return &t
}

// beat sends one heartbeat (the join with the topology first) and
// summarises the answer: error, member epoch, statuses, tasks when sent.
func (m *streamsMember) beat(r *run, coord *int32, group string) string {
	r.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, m.id, m.epoch, -1
	if !m.joined {
		req.MemberEpoch, req.RebalanceTimeoutMillis, req.Topology, req.ProcessID = 0, 60000, streamsCountTopology(), &m.process
	}
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = m.active, m.standby, []kmsg.TaskIDs{}
	if req.ActiveTasks == nil {
		req.ActiveTasks, req.StandbyTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	var resp *kmsg.StreamsGroupHeartbeatResponse
	r.waitFor("a streams heartbeat answer", func() bool {
		resp = r.do(*coord, req).(*kmsg.StreamsGroupHeartbeatResponse)
		if resp.ErrorCode == kerr.NotCoordinator.Code { // a new __consumer_offsets settles
			*coord = r.coordinator(group)
			return false
		}
		return resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code && resp.ErrorCode != kerr.CoordinatorNotAvailable.Code
	})
	if resp.ErrorCode != 0 {
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		return fmt.Sprintf("%s %s %q", m.id, errName(resp.ErrorCode), msg)
	}
	m.joined, m.epoch = true, resp.MemberEpoch
	if resp.ActiveTasks != nil {
		m.active, m.standby = resp.ActiveTasks, resp.StandbyTasks
	}
	var st []string
	for _, s := range resp.Status {
		st = append(st, fmt.Sprintf("%s(%q)", streamsStatusName(s.StatusCode), s.StatusDetail))
	}
	if m.stable {
		return fmt.Sprintf("%s status [%s]", m.id, strings.Join(st, ", "))
	}
	return fmt.Sprintf("%s epoch %d interval %d status [%s]", m.id, resp.MemberEpoch, resp.HeartbeatIntervalMillis, strings.Join(st, ", "))
}

func streamsStatusName(c int8) string {
	names := []string{"STALE_TOPOLOGY", "MISSING_SOURCE_TOPICS", "INCORRECTLY_PARTITIONED_TOPICS", "MISSING_INTERNAL_TOPICS",
		"SHUTDOWN_APPLICATION", "ASSIGNMENT_DELAYED", "MISSING_CLIENT_TAGS"}
	if int(c) < len(names) && c >= 0 {
		return names[c]
	}
	return fmt.Sprint(c)
}

// tasks is "active 0:0 1:0 standby -".
func (m *streamsMember) tasks() string {
	f := func(ts []kmsg.TaskIDs) string {
		var out []string
		for _, t := range ts {
			ps := slices.Clone(t.Partitions)
			slices.Sort(ps)
			out = append(out, fmt.Sprintf("%s:%v", t.SubtopologyID, ps))
		}
		slices.Sort(out)
		if len(out) == 0 {
			return "-"
		}
		return strings.Join(out, " ")
	}
	if len(m.active) == 0 && len(m.standby) == 0 {
		return "-"
	}
	return "active " + f(m.active) + " standby " + f(m.standby)
}

// partitions is the partition count of topic, as broker 1 knows it.
func (r *run) partitions(topic string) (int, bool) {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp := r.do(1, req).(*kmsg.MetadataResponse)
	if resp.Topics[0].ErrorCode != 0 {
		return 0, false
	}
	return len(resp.Topics[0].Partitions), true
}

// describeStreams is "State epoch E assignment epoch A, members m1@e, ...".
func (r *run) describeStreams(coord int32, group string) string {
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	g := r.do(coord, req).(*kmsg.StreamsGroupDescribeResponse).Groups[0]
	if g.ErrorCode != 0 {
		return errName(g.ErrorCode)
	}
	var ms []string
	for _, m := range g.Members {
		at := "at"
		if m.MemberEpoch != g.AssignmentEpoch {
			at = "behind"
		}
		ms = append(ms, fmt.Sprintf("%s %s", m.MemberID, at))
	}
	slices.Sort(ms)
	return fmt.Sprintf("%s, group epoch = assignment epoch: %v, members %s the assignment epoch", g.State, g.Epoch == g.AssignmentEpoch, strings.Join(ms, ", "))
}
