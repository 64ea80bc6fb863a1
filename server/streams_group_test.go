package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// countTopologyRequest is a Kafka Streams re-key then count: subtopology 0
// reads "input" and writes the repartition topic; subtopology 1 reads it
// and keeps a store whose changelog is compacted.
func countTopologyRequest() *kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID, s0.SourceTopics, s0.RepartitionSinkTopics = "0", []string{"input"}, []string{"app-rekey-repartition"}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	rp := kmsg.NewTopicInfo()
	rp.Topic = "app-rekey-repartition"
	rp.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "delete"}}
	cl := kmsg.NewTopicInfo()
	cl.Topic = "app-count-changelog"
	cl.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}
	s1.RepartitionSourceTopics, s1.StateChangelogTopics = []kmsg.TopicInfo{rp}, []kmsg.TopicInfo{cl}
	cg := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup()
	cg.RepartitionSourceTopics = []int16{0}
	s1.CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{cg}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return &t
}

type streamsClient struct {
	t   *testing.T
	cl  *kgo.Client
	grp string
}

func (sc streamsClient) join(member, process string, instance *string) *kmsg.StreamsGroupHeartbeatResponse {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = sc.grp, member, 0, 300_000
	req.Topology, req.ProcessID, req.InstanceID = countTopologyRequest(), &process, instance
	req.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "localhost", Port: 8080}
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return sc.send(req)
}

func (sc streamsClient) beat(member string, epoch, endpointEpoch int32, active []kmsg.TaskIDs) *kmsg.StreamsGroupHeartbeatResponse {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = sc.grp, member, epoch, -1
	req.EndpointInformationEpoch = endpointEpoch
	if active != nil {
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = active, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	}
	return sc.send(req)
}

func (sc streamsClient) send(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	sc.t.Helper()
	resp, err := toCoordinator(sc.t, sc.cl, sc.grp, req)
	if err != nil {
		sc.t.Fatal(err)
	}
	return resp.(*kmsg.StreamsGroupHeartbeatResponse)
}

// toCoordinator sends req to group's coordinator: franz-go does not know
// the streams APIs' routing, so the test finds the coordinator itself.
func toCoordinator(t *testing.T, cl *kgo.Client, group string, req kmsg.Request) (kmsg.Response, error) {
	t.Helper()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = group
	fr, err := fc.RequestWith(testContext(t), cl)
	if err != nil {
		return nil, err
	}
	if fr.ErrorCode != 0 {
		return nil, kerr.ErrorForCode(fr.ErrorCode)
	}
	return cl.Broker(int(fr.NodeID)).Request(testContext(t), req)
}

func wantStreamsError(t *testing.T, what string, resp *kmsg.StreamsGroupHeartbeatResponse, want *kerr.Error, msg string) {
	t.Helper()
	got := ""
	if resp.ErrorMessage != nil {
		got = *resp.ErrorMessage
	}
	if resp.ErrorCode != want.Code || got != msg || resp.HeartbeatIntervalMillis != 0 {
		t.Fatalf("%s: %v %q (interval %d), want %v %q", what, errorName(resp.ErrorCode), got, resp.HeartbeatIntervalMillis, want.Message, msg)
	}
}

func statuses(resp *kmsg.StreamsGroupHeartbeatResponse) []string {
	var out []string
	for _, s := range resp.Status {
		out = append(out, s.StatusDetail)
	}
	return out
}

// TestStreamsGroupHeartbeatAnswers drives one streams group with raw
// requests: the internal topics it creates, the first assignment, the
// endpoint-to-partitions map, describe, list and the error paths.
func TestStreamsGroupHeartbeatAnswers(t *testing.T) {
	c := NewTestCluster(t, Config{StreamsGroupInitialRebalanceDelay: -1})
	if err := c.CreateTopic("input", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	sc := streamsClient{t, newClient(t, c), "app"}

	first := sc.join("m1", "p1", nil)
	if first.ErrorCode != 0 || first.MemberID != "m1" || first.MemberEpoch != 1 || first.HeartbeatIntervalMillis != 5000 ||
		first.AcceptableRecoveryLag != 10000 || first.TaskOffsetIntervalMillis != 60000 {
		t.Fatalf("join: %+v", first)
	}
	if want := []string{"Internal topics are missing: app-count-changelog, app-rekey-repartition"}; !reflect.DeepEqual(statuses(first), want) ||
		first.Status[0].StatusCode != 3 || len(first.ActiveTasks) != 0 || first.ActiveTasks == nil {
		t.Fatalf("join statuses %v tasks %v", statuses(first), first.ActiveTasks)
	}
	for name, policy := range map[string]string{"app-rekey-repartition": "delete", "app-count-changelog": "compact"} {
		tp := c.topic(name)
		if tp == nil || len(tp.partitions()) != 3 {
			t.Fatalf("internal topic %s not created with 3 partitions", name)
		}
		if got := tp.cfg().configs["cleanup.policy"]; got != policy {
			t.Fatalf("%s cleanup.policy %q, want %q", name, got, policy)
		}
	}

	// Events: the member joined (a streams member), the internal topics
	// were created.
	evs := c.Events(0)
	joined, created := false, 0
	for _, e := range evs {
		joined = joined || e.Type == EventGroupMemberJoined && e.Group == "app" && e.Member == "m1" && e.Detail == "streams"
		if e.Type == EventTopicCreated && (e.Topic == "app-rekey-repartition" || e.Topic == "app-count-changelog") {
			created++
		}
	}
	if !joined || created != 2 {
		t.Fatalf("events: joined %v, internal topics created %d", joined, created)
	}

	second := sc.beat("m1", 1, first.EndpointInformationEpoch, []kmsg.TaskIDs{})
	wantActive := []kmsg.TaskIDs{{SubtopologyID: "0", Partitions: []int32{0, 1, 2}}, {SubtopologyID: "1", Partitions: []int32{0, 1, 2}}}
	if second.ErrorCode != 0 || second.MemberEpoch != 2 || len(second.Status) != 0 || !reflect.DeepEqual(stripTags(second.ActiveTasks), wantActive) {
		t.Fatalf("ready: code %d epoch %d statuses %v active %+v", second.ErrorCode, second.MemberEpoch, statuses(second), second.ActiveTasks)
	}
	if len(second.PartitionsByUserEndpoint) != 1 {
		t.Fatalf("endpoints %+v", second.PartitionsByUserEndpoint)
	}
	ep := second.PartitionsByUserEndpoint[0]
	if ep.UserEndpoint.Host != "localhost" || ep.UserEndpoint.Port != 8080 || len(ep.ActivePartitions) != 2 ||
		ep.ActivePartitions[0].Topic != "app-rekey-repartition" || ep.ActivePartitions[1].Topic != "input" ||
		!reflect.DeepEqual(ep.ActivePartitions[1].Partitions, []int32{0, 1, 2}) {
		t.Fatalf("endpoint map %+v", ep)
	}
	// Nothing changed: no tasks, no map.
	third := sc.beat("m1", 2, second.EndpointInformationEpoch, stripTags(second.ActiveTasks))
	if third.ErrorCode != 0 || third.MemberEpoch != 2 || third.ActiveTasks != nil || third.PartitionsByUserEndpoint != nil {
		t.Fatalf("steady: %+v", third)
	}

	// Error paths, with Kafka's messages.
	wantStreamsError(t, "fenced", sc.beat("m1", 7, 0, nil), kerr.FencedMemberEpoch,
		"The streams group member has a greater member epoch (7) than the one known by the group coordinator (2). The member must abandon all its tasks and rejoin.")
	wantStreamsError(t, "unknown member", sc.beat("nobody", 2, 0, nil), kerr.UnknownMemberID, "Member nobody is not a member of group app.")
	noID := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	noID.Group = "app"
	wantStreamsError(t, "no member id", sc.send(noID), kerr.InvalidRequest, "MemberId can't be empty.")
	bad := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	bad.Group, bad.MemberID, bad.RebalanceTimeoutMillis, bad.Topology = "app", "m9", 1000, countTopologyRequest()
	bad.Topology.Subtopologies[1].StateChangelogTopics[0].NumPartitions = 4
	wantStreamsError(t, "invalid topology", sc.send(bad), kerr.StreamsInvalidTopology,
		"Changelog topic app-count-changelog must have an undefined partition count, but it is set to 4.")
	late := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	late.Group, late.MemberID, late.MemberEpoch, late.Topology = "app", "m1", 2, countTopologyRequest()
	wantStreamsError(t, "topology after joining", sc.send(late), kerr.InvalidRequest, "Topology can only be provided when (re-)joining.")
	inst := "instance-1"
	if r := sc.join("s1", "p2", &inst); r.ErrorCode != 0 {
		t.Fatalf("static join: %v", errorName(r.ErrorCode))
	}
	wantStreamsError(t, "unreleased instance id", sc.join("s2", "p3", &inst), kerr.UnreleasedInstanceID,
		"Static member s2 with instance id instance-1 cannot join the group because the instance id is owned by member s1.")

	// DescribeGroups shows it Dead, ListGroups as a streams group,
	// ConsumerGroupHeartbeat refuses it.
	var listed []kmsg.ListGroupsResponseGroup
	for _, b := range c.brokers {
		req := kmsg.NewPtrListGroupsRequest()
		req.TypesFilter = []string{"streams"}
		resp, err := sc.cl.Broker(int(b.id)).Request(testContext(t), req)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, resp.(*kmsg.ListGroupsResponse).Groups...)
	}
	if len(listed) != 1 || listed[0].Group != "app" || listed[0].GroupType != "streams" || listed[0].ProtocolType != "streams" || listed[0].GroupState != "Reconciling" {
		t.Fatalf("listed %+v", listed)
	}
	chb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	chb.Version, chb.Group, chb.MemberID, chb.RebalanceTimeoutMillis, chb.SubscribedTopicNames = 1, "app", "c1", 1000, []string{"input"}
	if r, err := chb.RequestWith(testContext(t), sc.cl); err != nil || r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer heartbeat to a streams group: %v %v", err, r)
	}

	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Groups = []string{"app"}
	dresp, err := toCoordinator(t, sc.cl, "app", dreq)
	if err != nil {
		t.Fatal(err)
	}
	desc := dresp.(*kmsg.StreamsGroupDescribeResponse)
	g := desc.Groups[0]
	if g.ErrorCode != 0 || g.Epoch != 3 || g.AssignmentEpoch != 3 || g.Topology == nil || len(g.Topology.Subtopologies) != 2 || len(g.Members) != 2 {
		t.Fatalf("describe: %+v", g)
	}
	if m := g.Members[0]; m.MemberID != "m1" || m.ProcessID != "p1" || m.MemberEpoch != 2 || m.UserEndpoint == nil || m.ClientHost != "/127.0.0.1" {
		t.Fatalf("described member %+v", m)
	}
	nreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	nreq.Groups = []string{"nope"}
	nresp, err := toCoordinator(t, sc.cl, "nope", nreq)
	if err != nil {
		t.Fatal(err)
	}
	if nope := nresp.(*kmsg.StreamsGroupDescribeResponse).Groups[0]; nope.ErrorCode != kerr.GroupIDNotFound.Code || *nope.ErrorMessage != "Group nope not found." {
		t.Fatalf("unknown group: %v", errorName(nope.ErrorCode))
	}

	// Commits check the member epoch.
	commit := func(epoch int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation = 9, "app", "m1", epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "input"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, 5
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := withTopicIDs(c, req).RequestWith(testContext(t), sc.cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(1); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("stale commit: %v", errorName(code))
	}
	if code := commit(2); code != 0 {
		t.Fatalf("commit: %v", errorName(code))
	}
}

func stripTags(ts []kmsg.TaskIDs) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	for _, t := range ts {
		out = append(out, kmsg.TaskIDs{SubtopologyID: t.SubtopologyID, Partitions: t.Partitions})
	}
	return out
}

// TestStreamsGroupSurvivesCoordinatorCrash: the group's record brings it
// back on the new coordinator with the same epochs and tasks; a silent
// member leaves after streams.session.timeout.ms on the cluster clock.
func TestStreamsGroupSurvivesCoordinatorCrash(t *testing.T) {
	c := NewTestCluster(t, Config{StreamsGroupInitialRebalanceDelay: -1, Clock: clock.NewManual(time.Time{})})
	if err := c.CreateTopic("input", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	sc := streamsClient{t, newClient(t, c), "app"}
	sc.join("m1", "p1", nil)
	ready := sc.beat("m1", 1, 0, []kmsg.TaskIDs{})
	if ready.MemberEpoch != 2 || len(ready.ActiveTasks) != 2 {
		t.Fatalf("ready: %+v", ready)
	}
	coord, _ := c.coordinatorOf("app")
	if err := c.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	var after *kmsg.StreamsGroupHeartbeatResponse
	sc2 := streamsClient{t, newClient(t, c, kgo.SeedBrokers(liveBrokers(c)...)), "app"}
	waitFor(t, 20*time.Second, "the new coordinator", func() bool {
		after = sc2.beat("m1", 2, ready.EndpointInformationEpoch, stripTags(ready.ActiveTasks))
		return after.ErrorCode == 0
	})
	if after.MemberEpoch != 2 || after.ActiveTasks != nil || len(after.Status) != 0 {
		t.Fatalf("after failover: %+v", after)
	}
	gs, ok := c.Group("app")
	if !ok || gs.Type != "streams" || gs.State != "Stable" || len(gs.Members) != 1 ||
		!reflect.DeepEqual(gs.Members[0].Streams.Tasks.Active, map[string][]int32{"0": {0, 1}, "1": {0, 1}}) {
		t.Fatalf("group state %+v", gs)
	}
	// 45 s of silence: the member is gone, the group Empty.
	if err := c.AdvanceClock(45 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the member's session to end", func() bool {
		gs, ok := c.Group("app")
		return ok && gs.State == "Empty" && len(gs.Members) == 0
	})
}

// DeleteGroups: a streams group with members is NON_EMPTY_GROUP; once its
// member left it is deleted, its record with it (not back after a crash).
func TestStreamsGroupDelete(t *testing.T) {
	c := NewTestCluster(t, Config{StreamsGroupInitialRebalanceDelay: -1})
	if err := c.CreateTopic("input", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	sc := streamsClient{t, newClient(t, c), "app"}
	sc.join("m1", "p1", nil)
	del := func() int16 {
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{"app"}
		resp, err := req.RequestWith(testContext(t), sc.cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Groups[0].ErrorCode
	}
	if code := del(); code != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete with a member: %v", errorName(code))
	}
	// A classic member may not join it (Kafka 4.4's answer).
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.MemberID, join.ProtocolType = 9, "app", "classic", "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 3, 0, 0, 0, 0, 0, 0, 0, 0}}}
	if r, err := join.RequestWith(testContext(t), sc.cl); err != nil || r.ErrorCode != kerr.InconsistentGroupProtocol.Code || r.MemberID != "" {
		t.Fatalf("classic join of a streams group: %v %+v", err, r)
	}
	if r := sc.beat("m1", -1, 0, nil); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", r)
	}
	if code := del(); code != 0 {
		t.Fatalf("delete: %v", errorName(code))
	}
	coord, _ := c.coordinatorOf("app")
	if err := c.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "a new coordinator", func() bool {
		_, code := c.coordinatorOf("app")
		return code == 0
	})
	if _, ok := c.Group("app"); ok {
		t.Fatal("the deleted group is back after a failover")
	}
}

// An empty streams group becomes a classic group when a classic member
// joins, as in Kafka 4.4; its streams record is deleted, so it stays
// classic after a failover.
func TestStreamsGroupEmptyTurnsClassic(t *testing.T) {
	c := NewTestCluster(t, Config{StreamsGroupInitialRebalanceDelay: -1})
	if err := c.CreateTopic("input", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	sc := streamsClient{t, newClient(t, c), "app"}
	sc.join("m1", "p1", nil)
	sc.beat("m1", -1, 0, nil)
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType = 9, "app", "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 3, 0, 0, 0, 0, 0, 0, 0, 0}}}
	if r, err := join.RequestWith(testContext(t), sc.cl); err != nil || r.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("classic join of an empty streams group: %v %+v", err, r)
	}
	coord, _ := c.coordinatorOf("app")
	if err := c.StopBroker(coord, StopCrash); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "a new coordinator", func() bool {
		now, code := c.coordinatorOf("app")
		return code == 0 && now != coord
	})
	// Nothing of it is left (no member, no commit): gone, not a streams
	// group again.
	if gs, ok := c.Group("app"); ok && gs.Type == "streams" {
		t.Fatalf("a streams group again after a failover: %+v", gs)
	}
}

// A member that does not revoke its tasks within its rebalance timeout is
// fenced, and its tasks move (on the cluster clock).
func TestStreamsGroupRevocationTimeout(t *testing.T) {
	c := NewTestCluster(t, Config{StreamsGroupInitialRebalanceDelay: -1, Clock: clock.NewManual(time.Time{})})
	if err := c.CreateTopic("input", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	sc := streamsClient{t, newClient(t, c), "app"}
	join := func(member, process string) *kmsg.StreamsGroupHeartbeatResponse {
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = "app", member, 10_000
		req.Topology, req.ProcessID = countTopologyRequest(), &process
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		return sc.send(req)
	}
	join("m1", "p1")
	all := sc.beat("m1", 1, 0, []kmsg.TaskIDs{})
	if all.MemberEpoch != 2 || len(all.ActiveTasks) != 2 {
		t.Fatalf("m1: %+v", all)
	}
	join("m2", "p2")
	// m1 is told to give half up, and keeps saying it owns everything.
	r := sc.beat("m1", 2, 0, stripTags(all.ActiveTasks))
	if r.MemberEpoch != 2 || len(r.ActiveTasks) != 2 || len(r.ActiveTasks[0].Partitions) != 1 {
		t.Fatalf("revoking: %+v", r)
	}
	if err := c.AdvanceClock(9 * time.Second); err != nil {
		t.Fatal(err)
	}
	if r := sc.beat("m1", 2, 0, stripTags(all.ActiveTasks)); r.ErrorCode != 0 {
		t.Fatalf("before the timeout: %v", errorName(r.ErrorCode))
	}
	if err := c.AdvanceClock(time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "m1 fenced", func() bool {
		gs, ok := c.Group("app")
		return ok && len(gs.Members) == 1 && gs.Members[0].MemberID == "m2"
	})
	wantStreamsError(t, "fenced member", sc.beat("m1", 2, 0, stripTags(all.ActiveTasks)), kerr.UnknownMemberID, "Member m1 is not a member of group app.")
	m2 := sc.beat("m2", 3, 0, []kmsg.TaskIDs{})
	if m2.ErrorCode != 0 || m2.MemberEpoch != 4 || len(m2.ActiveTasks) != 2 || len(m2.ActiveTasks[0].Partitions) != 2 {
		t.Fatalf("m2 after m1 was fenced: %+v", m2)
	}
}

// streamsHeartbeatACLReq is a streams member joining group "g" with a
// topology reading "t", for TestACLEveryAPI.
func streamsHeartbeatACLReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.RebalanceTimeoutMillis = "g", "acl-member", 60_000
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s.SubtopologyID, s.SourceTopics = "0", []string{"t"}
	t.Subtopologies = append(t.Subtopologies, s)
	req.Topology, req.ProcessID = &t, kmsg.StringPtr("p")
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return req
}
