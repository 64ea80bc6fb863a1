package group

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/internal/testkit"
	"github.com/twmb/franz-go/pkg/kerr"
)

func (ft fakeTopics) ByNames(names []string) []Topic {
	var out []Topic
	for _, n := range slices.Sorted(maps.Keys(ft)) {
		if slices.Contains(names, n) {
			out = append(out, Topic{ID: topicID(n), Name: n, Partitions: ft[n]})
		}
	}
	return out
}

func (h *shardHost) EmitShare(g *Group, _ string, evs []Event) { h.EmitConsumer(g, evs) }

func shareJoin(sg *ShareGroup, id string, topics Topics, names ...string) ShareHeartbeatResult {
	return sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: id, MemberEpoch: 0, SubscribedTopicNames: names}, topics)
}

func sparts(a Assignment, topic string) []int32 { return a[topicID(topic)] }

// Members take their target at once (no revocation); the epochs move with
// every membership change and each member's on its own heartbeat.
func TestShareHeartbeatSteps(t *testing.T) {
	topics := fakeTopics{"t": 4}
	sg := NewShareGroup()
	r := shareJoin(sg, "a", topics, "t")
	if r.Code != 0 || r.MemberEpoch != 1 || !slices.Equal(sparts(r.Assignment, "t"), []int32{0, 1, 2, 3}) {
		t.Fatalf("a joins: %+v", r)
	}
	if sg.State() != "Stable" {
		t.Fatalf("state %s", sg.State())
	}
	r = shareJoin(sg, "b", topics, "t")
	if r.MemberEpoch != 2 || !slices.Equal(sparts(r.Assignment, "t"), []int32{2, 3}) {
		t.Fatalf("b joins: %+v", r)
	}
	// a keeps epoch 1 until it heartbeats; then it gets 0-1 at epoch 2.
	if sg.Members["a"].Epoch != 1 {
		t.Fatalf("a's epoch moved without a heartbeat: %d", sg.Members["a"].Epoch)
	}
	r = sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 1}, topics)
	if r.Code != 0 || r.MemberEpoch != 2 || !slices.Equal(sparts(r.Assignment, "t"), []int32{0, 1}) {
		t.Fatalf("a's heartbeat: %+v", r)
	}
	// Nothing changed: no assignment in the answer.
	r = sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 2}, topics)
	if r.Code != 0 || r.MemberEpoch != 2 || r.Assignment != nil {
		t.Fatalf("steady heartbeat: %+v", r)
	}
	// Fenced and unknown.
	if r := sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 1}, topics); r.Code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("old epoch: %+v", r)
	}
	if r := sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 3}, topics); r.Code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("newer epoch: %+v", r)
	}
	if r := sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "x", MemberEpoch: 2}, topics); r.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown: %+v", r)
	}
	if r := sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "x", MemberEpoch: -1}, topics); r.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown leaves: %+v", r)
	}
	// b leaves: epoch 3, a's target is every partition again.
	r = sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "b", MemberEpoch: -1}, topics)
	if r.Code != 0 || !r.Left || r.MemberEpoch != -1 || sg.Epoch != 3 {
		t.Fatalf("b leaves: %+v epoch %d", r, sg.Epoch)
	}
	r = sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 2}, topics)
	if r.MemberEpoch != 3 || !slices.Equal(sparts(r.Assignment, "t"), []int32{0, 1, 2, 3}) {
		t.Fatalf("a after b left: %+v", r)
	}
	// A new partition bumps the epoch on the next heartbeat.
	topics["t"] = 5
	r = sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "a", MemberEpoch: 3}, topics)
	if r.MemberEpoch != 4 || !slices.Equal(sparts(r.Assignment, "t"), []int32{0, 1, 2, 3, 4}) {
		t.Fatalf("after a new partition: %+v", r)
	}
	// The group's size limit.
	r = sg.Heartbeat(ShareHeartbeatRequest{Group: "g", MemberID: "c", MemberEpoch: 0, SubscribedTopicNames: []string{"t"}, MaxSize: 1}, topics)
	if r.Code != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("max size: %+v", r)
	}
}

// More members than partitions: partitions are shared, each by
// ceil(M/P) members, spread as Kafka's SimpleAssignor spreads them.
func TestSimpleAssignSharing(t *testing.T) {
	topics := fakeTopics{"t": 2}
	members := map[string]*ShareMember{}
	for _, id := range []string{"a", "b", "c"} {
		members[id] = &ShareMember{ID: id, Subscribed: []string{"t"}}
	}
	got := SimpleAssign(members, nil, topics)
	// sharing 2, d = 4/3: counts 2, 1, 1.
	want := map[string][]int32{"a": {0, 1}, "b": {0}, "c": {1}}
	for id, ps := range want {
		if !slices.Equal(sparts(got[id], "t"), ps) {
			t.Fatalf("%s: %v, want %v (all %v)", id, sparts(got[id], "t"), ps, got)
		}
	}
	// Sticky: with a fourth member each keeps what it can.
	members["d"] = &ShareMember{ID: "d", Subscribed: []string{"t"}}
	got = SimpleAssign(members, got, topics)
	counts := map[int32]int{}
	for _, a := range got {
		if len(sparts(a, "t")) != 1 {
			t.Fatalf("4 members, 2 partitions: %v", got)
		}
		counts[sparts(a, "t")[0]]++
	}
	if counts[0] != 2 || counts[1] != 2 || !slices.Equal(sparts(got["b"], "t"), []int32{0}) || !slices.Equal(sparts(got["c"], "t"), []int32{1}) {
		t.Fatalf("sticky spread: %v", got)
	}
	// Two topics, members subscribed to one each.
	topics = fakeTopics{"t": 1, "u": 2}
	members = map[string]*ShareMember{"a": {ID: "a", Subscribed: []string{"t"}}, "b": {ID: "b", Subscribed: []string{"u"}}}
	got = SimpleAssign(members, nil, topics)
	if !slices.Equal(sparts(got["a"], "t"), []int32{0}) || !slices.Equal(sparts(got["b"], "u"), []int32{0, 1}) || len(got["a"]) != 1 {
		t.Fatalf("heterogeneous: %v", got)
	}
}

// On the runtime: the state is written to __consumer_offsets, a member's
// session expires on share.session.timeout.ms, and a new load restores
// the epochs and assignments.
func TestShareGroupOnShard(t *testing.T) {
	h := newShardHost()
	defer h.close()
	s := h.load(t, 1)
	g := s.Group("sg", true)
	g.Mu.Lock()
	if g.ShareGroup() != nil {
		t.Fatal("a new group is a share group")
	}
	g.Share = NewShareGroup()
	r := shareJoin(g.Share, "a", h.Topics(), "t")
	shareJoin(g.Share, "b", h.Topics(), "t")
	g.TouchShareMember(g.Share.Members["a"])
	g.TouchShareMember(g.Share.Members["b"])
	g.Mu.Unlock()
	if r.Code != 0 {
		t.Fatal(kerr.ErrorForCode(r.Code))
	}
	if code := g.PersistShare(); code != 0 || g.ShareMeta == nil {
		t.Fatalf("persist: %v", kerr.ErrorForCode(code))
	}
	var rec ShareGroupRecord
	if err := json.Unmarshal(g.ShareMeta, &rec); err != nil || rec.Epoch != 2 || len(rec.Members) != 2 {
		t.Fatalf("record %+v %v", rec, err)
	}

	// a heartbeats at 30s; at 45s b's session is over, a's is not.
	h.clk.Advance(30 * time.Second)
	g.Mu.Lock()
	g.Share.Heartbeat(ShareHeartbeatRequest{Group: "sg", MemberID: "a", MemberEpoch: 1}, h.Topics())
	g.TouchShareMember(g.Share.Members["a"])
	g.Mu.Unlock()
	h.clk.Advance(15 * time.Second)
	waitFor(t, func() bool {
		g.Mu.Lock()
		defer g.Mu.Unlock()
		_, ok := g.Share.Members["b"]
		return !ok && string(g.Share.Persisted) != "" && g.Share.Epoch == 3
	})
	waitFor(t, func() bool {
		var r ShareGroupRecord
		g.Mu.Lock()
		defer g.Mu.Unlock()
		return json.Unmarshal(g.ShareMeta, &r) == nil && r.Epoch == 3
	})

	// A new load (another leader epoch) restores the group from its record.
	h.log.Epoch++
	s2 := h.load(t, 1)
	g2 := s2.Group("sg", false)
	if g2 == nil || g2 == g {
		t.Fatal("the share group was not reloaded")
	}
	g2.Mu.Lock()
	sg := g2.ShareGroup()
	g2.Mu.Unlock()
	if sg == nil || sg.Epoch != 3 || len(sg.Members) != 1 || sg.Members["a"] == nil || !slices.Equal(sparts(sg.Target["a"], "t"), []int32{0, 1}) {
		t.Fatalf("restored %+v", sg)
	}
	// a carries on at its epoch with the new coordinator.
	g2.Mu.Lock()
	r = sg.Heartbeat(ShareHeartbeatRequest{Group: "sg", MemberID: "a", MemberEpoch: sg.Members["a"].Epoch}, h.Topics())
	g2.Mu.Unlock()
	if r.Code != 0 || r.MemberEpoch != 3 {
		t.Fatalf("after the load: %+v", r)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, 5*time.Second, "the share group's state", cond)
}
