package group

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
)

// fakeTopics is a topic table: names to partition counts.
type fakeTopics map[string]int

func topicID(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	return id
}

func (ft fakeTopics) Subscribed(m *ConsumerMember) []Topic {
	var out []Topic
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range ft {
			if !yield(n) {
				return
			}
		}
	}) {
		match := slices.Contains(m.Subscribed, name)
		if m.Regex != "" {
			re, _ := CompileSubscription(m.Regex)
			match = match || re.MatchString(name)
		}
		if match {
			out = append(out, Topic{ID: topicID(name), Name: name, Partitions: ft[name]})
		}
	}
	return out
}

func (ft fakeTopics) Lookup(name string) (Topic, bool) {
	n, ok := ft[name]
	return Topic{ID: topicID(name), Name: name, Partitions: n}, ok
}

func (ft fakeTopics) ByID(id [16]byte) (Topic, bool) {
	for name, n := range ft {
		if topicID(name) == id {
			return Topic{ID: id, Name: name, Partitions: n}, true
		}
	}
	return Topic{}, false
}

// parts is an assignment of topic "t" (or another topic with on).
func parts(ps ...int32) Assignment {
	a := Assignment{}
	for _, p := range ps {
		a.Add(topicID("t"), p)
	}
	return a
}

func join(id string, topics ...string) HeartbeatRequest {
	return HeartbeatRequest{Group: "g", MemberID: id, MemberEpoch: 0, SubscribedTopicNames: topics, RebalanceTimeout: time.Minute, ClientID: "c-" + id, ClientHost: "/10.0.0.1"}
}

func beat(id string, epoch int32, owned Assignment) HeartbeatRequest {
	return HeartbeatRequest{Group: "g", MemberID: id, MemberEpoch: epoch, Owned: owned}
}

func types(evs []Event) []EventType {
	out := []EventType{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func check(t *testing.T, what string, res HeartbeatResult, epoch int32, assigned Assignment, evs ...EventType) {
	t.Helper()
	if res.Code != 0 {
		t.Fatalf("%s: %v %s", what, kerr.ErrorForCode(res.Code), res.Message)
	}
	if res.MemberEpoch != epoch {
		t.Errorf("%s: member epoch %d, want %d", what, res.MemberEpoch, epoch)
	}
	if !reflect.DeepEqual(res.Assignment, assigned) && !(len(res.Assignment) == 0 && len(assigned) == 0 && (res.Assignment == nil) == (assigned == nil)) {
		t.Errorf("%s: assignment %v, want %v", what, res.Assignment, assigned)
	}
	if got := types(res.Events); !slices.Equal(got, append([]EventType{}, evs...)) {
		t.Errorf("%s: events %v, want %v", what, got, evs)
	}
}

// Two members share a topic: the second waits until the first revokes
// what moves to it; epochs move as KIP-848's do.
func TestConsumerJoinRevokeAssign(t *testing.T) {
	topics := fakeTopics{"t": 4}
	cg := NewConsumerGroup()

	// A join bumps the group epoch for the member, for its subscription
	// and for the topics it brings into view: 3.
	res := cg.Heartbeat(join("a", "t"), topics)
	check(t, "a joins", res, 3, parts(0, 1, 2, 3), MemberJoined, RebalanceStarted, RebalanceCompleted)
	if cg.Epoch != 3 || cg.AssignmentEpoch != 3 || cg.State() != "Stable" {
		t.Fatalf("after a: epoch %d assignment epoch %d %s", cg.Epoch, cg.AssignmentEpoch, cg.State())
	}
	if m := cg.Members["a"]; m.ClientID != "c-a" || m.ClientHost != "/10.0.0.1" || m.RebalanceTimeout != time.Minute {
		t.Fatalf("member a: %+v", m)
	}
	check(t, "a again", cg.Heartbeat(beat("a", 3, parts(0, 1, 2, 3)), topics), 3, nil)

	// b joins: a keeps 0,1 and must revoke 2,3 before b gets them.
	check(t, "b joins", cg.Heartbeat(join("b", "t"), topics), 5, Assignment{}, MemberJoined, RebalanceStarted)
	if got := cg.Target; !reflect.DeepEqual(got, map[string]Assignment{"a": parts(0, 1), "b": parts(2, 3)}) {
		t.Fatalf("target %v", got)
	}
	if cg.State() != "Reconciling" {
		t.Fatalf("state %s", cg.State())
	}
	check(t, "b before a revoked", cg.Heartbeat(beat("b", 5, Assignment{}), topics), 5, nil)
	check(t, "a told to revoke", cg.Heartbeat(beat("a", 3, parts(0, 1, 2, 3)), topics), 3, parts(0, 1))
	check(t, "a revoked", cg.Heartbeat(beat("a", 3, parts(0, 1)), topics), 5, nil)
	check(t, "b gets 2,3", cg.Heartbeat(beat("b", 5, Assignment{}), topics), 5, parts(2, 3), RebalanceCompleted)
	if cg.State() != "Stable" || !cg.Settled() {
		t.Fatalf("state %s", cg.State())
	}

	// Fencing and unknown members.
	res = cg.Heartbeat(beat("a", 1, nil), topics)
	if res.Code != kerr.FencedMemberEpoch.Code || res.Member != nil {
		t.Fatalf("stale epoch: %v", kerr.ErrorForCode(res.Code))
	}
	if res := cg.Heartbeat(beat("zz", 5, nil), topics); res.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %v", kerr.ErrorForCode(res.Code))
	}
	if res := cg.Heartbeat(HeartbeatRequest{Group: "g", MemberID: "zz", MemberEpoch: -1}, topics); res.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member leaving: %v", kerr.ErrorForCode(res.Code))
	}
	if CheckMemberEpoch(cg.Members["a"], 5) != 0 || CheckMemberEpoch(cg.Members["a"], 4) != kerr.StaleMemberEpoch.Code ||
		CheckMemberEpoch(cg.Members["a"], 6) != kerr.FencedMemberEpoch.Code {
		t.Fatal("CheckMemberEpoch")
	}

	// b leaves: the target moves back to a, at a new epoch.
	res = cg.Heartbeat(HeartbeatRequest{Group: "g", MemberID: "b", MemberEpoch: -1}, topics)
	if res.Code != 0 || !res.Left || res.MemberEpoch != -1 || !slices.Equal(types(res.Events), []EventType{RebalanceStarted, MemberLeft}) {
		t.Fatalf("b leaves: %+v", res)
	}
	if res.Events[0].Epoch != 6 || res.Events[0].Detail != "1 members, assignment epoch 6" {
		t.Fatalf("rebalance event: %+v", res.Events[0])
	}
	check(t, "a takes all", cg.Heartbeat(beat("a", 5, parts(0, 1)), topics), 6, parts(0, 1, 2, 3), RebalanceCompleted)
	res = cg.Heartbeat(HeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: -1}, topics)
	if !res.Left || len(res.Events) != 1 || cg.State() != "Empty" || cg.Epoch != 7 {
		t.Fatalf("last member leaves: %+v, %s epoch %d", res, cg.State(), cg.Epoch)
	}
}

// A topic that grows or appears bumps the group epoch at the next
// heartbeat; a new subscription or assignor does too.
func TestConsumerMetadataChanges(t *testing.T) {
	topics := fakeTopics{"t": 2}
	cg := NewConsumerGroup()
	check(t, "join", cg.Heartbeat(join("a", "t"), topics), 3, parts(0, 1), MemberJoined, RebalanceStarted, RebalanceCompleted)
	topics["t"] = 3
	check(t, "t grew", cg.Heartbeat(beat("a", 3, parts(0, 1)), topics), 4, parts(0, 1, 2), RebalanceStarted, RebalanceCompleted)

	topics["u"] = 1
	req := beat("a", 4, parts(0, 1, 2))
	req.SubscribedTopicNames = []string{"u", "t", "u"}
	res := cg.Heartbeat(req, topics)
	want := parts(0, 1, 2)
	want.Add(topicID("u"), 0)
	// The subscription and the new topic in view: two epochs.
	check(t, "subscribes to u", res, 6, want, RebalanceStarted, RebalanceCompleted)
	if !slices.Equal(cg.Members["a"].Subscribed, []string{"t", "u"}) {
		t.Fatalf("subscription %v", cg.Members["a"].Subscribed)
	}

	range_ := "range"
	req = beat("a", 6, want)
	req.ServerAssignor = &range_
	check(t, "range assignor", cg.Heartbeat(req, topics), 7, nil, RebalanceStarted, RebalanceCompleted)
	if cg.Assignor != "range" || cg.Epoch != 7 {
		t.Fatalf("assignor %s epoch %d", cg.Assignor, cg.Epoch)
	}

	re := "t|u"
	req = beat("a", 7, want)
	req.SubscribedTopicNames, req.SubscribedTopicRegex, req.Principal, req.Host = []string{}, &re, "User:alice", "10.0.0.9"
	check(t, "by regex", cg.Heartbeat(req, topics), 9, nil, RebalanceStarted, RebalanceCompleted)
	if m := cg.Members["a"]; m.Regex != "t|u" || m.RegexPrincipal != "User:alice" || m.RegexHost != "10.0.0.9" {
		t.Fatalf("regex member %+v", m)
	}
}

// The range assignor gives each member a contiguous range per topic;
// uniform balances over all topics and keeps what stays balanced.
func TestConsumerAssignors(t *testing.T) {
	topics := fakeTopics{"t": 5, "u": 2}
	for _, c := range []struct {
		assignor string
		want     map[string]map[string][]int32
	}{
		{"range", map[string]map[string][]int32{"a": {"t": {0, 1}, "u": {0}}, "b": {"t": {2, 3, 4}, "u": {1}}}},
		{"uniform", map[string]map[string][]int32{"a": {"t": {0, 2, 4}, "u": {1}}, "b": {"t": {1, 3}, "u": {0}}}},
	} {
		cg := NewConsumerGroup()
		cg.Assignor = c.assignor
		for _, id := range []string{"a", "b"} {
			m := &ConsumerMember{ID: id, Subscribed: []string{"t", "u"}}
			cg.Members[id] = m
		}
		cg.NextEpoch()
		cg.ComputeTarget(topics)
		got := map[string]map[string][]int32{}
		for id, a := range cg.Target {
			got[id] = map[string][]int32{}
			for _, name := range []string{"t", "u"} {
				if ps := a[topicID(name)]; len(ps) > 0 {
					got[id][name] = ps
				}
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: target %v, want %v", c.assignor, got, c.want)
		}
		if cg.AssignmentEpoch != 1 || cg.SubscriptionsMoved(topics) {
			t.Errorf("%s: assignment epoch %d", c.assignor, cg.AssignmentEpoch)
		}
	}

	// Uniform is sticky: a third member takes only what balance needs.
	cg := NewConsumerGroup()
	for _, id := range []string{"a", "b"} {
		cg.Members[id] = &ConsumerMember{ID: id, Subscribed: []string{"t"}}
	}
	cg.ComputeTarget(fakeTopics{"t": 6})
	before := map[string]Assignment{"a": cg.Target["a"].Clone(), "b": cg.Target["b"].Clone()}
	cg.Members["c"] = &ConsumerMember{ID: "c", Subscribed: []string{"t"}}
	cg.ComputeTarget(fakeTopics{"t": 6})
	for _, id := range []string{"a", "b"} {
		kept := cg.Target[id].Filter(before[id].Has)
		if len(kept[topicID("t")]) != 2 || len(cg.Target[id][topicID("t")]) != 2 {
			t.Errorf("member %s: before %v, now %v", id, before[id], cg.Target[id])
		}
	}
	if len(cg.Target["c"][topicID("t")]) != 2 {
		t.Errorf("member c got %v", cg.Target["c"])
	}
}

// Static members (KIP-848 with group.instance.id): a second member with a
// live instance id is UNRELEASED_INSTANCE_ID; one that left with epoch -2
// keeps its assignment, and its next incarnation takes it over at the same
// group epoch (no rebalance), while the old id is fenced.
func TestConsumerStaticMemberReplaced(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	topics := fakeTopics{"t": 2}
	cg := NewConsumerGroup()
	inst := "instance-1"
	req := join("old", "t")
	req.InstanceID = &inst
	check(t, "old joins", cg.Heartbeat(req, topics), 3, parts(0, 1), MemberJoined, RebalanceStarted, RebalanceCompleted)
	fired := false
	cg.Members["old"].Session = clk.AfterFunc(time.Second, func() { fired = true })

	req = join("new", "t")
	req.InstanceID = &inst
	if res := cg.Heartbeat(req, topics); res.Code != kerr.UnreleasedInstanceID.Code || cg.Members["new"] != nil {
		t.Fatalf("a second live member: %+v", res)
	}
	// A heartbeat naming the instance with another member id is fenced;
	// an unknown instance is UNKNOWN_MEMBER_ID.
	other, nobody := beat("new", 3, nil), beat("old", 3, nil)
	other.InstanceID = &inst
	nobodyInst := "instance-2"
	nobody.InstanceID = &nobodyInst
	if res := cg.Heartbeat(other, topics); res.Code != kerr.FencedInstanceID.Code {
		t.Fatalf("other id: %v", kerr.ErrorForCode(res.Code))
	}
	if res := cg.Heartbeat(nobody, topics); res.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown instance: %v", kerr.ErrorForCode(res.Code))
	}

	leave := beat("old", LeftStatic, nil)
	leave.InstanceID = &inst
	res := cg.Heartbeat(leave, topics)
	if res.Code != 0 || res.MemberEpoch != -2 || !res.Left || cg.Members["old"].Epoch != -2 || !cg.Members["old"].Assigned.Equal(parts(0, 1)) || cg.Epoch != 3 {
		t.Fatalf("leave -2: %+v, group epoch %d", res, cg.Epoch)
	}
	// Nobody else gets its partitions meanwhile.
	check(t, "a dynamic member joins", cg.Heartbeat(join("d", "t"), topics), 5, Assignment{}, MemberJoined, RebalanceStarted)

	res = cg.Heartbeat(req, topics)
	if res.Code != 0 || cg.Members["old"] != nil || cg.Members["new"] == nil {
		t.Fatalf("static rejoin: %+v, members %v", res, cg.Members)
	}
	if got := types(res.Events); !slices.Equal(got, []EventType{MemberJoined}) {
		t.Fatalf("events %v", got)
	}
	// It takes over the old target (partition 0, since the dynamic member
	// joined) at the group epoch 5 — no new epoch for the replacement —
	// and, owning nothing as it joins, releases partition 1 to d.
	if res.MemberEpoch != 5 || cg.Epoch != 5 || !reflect.DeepEqual(res.Assignment, parts(0)) || !cg.Target["new"].Equal(parts(0)) {
		t.Fatalf("new incarnation: epoch %d (group %d) assignment %v target %v", res.MemberEpoch, cg.Epoch, res.Assignment, cg.Target)
	}
	check(t, "d gets partition 1", cg.Heartbeat(beat("d", 5, Assignment{}), topics), 5, parts(1), RebalanceCompleted)
	clk.Advance(2 * time.Second)
	if fired {
		t.Fatal("the replaced member's session timer fired")
	}
	if *cg.Members["new"].InstanceID != inst {
		t.Fatal("instance id lost")
	}
	if res := cg.Heartbeat(leave, topics); res.Code != kerr.FencedInstanceID.Code {
		t.Fatalf("the old incarnation: %v", kerr.ErrorForCode(res.Code))
	}

	// A member without an id is given one.
	res = cg.Heartbeat(join("", "t"), topics)
	if res.Code != 0 || len(res.Member.ID) != 32 {
		t.Fatalf("generated id %q", res.Member.ID)
	}
}

// What a coordinator writes is what the next one restores.
func TestConsumerRecordRoundTrip(t *testing.T) {
	topics := fakeTopics{"t": 4}
	cg := NewConsumerGroup()
	rack := "r1"
	req := join("a", "t")
	req.RackID = &rack
	cg.Heartbeat(req, topics)
	cg.Heartbeat(join("b", "t"), topics)
	cg.Heartbeat(beat("a", 3, parts(0, 1, 2, 3)), topics)

	raw, err := json.Marshal(cg.Record())
	if err != nil {
		t.Fatal(err)
	}
	var r ConsumerGroupRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	back := RestoreConsumerGroup(r)
	if back.Epoch != 5 || back.AssignmentEpoch != 5 || back.Assignor != "uniform" || back.State() != cg.State() {
		t.Fatalf("restored %+v", back)
	}
	for id, m := range cg.Members {
		bm := back.Members[id]
		if bm.Epoch != m.Epoch || !bm.Assigned.Equal(m.Assigned) || !bm.Owned.Equal(m.Owned) || !bm.Sent.Equal(m.Assigned) ||
			!back.Target[id].Equal(cg.Target[id]) || bm.ClientID != m.ClientID || bm.RebalanceTimeout != m.RebalanceTimeout {
			t.Errorf("member %s: restored %+v, was %+v", id, bm, m)
		}
	}
	if *back.Members["a"].RackID != "r1" {
		t.Error("rack lost")
	}
	if len(assignmentFromRecord(map[string][]int32{"zz": {1}})) != 0 {
		t.Error("a malformed topic id was restored")
	}
}
