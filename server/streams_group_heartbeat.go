package server

// StreamsGroupHeartbeat, versions 0-1 (KIP-1071, group.protocol=streams).
//
// A Kafka Streams client's member joins with epoch 0 and its topology;
// the coordinator validates the topology against the topics (statuses
// MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS,
// MISSING_INTERNAL_TOPICS, STALE_TOPOLOGY, ASSIGNMENT_DELAYED,
// SHUTDOWN_APPLICATION), creates the missing repartition and changelog
// topics with the configs the topology asks for, and assigns active and
// standby tasks with the sticky assignor (package group's step). Requests
// Kafka refuses get its INVALID_REQUEST messages; a group of another type
// is GROUP_ID_NOT_FOUND. The state is written to __consumer_offsets before
// the answer, so a new coordinator carries on after a failover.

import (
	"fmt"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsTaskOffsetInterval is group.streams.task.offset.interval.ms,
// Kafka 4.4's default.
const streamsTaskOffsetInterval = 60 * time.Second

func (cn *conn) handleStreamsGroupHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{} // Kafka's answers carry a list, empty on errors too
	fail := func(err *kerr.Error, msg string) (kmsg.Response, error) {
		*resp = *req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode, resp.ErrorMessage = err.Code, &msg
		resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
		return resp, nil
	}
	if !cn.allowedGroup(authorizer.OpRead, req.Group) {
		return fail(kerr.GroupAuthorizationFailed, "Authorization failed.")
	}
	if err, msg := validStreamsHeartbeat(req); err != nil {
		return fail(err, msg)
	}
	topo, err, msg := streamsTopology(req.Topology)
	if err != nil {
		return fail(err, msg)
	}
	g, code := c.group(cn.b.id, req.Group, req.MemberEpoch == 0)
	if code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	if g == nil {
		return fail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
	}
	gc := c.groupConfig(req.Group)

	// Heartbeats of one group take turns: each one's change is written
	// (and committed) before the answer, in order.
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	hr := grp.StreamsHeartbeatRequest{
		Group: req.Group, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch, EndpointEpoch: req.EndpointInformationEpoch,
		InstanceID: req.InstanceID, RackID: req.RackID, Topology: topo, ProcessID: req.ProcessID,
		Shutdown: req.ShutdownApplication, ClientID: cn.hdr.ClientID, ClientHost: cn.clientHost(),
	}
	if req.RebalanceTimeoutMillis > 0 {
		hr.RebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.ActiveTasks != nil {
		hr.Owned = &grp.TaskSet{Active: tasksOf(req.ActiveTasks), Standby: tasksOf(req.StandbyTasks), Warmup: tasksOf(req.WarmupTasks)}
	}
	if req.UserEndpoint != nil {
		hr.Endpoint = &grp.Endpoint{Host: req.UserEndpoint.Host, Port: req.UserEndpoint.Port}
	}
	if req.ClientTags != nil {
		hr.ClientTags = map[string]string{}
		for _, t := range req.ClientTags {
			hr.ClientTags[t.Key] = t.Value
		}
	}

	g.Mu.Lock()
	sg := g.StreamsGroup()
	if sg == nil {
		switch {
		case g.ConsumerGroup() != nil || g.HasClassicMembers():
			g.Mu.Unlock()
			return fail(kerr.GroupIDNotFound, fmt.Sprintf("Group %s is not a streams group.", req.Group))
		case req.MemberEpoch != 0:
			g.Mu.Unlock()
			return fail(kerr.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, req.Group))
		}
		sg = grp.NewStreamsGroup()
		g.Streams = sg
	}
	res := sg.Heartbeat(hr, streamsTopics{c}, grp.StreamsSettings{
		NumStandbyReplicas: int(gc.StreamsNumStandbyReplicas), InitialRebalanceDelay: gc.StreamsInitialRebalanceDelay, Now: c.now(),
	})
	c.emitConsumerEvents(g, res.Events)
	if res.Code != 0 {
		g.Mu.Unlock()
		return fail(kerr.ErrorForCode(res.Code).(*kerr.Error), res.Message)
	}
	m := res.Member
	if !res.Left || res.MemberEpoch == grp.StreamsLeaveStaticEpoch {
		g.TouchStreamsMember(m, gc.StreamsSessionTimeout)
	}
	if !res.Left {
		g.ArmStreamsRevocation(m)
	}
	resp.MemberID, resp.MemberEpoch = m.ID, res.MemberEpoch
	if !res.Left {
		resp.HeartbeatIntervalMillis = int32(gc.StreamsHeartbeatInterval.Milliseconds())
		resp.AcceptableRecoveryLag = gc.StreamsAcceptableRecoveryLag
		resp.TaskOffsetIntervalMillis = int32(streamsTaskOffsetInterval.Milliseconds())
		for _, s := range res.Statuses {
			rs := kmsg.NewStreamsGroupHeartbeatResponseStatus()
			rs.StatusCode, rs.StatusDetail = s.Code, s.Message
			resp.Status = append(resp.Status, rs)
		}
		if a := res.Assignment; a != nil {
			resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks = taskIDs(a.Active), taskIDs(a.Standby), taskIDs(a.Warmup)
		}
		resp.EndpointInformationEpoch = sg.EndpointEpoch
		if res.Endpoints && m.Endpoint != nil {
			resp.PartitionsByUserEndpoint = endpointPartitions(sg)
		}
	}
	g.Mu.Unlock()

	// The internal topics the topology needs, as the broker creates them.
	for _, ti := range res.Create {
		c.createInternalTopic(ti)
	}
	// A failed write leaves nothing applied, as Kafka's runtime reverts it.
	if code := g.PersistStreams(); code != 0 {
		g.Mu.Lock()
		g.RevertStreams()
		g.Mu.Unlock()
		*resp = *req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode, resp.Status = code, []kmsg.StreamsGroupHeartbeatResponseStatus{}
	}
	return resp, nil
}

// validStreamsHeartbeat is Kafka's request validation, in its order and
// with its messages.
func validStreamsHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) (*kerr.Error, string) {
	switch {
	case req.MemberID == "":
		return kerr.InvalidRequest, "MemberId can't be empty."
	case req.Group == "":
		return kerr.InvalidRequest, "GroupId can't be empty."
	case req.InstanceID != nil && *req.InstanceID == "":
		return kerr.InvalidRequest, "InstanceId can't be empty."
	case req.RackID != nil && *req.RackID == "":
		return kerr.InvalidRequest, "RackId can't be empty."
	}
	if req.MemberEpoch == 0 {
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."
		case len(req.ActiveTasks) > 0:
			return kerr.InvalidRequest, "ActiveTasks must be empty when (re-)joining."
		case len(req.StandbyTasks) > 0:
			return kerr.InvalidRequest, "StandbyTasks must be empty when (re-)joining."
		case len(req.WarmupTasks) > 0:
			return kerr.InvalidRequest, "WarmupTasks must be empty when (re-)joining."
		case req.Topology == nil:
			return kerr.InvalidRequest, "Topology must be non-null when (re-)joining."
		}
		for _, s := range req.Topology.Subtopologies {
			for _, ti := range s.StateChangelogTopics {
				if ti.NumPartitions != 0 {
					return kerr.StreamsInvalidTopology, fmt.Sprintf("Changelog topic %s must have an undefined partition count, but it is set to %d.", ti.Topic, ti.NumPartitions)
				}
			}
		}
	}
	switch {
	case req.MemberEpoch == grp.StreamsLeaveStaticEpoch && req.InstanceID == nil:
		return kerr.InvalidRequest, "InstanceId can't be null."
	case req.MemberEpoch < grp.StreamsLeaveStaticEpoch:
		return kerr.InvalidRequest, fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch)
	case (req.ActiveTasks != nil || req.StandbyTasks != nil || req.WarmupTasks != nil) &&
		(req.ActiveTasks == nil || req.StandbyTasks == nil || req.WarmupTasks == nil):
		return kerr.InvalidRequest, "If one task-type is non-null, all must be non-null."
	case req.MemberEpoch != 0 && req.Topology != nil:
		return kerr.InvalidRequest, "Topology can only be provided when (re-)joining."
	}
	if req.Topology != nil {
		for _, s := range req.Topology.Subtopologies {
			if len(s.SourceTopicRegex) > 0 {
				return kerr.InvalidRequest, "Regular expressions for source topics are not supported yet."
			}
		}
	}
	return nil, ""
}

// streamsTopology is the request's topology as package group keeps it:
// subtopologies by id, copartition groups by topic name.
func streamsTopology(t *kmsg.StreamsGroupHeartbeatRequestTopology) (*grp.Topology, *kerr.Error, string) {
	if t == nil {
		return nil, nil, ""
	}
	if t.Epoch < 0 {
		return nil, kerr.StreamsInvalidTopology, "Topology epoch must be non-negative."
	}
	out := &grp.Topology{Epoch: t.Epoch}
	for _, s := range t.Subtopologies {
		gs := grp.Subtopology{ID: s.SubtopologyID, SourceTopics: s.SourceTopics, SourceTopicRegex: s.SourceTopicRegex,
			RepartitionSinkTopics: s.RepartitionSinkTopics}
		gs.RepartitionSourceTopics = topicInfos(s.RepartitionSourceTopics)
		gs.StateChangelogTopics = topicInfos(s.StateChangelogTopics)
		for _, cg := range s.CopartitionGroups {
			var names []string
			for _, i := range cg.SourceTopics {
				if int(i) < 0 || int(i) >= len(s.SourceTopics) {
					return nil, kerr.StreamsInvalidTopology, fmt.Sprintf("Copartition group of subtopology %s refers to source topic %d, which does not exist.", s.SubtopologyID, i)
				}
				names = append(names, s.SourceTopics[i])
			}
			for _, i := range cg.RepartitionSourceTopics {
				if int(i) < 0 || int(i) >= len(s.RepartitionSourceTopics) {
					return nil, kerr.StreamsInvalidTopology, fmt.Sprintf("Copartition group of subtopology %s refers to repartition source topic %d, which does not exist.", s.SubtopologyID, i)
				}
				names = append(names, s.RepartitionSourceTopics[i].Topic)
			}
			gs.CopartitionGroups = append(gs.CopartitionGroups, names)
		}
		out.Subtopologies = append(out.Subtopologies, gs)
	}
	slices.SortFunc(out.Subtopologies, func(a, b grp.Subtopology) int { return cmpString(a.ID, b.ID) })
	return out, nil, ""
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func topicInfos(in []kmsg.TopicInfo) []grp.TopicInfo {
	var out []grp.TopicInfo
	for _, ti := range in {
		gi := grp.TopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, ReplicationFactor: ti.ReplicationFactor}
		for _, kv := range ti.Configs {
			if gi.Configs == nil {
				gi.Configs = map[string]string{}
			}
			gi.Configs[kv.Key] = kv.Value
		}
		out = append(out, gi)
	}
	return out
}

func tasksOf(in []kmsg.TaskIDs) grp.Tasks {
	t := grp.Tasks{}
	for _, ti := range in {
		for _, p := range ti.Partitions {
			t.Add(ti.SubtopologyID, p)
		}
	}
	return t
}

func taskIDs(t grp.Tasks) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	for _, sub := range t.Subtopologies() {
		ti := kmsg.NewTaskIDs()
		ti.SubtopologyID, ti.Partitions = sub, slices.Clone(t[sub])
		out = append(out, ti)
	}
	return out
}

func (h groupHost) StreamsSessionTimeout(group string) time.Duration {
	return h.c.groupConfig(group).StreamsSessionTimeout
}
func (h groupHost) StreamsTopics() grp.StreamsTopics { return streamsTopics{h.c} }

// streamsTopics is the live topic table as streams groups read it.
type streamsTopics struct{ c *Cluster }

func (st streamsTopics) Partitions(name string) (int, bool) {
	t := st.c.topic(name)
	if t == nil {
		return 0, false
	}
	return len(t.partitions()), true
}

// createInternalTopic creates a repartition or changelog topic a streams
// topology needs, as Kafka's coordinator asks its broker to.
func (c *Cluster) createInternalTopic(ti grp.TopicInfo) {
	rf := ti.ReplicationFactor
	if rf == 0 {
		rf = -1
	}
	_, err, msg := c.createTopic(topicSpec{name: ti.Name, partitions: ti.Partitions, rf: rf, configs: ti.Configs}, false)
	if err != nil && err != kerr.TopicAlreadyExists {
		c.log.Warn("creating a streams internal topic failed", "topic", ti.Name, "error", err, "message", msg)
		return
	}
	if err == nil {
		c.log.Info("streams internal topic created", "topic", ti.Name, "partitions", ti.Partitions)
	}
}

// endpointPartitions is the endpoint-to-partitions map of a group: the
// partitions of each member's active and standby tasks in the target
// assignment (their source and repartition source topics), by the
// member's user endpoint. The target, not what members own yet: a Kafka
// Streams client refreshes its metadata when its own tasks change, so the
// map it gets with its revocation must already say where tasks go.
func endpointPartitions(sg *grp.StreamsGroup) []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint {
	out := []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
	if sg.Topology == nil {
		return out
	}
	for _, m := range sg.SortedMembers() {
		if m.Endpoint == nil {
			continue
		}
		e := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
		e.UserEndpoint.Host, e.UserEndpoint.Port = m.Endpoint.Host, m.Endpoint.Port
		target := sg.Target[m.ID]
		for _, tp := range taskPartitions(sg, target.Active) {
			ap := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition()
			ap.Topic, ap.Partitions = tp.topic, tp.partitions
			e.ActivePartitions = append(e.ActivePartitions, ap)
		}
		standby := target.Standby.Clone()
		for sub, ps := range target.Warmup {
			for _, p := range ps {
				standby.Add(sub, p)
			}
		}
		for _, tp := range taskPartitions(sg, standby) {
			sp := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition()
			sp.Topic, sp.Partitions = tp.topic, tp.partitions
			e.StandbyPartitions = append(e.StandbyPartitions, sp)
		}
		out = append(out, e)
	}
	return out
}

type topicPartitions struct {
	topic      string
	partitions []int32
}

// taskPartitions are the input partitions of tasks, by topic name.
func taskPartitions(sg *grp.StreamsGroup, t grp.Tasks) []topicPartitions {
	by := map[string]grp.Tasks{}
	for _, s := range sg.Topology.Subtopologies {
		ps := t[s.ID]
		if len(ps) == 0 {
			continue
		}
		names := slices.Clone(s.SourceTopics)
		for _, ti := range s.RepartitionSourceTopics {
			names = append(names, ti.Name)
		}
		for _, n := range names {
			if by[n] == nil {
				by[n] = grp.Tasks{}
			}
			for _, p := range ps {
				if seen, ok := sg.TopicsSeen[n]; ok && int(p) >= seen {
					continue // a topic with fewer partitions than the subtopology has tasks
				}
				by[n].Add("", p)
			}
		}
	}
	var out []topicPartitions
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, topicPartitions{n, by[n][""]})
	}
	return out
}
