package group

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func (ft fakeTopics) Partitions(name string) (int, bool) {
	n, ok := ft[name]
	return n, ok
}

// countTopology is Kafka Streams' re-key then count: subtopology 0 reads
// "input" and writes the repartition topic, subtopology 1 reads it and
// keeps a store with a changelog.
func countTopology() *Topology {
	return &Topology{Epoch: 0, Subtopologies: []Subtopology{
		{ID: "0", SourceTopics: []string{"input"}, RepartitionSinkTopics: []string{"app-rekey-repartition"}},
		{ID: "1", RepartitionSourceTopics: []TopicInfo{{Name: "app-rekey-repartition", Configs: map[string]string{"cleanup.policy": "delete"}}},
			StateChangelogTopics: []TopicInfo{{Name: "app-count-changelog", Configs: map[string]string{"cleanup.policy": "compact"}}},
			CopartitionGroups:    [][]string{{"app-rekey-repartition"}}},
	}}
}

func tasks(kv ...any) Tasks {
	t := Tasks{}
	for i := 0; i < len(kv); i += 2 {
		for _, p := range kv[i+1].([]int32) {
			t.Add(kv[i].(string), p)
		}
	}
	return t
}

func ps(p ...int32) []int32 { return p }

func sjoin(id, process string) StreamsHeartbeatRequest {
	pid := process
	return StreamsHeartbeatRequest{Group: "app", MemberID: id, MemberEpoch: 0, Topology: countTopology(), ProcessID: &pid,
		RebalanceTimeout: time.Minute, ClientID: "c-" + id, ClientHost: "/10.0.0.1"}
}

func sbeat(id string, epoch int32, owned TaskSet) StreamsHeartbeatRequest {
	return StreamsHeartbeatRequest{Group: "app", MemberID: id, MemberEpoch: epoch, Owned: &owned}
}

func active(t Tasks) TaskSet { return TaskSet{Active: t, Standby: Tasks{}, Warmup: Tasks{}} }

var noDelay = StreamsSettings{}

func TestStreamsTopologyValidationStatuses(t *testing.T) {
	sg := NewStreamsGroup()
	topics := fakeTopics{}
	res := sg.Heartbeat(sjoin("a", "p1"), topics, noDelay)
	if res.Code != 0 || res.MemberEpoch != 1 || sg.Epoch != 1 {
		t.Fatalf("join: code %d epoch %d group epoch %d", res.Code, res.MemberEpoch, sg.Epoch)
	}
	want := []Status{{StatusMissingSourceTopics, "Source topics input are missing."}}
	if !reflect.DeepEqual(res.Statuses, want) || sg.State() != "NotReady" || res.Assignment.Active.Len() != 0 || res.Create != nil {
		t.Fatalf("missing source: statuses %v state %s assignment %v create %v", res.Statuses, sg.State(), res.Assignment, res.Create)
	}

	// The source appears: the internal topics are to be created, with
	// the source's partition count and the topology's configs.
	topics["input"] = 3
	res = sg.Heartbeat(sbeat("a", 1, active(Tasks{})), topics, noDelay)
	want = []Status{{StatusMissingInternalTopics, "Internal topics are missing: app-count-changelog, app-rekey-repartition"}}
	if !reflect.DeepEqual(res.Statuses, want) || res.MemberEpoch != 2 || sg.Epoch != 2 {
		t.Fatalf("missing internal: statuses %v epoch %d/%d", res.Statuses, res.MemberEpoch, sg.Epoch)
	}
	wantCreate := []TopicInfo{
		{Name: "app-count-changelog", Partitions: 3, Configs: map[string]string{"cleanup.policy": "compact"}},
		{Name: "app-rekey-repartition", Partitions: 3, Configs: map[string]string{"cleanup.policy": "delete"}},
	}
	if !reflect.DeepEqual(res.Create, wantCreate) {
		t.Fatalf("create %+v", res.Create)
	}

	// A changelog created with the wrong partition count.
	topics["app-count-changelog"], topics["app-rekey-repartition"] = 2, 3
	res = sg.Heartbeat(sbeat("a", 2, active(Tasks{})), topics, noDelay)
	want = []Status{{StatusIncorrectlyPartitioned, "Existing topic app-count-changelog has different number of partitions: expected 3, found 2"}}
	if !reflect.DeepEqual(res.Statuses, want) || res.Create != nil {
		t.Fatalf("incorrectly partitioned: %v create %v", res.Statuses, res.Create)
	}

	// Right: every task goes to the only member, at the new group epoch.
	topics["app-count-changelog"] = 3
	res = sg.Heartbeat(sbeat("a", 3, active(Tasks{})), topics, noDelay)
	if len(res.Statuses) != 0 || res.MemberEpoch != 4 || sg.State() != "Stable" {
		t.Fatalf("ready: statuses %v epoch %d state %s", res.Statuses, res.MemberEpoch, sg.State())
	}
	if wantA := tasks("0", ps(0, 1, 2), "1", ps(0, 1, 2)); !res.Assignment.Active.Equal(wantA) {
		t.Fatalf("assignment %v, want %v", res.Assignment.Active, wantA)
	}
}

func TestStreamsCopartitionMismatch(t *testing.T) {
	topo := &Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{"left", "right"},
		CopartitionGroups: [][]string{{"left", "right"}}}}}
	ct := Configure(topo, fakeTopics{"left": 3, "right": 4})
	want := &Status{StatusIncorrectlyPartitioned, "Following topics do not have the same number of partitions: [left:3, right:4]"}
	if !reflect.DeepEqual(ct.Status, want) {
		t.Fatalf("status %+v", ct.Status)
	}
	ct = Configure(topo, fakeTopics{"left": 4, "right": 4})
	if !ct.Ready() || ct.Tasks["0"] != 4 {
		t.Fatalf("copartitioned: %+v", ct)
	}
}

func readyTopics() fakeTopics {
	return fakeTopics{"input": 4, "app-rekey-repartition": 4, "app-count-changelog": 4}
}

// A second member: the first revokes half of its tasks, keeping its epoch
// until its heartbeat shows them gone; only then do they move.
func TestStreamsRevokeBeforeReassign(t *testing.T) {
	sg, topics := NewStreamsGroup(), readyTopics()
	a := sg.Heartbeat(sjoin("a", "p1"), topics, noDelay)
	all := tasks("0", ps(0, 1, 2, 3), "1", ps(0, 1, 2, 3))
	if a.MemberEpoch != 1 || !a.Assignment.Active.Equal(all) {
		t.Fatalf("a: epoch %d tasks %v", a.MemberEpoch, a.Assignment)
	}
	b := sg.Heartbeat(sjoin("b", "p2"), topics, noDelay)
	// b joins at epoch 2 but gets nothing: a still owns everything.
	if b.MemberEpoch != 2 || b.Assignment.Active.Len() != 0 || sg.Members["b"].State != MemberUnreleasedTasks {
		t.Fatalf("b: epoch %d tasks %v state %s", b.MemberEpoch, b.Assignment, sg.Members["b"].State)
	}
	// Target: stateful tasks by partition first... the sticky assignor
	// keeps a's first quota (4 of 8) and gives b the rest.
	wantA := tasks("0", ps(0, 1), "1", ps(0, 1))
	wantB := tasks("0", ps(2, 3), "1", ps(2, 3))
	if !sg.Target["a"].Active.Equal(wantA) || !sg.Target["b"].Active.Equal(wantB) {
		t.Fatalf("target a %v b %v", sg.Target["a"].Active, sg.Target["b"].Active)
	}
	a = sg.Heartbeat(sbeat("a", 1, active(all)), topics, noDelay)
	if a.MemberEpoch != 1 || !a.Assignment.Active.Equal(wantA) || sg.Members["a"].State != MemberUnrevokedTasks {
		t.Fatalf("a revoking: epoch %d tasks %v", a.MemberEpoch, a.Assignment)
	}
	// b asks again: a has not confirmed, b still gets nothing.
	b = sg.Heartbeat(sbeat("b", 2, active(Tasks{})), topics, noDelay)
	if b.Assignment != nil || sg.Members["b"].Assigned.Active.Len() != 0 {
		t.Fatalf("b before revocation: %v", b.Assignment)
	}
	// a confirms: epoch 2, and b gets its tasks.
	a = sg.Heartbeat(sbeat("a", 1, active(wantA)), topics, noDelay)
	if a.MemberEpoch != 2 || a.Assignment != nil || sg.Members["a"].State != MemberStable {
		t.Fatalf("a revoked: epoch %d tasks %v", a.MemberEpoch, a.Assignment)
	}
	b = sg.Heartbeat(sbeat("b", 2, active(Tasks{})), topics, noDelay)
	if b.MemberEpoch != 2 || !b.Assignment.Active.Equal(wantB) || sg.State() != "Stable" {
		t.Fatalf("b: epoch %d tasks %v state %s", b.MemberEpoch, b.Assignment, sg.State())
	}

	// A heartbeat with an epoch ahead is fenced, an unknown member too; a's
	// previous epoch is still accepted while it owns nothing new.
	if r := sg.Heartbeat(sbeat("a", 3, active(wantA)), topics, noDelay); r.Code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("epoch ahead: %d", r.Code)
	}
	if r := sg.Heartbeat(sbeat("zz", 2, active(Tasks{})), topics, noDelay); r.Code != kerr.UnknownMemberID.Code || r.Message != "Member zz is not a member of group app." {
		t.Fatalf("unknown member: %d %q", r.Code, r.Message)
	}
	if r := sg.Heartbeat(sbeat("a", 1, active(wantA)), topics, noDelay); r.Code != 0 || r.MemberEpoch != 2 {
		t.Fatalf("previous epoch: %d %d", r.Code, r.MemberEpoch)
	}
	if r := sg.Heartbeat(sbeat("a", 1, active(all)), topics, noDelay); r.Code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("previous epoch owning more: %d", r.Code)
	}

	// b leaves: a gets everything back at epoch 3.
	if r := sg.Heartbeat(StreamsHeartbeatRequest{Group: "app", MemberID: "b", MemberEpoch: -1}, topics, noDelay); r.Code != 0 || !r.Left {
		t.Fatalf("leave: %+v", r)
	}
	a = sg.Heartbeat(sbeat("a", 2, active(wantA)), topics, noDelay)
	if a.MemberEpoch != 3 || !a.Assignment.Active.Equal(all) {
		t.Fatalf("a after b left: epoch %d tasks %v", a.MemberEpoch, a.Assignment)
	}
}

// Standbys go to another process than the active, and stay where they are.
func TestStreamsStandbyTasks(t *testing.T) {
	sg, topics := NewStreamsGroup(), readyTopics()
	set := StreamsSettings{NumStandbyReplicas: 1}
	sg.Heartbeat(sjoin("a", "p1"), topics, set)
	sg.Heartbeat(sjoin("b", "p2"), topics, set)
	ta, tb := sg.Target["a"], sg.Target["b"]
	// Only subtopology 1 is stateful: its standbys mirror the actives.
	if !ta.Active.Equal(tasks("0", ps(0, 1), "1", ps(0, 1))) || !ta.Standby.Equal(tasks("1", ps(2, 3))) {
		t.Fatalf("a target %+v", ta)
	}
	if !tb.Active.Equal(tasks("0", ps(2, 3), "1", ps(2, 3))) || !tb.Standby.Equal(tasks("1", ps(0, 1))) {
		t.Fatalf("b target %+v", tb)
	}
	// Two members of one process never share a task.
	sg2 := NewStreamsGroup()
	sg2.Heartbeat(sjoin("a", "p1"), topics, set)
	sg2.Heartbeat(sjoin("b", "p1"), topics, set)
	if n := sg2.Target["a"].Standby.Len() + sg2.Target["b"].Standby.Len(); n != 0 {
		t.Fatalf("standbys in the active's process: %d", n)
	}
}

func TestStreamsStaticMember(t *testing.T) {
	sg, topics := NewStreamsGroup(), readyTopics()
	inst := "i1"
	j := sjoin("a", "p1")
	j.InstanceID = &inst
	sg.Heartbeat(j, topics, noDelay)
	// Another member with the instance id while a is live: refused.
	j2 := sjoin("a2", "p1")
	j2.InstanceID = &inst
	if r := sg.Heartbeat(j2, topics, noDelay); r.Code != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("unreleased instance id: %d %s", r.Code, r.Message)
	}
	// a leaves for now (-2): its tasks wait; a2 takes its place with its
	// epoch and tasks, without a new group epoch.
	if r := sg.Heartbeat(StreamsHeartbeatRequest{Group: "app", MemberID: "a", MemberEpoch: -2, InstanceID: &inst}, topics, noDelay); r.Code != 0 || r.MemberEpoch != -2 {
		t.Fatalf("static leave: %+v", r)
	}
	epoch := sg.Epoch
	r := sg.Heartbeat(j2, topics, noDelay)
	if r.Code != 0 || r.MemberEpoch != 1 || sg.Epoch != epoch || r.Assignment.Active.Len() != 8 || sg.Members["a"] != nil {
		t.Fatalf("static rejoin: code %d epoch %d group %d->%d tasks %v", r.Code, r.MemberEpoch, epoch, sg.Epoch, r.Assignment)
	}
}

// A new group's first epoch starts the initial rebalance delay, as in Kafka
// 4.4 (compat/reference's streams-group scenario): the member joins at
// epoch 1 with no tasks and ASSIGNMENT_DELAYED first among the statuses;
// once the delay passes the target is computed at a new epoch.
func TestStreamsInitialRebalanceDelay(t *testing.T) {
	sg, topics := NewStreamsGroup(), readyTopics()
	t0 := time.Unix(1000, 0)
	set := StreamsSettings{InitialRebalanceDelay: 3 * time.Second, Now: t0}
	r := sg.Heartbeat(sjoin("a", "p1"), topics, set)
	want := []Status{{StatusAssignmentDelayed, "Assignment delayed due to the configured initial rebalance delay."}}
	if !reflect.DeepEqual(r.Statuses, want) || r.MemberEpoch != 1 || sg.AssignmentEpoch != 1 || r.Assignment.Active.Len() != 0 {
		t.Fatalf("delayed: %+v", r)
	}
	// A second member within the delay joins (epoch 2) but nothing moves.
	set.Now = t0.Add(time.Second)
	r = sg.Heartbeat(sjoin("b", "p2"), topics, set)
	if !reflect.DeepEqual(r.Statuses, want) || r.MemberEpoch != 1 || sg.Epoch != 2 {
		t.Fatalf("second member in the delay: %+v (group epoch %d)", r, sg.Epoch)
	}
	set.Now = t0.Add(3 * time.Second)
	r = sg.Heartbeat(sbeat("a", 1, active(Tasks{})), topics, set)
	if len(r.Statuses) != 0 || r.MemberEpoch != 3 || sg.AssignmentEpoch != 3 || r.Assignment.Active.Len() != 4 {
		t.Fatalf("after the delay: %+v", r)
	}
}

func TestStreamsRecordRestore(t *testing.T) {
	sg, topics := NewStreamsGroup(), readyTopics()
	sg.Heartbeat(sjoin("a", "p1"), topics, StreamsSettings{NumStandbyReplicas: 1})
	sg.Heartbeat(sjoin("b", "p2"), topics, StreamsSettings{NumStandbyReplicas: 1})
	raw, _ := json.Marshal(sg.Record())
	var r StreamsGroupRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	back := RestoreStreamsGroup(r)
	if !reflect.DeepEqual(back.Record(), sg.Record()) {
		t.Fatalf("restored %+v\nwant %+v", back.Record(), sg.Record())
	}
	// The restored group carries on: a's revocation completes as before.
	all := tasks("0", ps(0, 1, 2, 3), "1", ps(0, 1, 2, 3))
	res := back.Heartbeat(sbeat("a", 1, active(all)), topics, StreamsSettings{NumStandbyReplicas: 1})
	if res.MemberEpoch != 1 || back.Members["a"].State != MemberUnrevokedTasks {
		t.Fatalf("after restore: %+v", res)
	}
}

// Kafka lists missing internal topics in its HashMap's order, as the
// reference run showed: "st-app-rekey-repartition, st-app-counts-changelog"
// but "cg-streams-counts-changelog, cg-streams-rekey-repartition".
func TestStreamsJavaHashOrder(t *testing.T) {
	for _, c := range [][2][]string{
		{{"st-app-rekey-repartition", "st-app-counts-changelog"}, {"st-app-rekey-repartition", "st-app-counts-changelog"}},
		{{"cg-streams-rekey-repartition", "cg-streams-counts-changelog"}, {"cg-streams-counts-changelog", "cg-streams-rekey-repartition"}},
	} {
		if got := javaHashOrder(c[0]); !reflect.DeepEqual(got, c[1]) {
			t.Errorf("javaHashOrder(%v) = %v, want %v", c[0], got, c[1])
		}
	}
}

// A member asking for a shutdown: every member's next answer says
// SHUTDOWN_APPLICATION. A member with an older topology is told it is
// stale; another topology at the same epoch is refused.
func TestStreamsShutdownAndTopologyEpochs(t *testing.T) {
	sg, topics := NewStreamsGroup(), readyTopics()
	sg.Heartbeat(sjoin("a", "p1"), topics, noDelay)
	sg.Heartbeat(sjoin("b", "p2"), topics, noDelay)

	other := sjoin("c", "p3")
	other.Topology.Subtopologies[0].SourceTopics = []string{"elsewhere"}
	if r := sg.Heartbeat(other, topics, noDelay); r.Code != kerr.InvalidRequest.Code || r.Message != "Topology updates are not supported yet." || sg.Members["c"] != nil {
		t.Fatalf("another topology: %+v", r)
	}
	newer := sjoin("d", "p4")
	newer.Topology.Epoch = 1
	newer.Topology.Subtopologies[0].SourceTopics = []string{"elsewhere"}
	if r := sg.Heartbeat(newer, topics, noDelay); r.Code != kerr.InvalidRequest.Code {
		t.Fatalf("a newer topology: %+v", r)
	}

	// The group's topology is at epoch 0; a member at epoch 0 is current.
	// Make the group's newer to see a stale member.
	sg.Topology.Epoch = 2
	stale := sbeat("a", sg.Members["a"].Epoch, sg.Members["a"].Assigned)
	r := sg.Heartbeat(stale, topics, noDelay)
	want := []Status{{StatusStaleTopology, "The member's topology epoch 0 is behind the group's topology epoch 2."}}
	if !reflect.DeepEqual(r.Statuses, want) {
		t.Fatalf("stale topology: %+v", r.Statuses)
	}
	sg.Topology.Epoch = 0

	shut := sbeat("b", sg.Members["b"].Epoch, sg.Members["b"].Assigned)
	shut.Shutdown = true
	r = sg.Heartbeat(shut, topics, noDelay)
	want = []Status{{StatusShutdownApplication, "A client requested the shutdown of the whole application."}}
	if !reflect.DeepEqual(r.Statuses, want) {
		t.Fatalf("shutdown asked: %+v", r.Statuses)
	}
	if r := sg.Heartbeat(sbeat("a", sg.Members["a"].Epoch, sg.Members["a"].Assigned), topics, noDelay); !reflect.DeepEqual(r.Statuses, want) {
		t.Fatalf("shutdown told to the others: %+v", r.Statuses)
	}
}

// A static member leaving for now (-2) keeps its tasks: nobody else gets
// them; removed (its session ended), they move at a new epoch.
func TestStreamsStaticLeaveKeepsTasks(t *testing.T) {
	sg, topics := NewStreamsGroup(), readyTopics()
	inst := "i-a"
	ja := sjoin("a", "p1")
	ja.InstanceID = &inst
	sg.Heartbeat(ja, topics, noDelay)
	sg.Heartbeat(sjoin("b", "p2"), topics, noDelay)
	a := sg.Heartbeat(sbeat("a", 1, active(tasks("0", ps(0, 1, 2, 3), "1", ps(0, 1, 2, 3)))), topics, noDelay)
	a = sg.Heartbeat(sbeat("a", 1, *a.Assignment), topics, noDelay)
	sg.Heartbeat(sbeat("b", 2, active(Tasks{})), topics, noDelay)
	if a.MemberEpoch != 2 || sg.State() != "Stable" {
		t.Fatalf("setup: a at %d, state %s", a.MemberEpoch, sg.State())
	}
	epoch := sg.Epoch
	r := sg.Heartbeat(StreamsHeartbeatRequest{Group: "app", MemberID: "a", MemberEpoch: -2, InstanceID: &inst}, topics, noDelay)
	if r.Code != 0 || sg.Epoch != epoch || sg.Members["a"].Epoch != -2 || sg.Target["a"].Active.Len() != 4 {
		t.Fatalf("static leave: %+v, epoch %d->%d", r, epoch, sg.Epoch)
	}
	b := sg.Heartbeat(sbeat("b", 2, sg.Members["b"].Assigned), topics, noDelay)
	if b.Assignment != nil || sg.Members["b"].Assigned.Active.Len() != 4 {
		t.Fatalf("b took a's tasks: %+v", b.Assignment)
	}
	sg.Remove(sg.Members["a"]) // its session ended
	b = sg.Heartbeat(sbeat("b", 2, sg.Members["b"].Assigned), topics, noDelay)
	if b.MemberEpoch != 3 || b.Assignment.Active.Len() != 8 {
		t.Fatalf("after a's session: epoch %d tasks %v", b.MemberEpoch, b.Assignment)
	}
}
