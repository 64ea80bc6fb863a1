package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func classicProtocols(topics ...string) []Protocol {
	md := kmsg.ConsumerMemberMetadata{Version: 1, Topics: topics}
	return []Protocol{{Name: "range", Metadata: md.AppendTo(nil)}}
}

// A classic group upgrades when a consumer-protocol member joins: the
// classic member carries over at epoch = generation with its assignment;
// the new member bumps the epoch and gets only what the classic member
// released after rejoining; when it leaves, the group downgrades at
// generation = group epoch and rebalances. Each step's records reload
// into the same group type on a new coordinator.
func TestShardUpgradeAndDowngrade(t *testing.T) {
	h := newShardHost()
	defer h.close()
	h.policy = MigrationBidirectional
	s := h.load(t, 1)
	g := s.Group("g", true)
	a := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: []int32{0, 1}}}}
	md := Meta{ProtocolType: "consumer", Protocol: "range", Generation: 4, Leader: "c1",
		Members: []MemberMeta{{ID: "c1", ClientID: "c", ClientHost: "/h", SessionTimeoutMs: 10_000, RebalanceTimeoutMs: 30_000,
			Subscription: classicProtocols("t")[0].Metadata, Assignment: a.AppendTo(nil)}}}
	if code := g.StoreMeta(MetaSnapshot{Seq: 1, Meta: md}); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}

	// Policy disabled: GROUP_ID_NOT_FOUND.
	g.WriteMu.Lock()
	g.Mu.Lock()
	h.policy = MigrationDisabled
	if code, msg := g.Upgrade(); code != kerr.GroupIDNotFound.Code || msg != "Cannot upgrade classic group g to consumer group because online upgrade is disabled." {
		t.Fatalf("disabled: %v %q", kerr.ErrorForCode(code), msg)
	}
	h.policy = MigrationBidirectional
	if code, _ := g.Upgrade(); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	cg := g.Consumer
	c1 := cg.Members["c1"]
	if cg.Epoch != 4 || cg.AssignmentEpoch != 4 || c1.Epoch != 4 || c1.Classic == nil || !c1.Assigned.Equal(parts(0, 1)) || g.HasClassicMembers() {
		t.Fatalf("upgraded: epoch %d/%d member %+v", cg.Epoch, cg.AssignmentEpoch, c1)
	}
	res := cg.Heartbeat(join("k1", "t"), h.Topics())
	// New member: epoch 5 (join), 6 (subscription); it waits for
	// partition 1 while c1 still holds it.
	if res.Code != 0 || res.MemberEpoch != 6 || len(res.Assignment) != 0 || !cg.Target["k1"].Equal(parts(1)) {
		t.Fatalf("k1 joins: %+v target %v", res, cg.Target)
	}
	g.TouchConsumerMember(res.Member)
	g.Mu.Unlock()
	if code := g.PersistConsumer(); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	g.WriteMu.Unlock()
	if g.MetaRecord != nil || g.ConsumerMeta == nil {
		t.Fatal("the upgrade did not write the classic tombstone and the consumer record")
	}

	// The classic member learns to rejoin; it rejoins owning nothing
	// (eager) and gets partition 0 at epoch 6; k1 then gets partition 1.
	g.Mu.Lock()
	if _, code := cg.ClassicHeartbeat("c1", nil, 4); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("classic heartbeat: %v", kerr.ErrorForCode(code))
	}
	if _, code := cg.ClassicHeartbeat("c1", nil, 3); code != kerr.IllegalGeneration.Code {
		t.Fatalf("old generation: %v", kerr.ErrorForCode(code))
	}
	jr := cg.ClassicJoin(JoinRequest{Version: 9, MemberID: "c1", ClientID: "c", Host: "/h", Session: 10 * time.Second,
		Rebalance: 30 * time.Second, ProtocolType: "consumer", Protocols: classicProtocols("t")}, h.Topics())
	if jr.Code != 0 || jr.Generation != 6 || jr.Protocol != "range" || jr.Leader != "" {
		t.Fatalf("classic rejoin: %+v", jr)
	}
	pt, pn := "consumer", "range"
	_, raw, code := cg.ClassicSync(SyncRequest{MemberID: "c1", Generation: 6, ProtocolType: &pt, Protocol: &pn}, h.Topics())
	if code != 0 || DecodeAssignment(raw)["t"][0] != 0 || len(DecodeAssignment(raw)["t"]) != 1 {
		t.Fatalf("classic sync: %v %v", kerr.ErrorForCode(code), DecodeAssignment(raw))
	}
	res = cg.Heartbeat(beat("k1", 6, Assignment{}), h.Topics())
	if res.Code != 0 || !res.Assignment.Equal(parts(1)) {
		t.Fatalf("k1 after the release: %+v", res)
	}
	// A second JoinGroup with another protocol is refused.
	bad := cg.ClassicJoin(JoinRequest{Version: 9, MemberID: "x", ProtocolType: "consumer", Protocols: []Protocol{{Name: "roundrobin"}}}, h.Topics())
	if bad.Code != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("other protocol: %v", kerr.ErrorForCode(bad.Code))
	}

	// k1 leaves: the group downgrades at generation 6 and rebalances.
	leave := beat("k1", 6, nil)
	leave.MemberEpoch, leave.Downgrade = -1, true
	res = cg.Heartbeat(leave, h.Topics())
	if !res.Downgrade {
		t.Fatalf("leave: %+v", res)
	}
	g.Downgrade(res.Member, res.Events[0])
	if g.Consumer != nil || g.Generation != 6 || g.State != PreparingRebalance || len(g.Members) != 1 || g.Members["c1"] == nil {
		t.Fatalf("downgraded: gen %d state %s members %v", g.Generation, g.State, g.Members)
	}
	if got := DecodeAssignment(g.Members["c1"].Assignment)["t"]; len(got) != 1 || got[0] != 0 {
		t.Fatalf("classic assignment after the downgrade %v", got)
	}
	if code := g.Heartbeat("c1", nil, 6); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after the downgrade: %v", kerr.ErrorForCode(code))
	}
	g.Mu.Unlock()
	g.WriteMu.Lock()
	if code := g.PersistConsumer(); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	g.WriteMu.Unlock()
	if g.ConsumerMeta != nil || g.MetaRecord == nil {
		t.Fatal("the downgrade did not write the consumer tombstone and the classic metadata")
	}

	// A new coordinator restores a classic group at generation 6.
	h.log.Elect(2)
	g2 := h.load(t, 2).Group("g", false)
	g2.Mu.Lock()
	defer g2.Mu.Unlock()
	if g2.ConsumerProtocol() != nil || !g2.HasClassicMembers() || g2.Generation != 6 {
		t.Fatalf("reloaded: consumer %v classic gen %d", g2.ConsumerProtocol(), g2.Generation)
	}
}

// mixedGroup is a consumer group on h's shard with a consumer-protocol
// member k1 (static when inst is set) and a classic member c1 joined
// through ClassicJoin, both settled on "t" (2 partitions); callers hold
// nothing.
func mixedGroup(t *testing.T, h *shardHost, inst *string) *Group {
	t.Helper()
	g := h.load(t, 1).Group("g", true)
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	g.Ready()
	g.Consumer = NewConsumerGroup()
	cg := g.Consumer
	k := join("k1", "t")
	k.InstanceID = inst
	res := cg.Heartbeat(k, h.Topics())
	g.TouchConsumerMember(res.Member)
	jr := cg.ClassicJoin(JoinRequest{Version: 9, MemberID: "c1", ClientID: "c", Host: "/h", Session: 30 * time.Second,
		Rebalance: 20 * time.Second, ProtocolType: "consumer", Protocols: classicProtocols("t")}, h.Topics())
	if jr.Code != 0 {
		t.Fatal(kerr.ErrorForCode(jr.Code))
	}
	g.ClassicJoined(jr.Member)
	beatK := beat("k1", res.MemberEpoch, parts(0, 1))
	beatK.InstanceID = inst
	res = cg.Heartbeat(beatK, h.Topics())
	beatK.MemberEpoch, beatK.Owned = res.MemberEpoch, res.Assignment
	cg.Heartbeat(beatK, h.Topics())
	jr = cg.ClassicJoin(JoinRequest{Version: 9, MemberID: "c1", ClientID: "c", Host: "/h", Session: 30 * time.Second,
		Rebalance: 20 * time.Second, ProtocolType: "consumer", Protocols: classicProtocols("t")}, h.Topics())
	pt, pn := "consumer", "range"
	m, _, code := cg.ClassicSync(SyncRequest{MemberID: "c1", Generation: jr.Generation, ProtocolType: &pt, Protocol: &pn}, h.Topics())
	if code != 0 || !cg.Settled() {
		t.Fatalf("mixed group: sync %v, settled %v, target %v", kerr.ErrorForCode(code), cg.Settled(), cg.Target)
	}
	g.StopClassicRejoin(m)
	g.Mu.Unlock()
	if code := g.PersistConsumer(); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	return g
}

// A classic member that does not rejoin within its rebalance timeout
// after REBALANCE_IN_PROGRESS is fenced on the clock; a LeaveGroup names
// members with per-member errors; a classic static member replacing the
// last consumer-protocol static member downgrades the group without a
// rebalance.
func TestShardMixedGroupTimersAndStatics(t *testing.T) {
	t.Run("rejoin deadline", func(t *testing.T) {
		h := newShardHost()
		defer h.close()
		h.policy = MigrationBidirectional
		g := mixedGroup(t, h, nil)
		g.Mu.Lock()
		cg := g.Consumer
		epoch := cg.Epoch
		cg.Heartbeat(join("k2", "t"), h.Topics()) // the group epoch moves: c1 must rejoin
		m, code := cg.ClassicHeartbeat("c1", nil, cg.Members["c1"].Epoch)
		if code != kerr.RebalanceInProgress.Code {
			t.Fatalf("classic heartbeat: %v", kerr.ErrorForCode(code))
		}
		g.ClassicMustRejoin(m)
		g.Mu.Unlock()
		h.clk.Advance(20*time.Second - time.Millisecond)
		g.Mu.Lock()
		if cg.Members["c1"] == nil {
			t.Fatal("fenced before its rebalance timeout")
		}
		g.Mu.Unlock()
		h.clk.Advance(time.Millisecond)
		h.close() // waits for the write the fencing started
		g.Mu.Lock()
		defer g.Mu.Unlock()
		if cg.Members["c1"] != nil || cg.Epoch != epoch+3 {
			t.Fatalf("after the deadline: members %v epoch %d (was %d)", cg.Members, cg.Epoch, epoch)
		}
		fenced := false
		for _, e := range h.events {
			fenced = fenced || e.Type == MemberFenced && e.Member == "c1"
		}
		if !fenced {
			t.Fatalf("events %+v", h.events)
		}
	})

	t.Run("leave", func(t *testing.T) {
		h := newShardHost()
		defer h.close()
		g := mixedGroup(t, h, nil)
		g.Mu.Lock()
		defer g.Mu.Unlock()
		cg := g.Consumer
		epoch := cg.Epoch
		inst := "nobody"
		codes, _ := cg.ClassicLeave([]LeaveMember{{MemberID: "k1"}, {MemberID: "zz"}, {InstanceID: &inst}, {MemberID: "c1"}}, h.Topics())
		want := []int16{kerr.UnknownMemberID.Code, kerr.UnknownMemberID.Code, kerr.UnknownMemberID.Code, 0}
		if len(codes) != 4 || codes[0] != want[0] || codes[1] != want[1] || codes[2] != want[2] || codes[3] != 0 {
			t.Fatalf("codes %v, want %v", codes, want)
		}
		if cg.Members["c1"] != nil || cg.Epoch != epoch+1 || !cg.Target["k1"].Equal(parts(0, 1)) {
			t.Fatalf("after the leave: epoch %d (was %d) target %v", cg.Epoch, epoch, cg.Target)
		}
	})

	t.Run("classic static members", func(t *testing.T) {
		h := newShardHost()
		defer h.close()
		g := mixedGroup(t, h, nil)
		g.Mu.Lock()
		defer g.Mu.Unlock()
		cg := g.Consumer
		inst := "cs"
		sj := JoinRequest{Version: 9, InstanceID: &inst, ClientID: "c", Host: "/h", Session: 30 * time.Second,
			Rebalance: 20 * time.Second, ProtocolType: "consumer", Protocols: classicProtocols("t")}
		first := cg.ClassicJoin(sj, h.Topics())
		epoch := cg.Epoch
		second := cg.ClassicJoin(sj, h.Topics()) // a classic static member replaces its previous incarnation at once
		if first.Code != 0 || second.Code != 0 || second.Replaced == nil || second.Replaced.ID != first.MemberID || cg.Epoch != epoch {
			t.Fatalf("static joins: %+v then %+v, epoch %d (was %d)", first.JoinResult, second.JoinResult, cg.Epoch, epoch)
		}
		if _, code := cg.ClassicHeartbeat(first.MemberID, &inst, second.Generation); code != kerr.FencedInstanceID.Code {
			t.Fatalf("the old incarnation's heartbeat: %v", kerr.ErrorForCode(code))
		}
		other := "nobody"
		if _, code := cg.ClassicHeartbeat(second.MemberID, &other, second.Generation); code != kerr.UnknownMemberID.Code {
			t.Fatalf("an unknown instance: %v", kerr.ErrorForCode(code))
		}
		pt := "consumer"
		if _, _, code := cg.ClassicSync(SyncRequest{MemberID: first.MemberID, InstanceID: &inst, Generation: second.Generation, ProtocolType: &pt}, h.Topics()); code != kerr.FencedInstanceID.Code {
			t.Fatalf("the old incarnation's sync: %v", kerr.ErrorForCode(code))
		}
		rejoin := sj
		rejoin.MemberID = first.MemberID
		if jr := cg.ClassicJoin(rejoin, h.Topics()); jr.Code != kerr.FencedInstanceID.Code {
			t.Fatalf("the old incarnation's join: %v", kerr.ErrorForCode(jr.Code))
		}
		codes, _ := cg.ClassicLeave([]LeaveMember{{MemberID: first.MemberID, InstanceID: &inst}, {InstanceID: &inst}}, h.Topics())
		if codes[0] != kerr.FencedInstanceID.Code || codes[1] != 0 || cg.StaticMember(inst) != nil {
			t.Fatalf("leave codes %v", codes)
		}
	})

	t.Run("classic static replaces the last consumer-protocol member", func(t *testing.T) {
		h := newShardHost()
		defer h.close()
		h.policy = MigrationBidirectional
		inst := "s1"
		g := mixedGroup(t, h, &inst)
		g.WriteMu.Lock()
		g.Mu.Lock()
		cg := g.Consumer
		epoch, target := cg.Epoch, cg.Target["k1"].Clone()
		jr := cg.ClassicJoin(JoinRequest{Version: 9, InstanceID: &inst, ClientID: "c", Host: "/h", Session: 10 * time.Second,
			Rebalance: 20 * time.Second, ProtocolType: "consumer", Protocols: classicProtocols("t"), Downgrade: true}, h.Topics())
		if jr.Code != 0 || !jr.Downgrade || jr.Replaced == nil || jr.Replaced.ID != "k1" {
			t.Fatalf("static join: %+v", jr)
		}
		res := g.DowngradeJoined(jr.Member)
		if g.Consumer != nil || g.State != Stable || g.Generation != epoch || res.Generation != epoch || len(g.Members) != 2 {
			t.Fatalf("downgraded: state %s generation %d (epoch %d) answer %+v", g.State, g.Generation, epoch, res)
		}
		got := DecodeAssignment(g.Members[jr.MemberID].Assignment)["t"]
		if len(got) != len(target[topicID("t")]) {
			t.Fatalf("the new incarnation holds %v, the old one's target was %v", got, target)
		}
		if code := g.Heartbeat(jr.MemberID, &inst, epoch); code != 0 {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(code))
		}
		if code := g.Heartbeat("k1", &inst, epoch); code != kerr.FencedInstanceID.Code {
			t.Fatalf("the replaced member: %v", kerr.ErrorForCode(code))
		}
		g.Mu.Unlock()
		if code := g.PersistConsumer(); code != 0 {
			t.Fatal(kerr.ErrorForCode(code))
		}
		g.WriteMu.Unlock()
		if g.ConsumerMeta != nil || g.MetaRecord == nil {
			t.Fatal("the downgrade was not written")
		}
	})
}

// A static member that left with epoch -2 keeps its assignment only for
// its session timeout: then it is fenced, the group epoch moves and its
// partitions go to the others.
func TestShardStaticMemberLeftExpires(t *testing.T) {
	h := newShardHost()
	defer h.close()
	g := h.load(t, 1).Group("g", true)
	g.Mu.Lock()
	g.Ready()
	g.Consumer = NewConsumerGroup()
	cg := g.Consumer
	inst := "s1"
	req := join("s", "t")
	req.InstanceID = &inst
	res := cg.Heartbeat(req, h.Topics())
	g.TouchConsumerMember(res.Member)
	check(t, "d joins", cg.Heartbeat(join("d", "t"), h.Topics()), 5, Assignment{}, MemberJoined, RebalanceStarted)
	g.TouchConsumerMember(cg.Members["d"])
	leave := beat("s", res.MemberEpoch, nil)
	leave.MemberEpoch, leave.InstanceID = LeftStatic, &inst
	if res := cg.Heartbeat(leave, h.Topics()); res.Code != 0 || res.MemberEpoch != -2 {
		t.Fatalf("leave -2: %+v", res)
	}
	epoch := cg.Epoch
	g.Mu.Unlock()

	h.clk.Advance(sessionTimeout / 2)
	g.Mu.Lock()
	g.TouchConsumerMember(cg.Members["d"]) // d keeps heartbeating
	if s := cg.Members["s"]; s == nil || s.Epoch != -2 || !s.Assigned.Equal(parts(0, 1)) || cg.Epoch != epoch {
		t.Fatalf("within the session: %+v epoch %d", s, cg.Epoch)
	}
	g.Mu.Unlock()
	h.clk.Advance(sessionTimeout / 2)
	h.close() // waits for the write the expiry started
	g.Mu.Lock()
	defer g.Mu.Unlock()
	if cg.Members["s"] != nil || cg.Epoch != epoch+1 || !cg.Target["d"].Equal(parts(0, 1)) {
		t.Fatalf("after the session: members %v epoch %d (was %d) target %v", cg.Members, cg.Epoch, epoch, cg.Target)
	}
}

// An upgrade whose write fails leaves nothing applied: the group is the
// classic group its last metadata record holds, as a new coordinator
// would restore it.
func TestShardFailedUpgradeWrite(t *testing.T) {
	h := newShardHost()
	defer h.close()
	h.policy = MigrationBidirectional
	g := h.load(t, 1).Group("g", true)
	md := Meta{ProtocolType: "consumer", Protocol: "range", Generation: 2, Leader: "c1",
		Members: []MemberMeta{{ID: "c1", ClientID: "c", ClientHost: "/h", SessionTimeoutMs: 10_000, RebalanceTimeoutMs: 30_000,
			Subscription: classicProtocols("t")[0].Metadata}}}
	if code := g.StoreMeta(MetaSnapshot{Seq: 1, Meta: md}); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	if code, _ := g.Upgrade(); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	g.Consumer.Heartbeat(join("k1", "t"), h.Topics())
	g.Mu.Unlock()
	h.log.Fail = kerr.NotEnoughReplicas.Code
	if code := g.PersistConsumer(); code == 0 {
		t.Fatal("the write did not fail")
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	if g.ConsumerProtocol() != nil || g.Generation != 2 || g.State != Stable || g.Members["c1"] == nil || g.MetaRecord == nil {
		t.Fatalf("after the failed write: consumer %v, classic gen %d state %s members %v", g.Consumer, g.Generation, g.State, g.Members)
	}
}

// A downgrade whose write fails leaves nothing applied either: the
// consumer group comes back from its last record, both members in it.
func TestShardFailedDowngradeWrite(t *testing.T) {
	h := newShardHost()
	defer h.close()
	h.policy = MigrationBidirectional
	g := mixedGroup(t, h, nil)
	g.WriteMu.Lock()
	defer g.WriteMu.Unlock()
	g.Mu.Lock()
	epoch := g.Consumer.Epoch
	leave := beat("k1", g.Consumer.Members["k1"].Epoch, nil)
	leave.MemberEpoch, leave.Downgrade = -1, true
	res := g.Consumer.Heartbeat(leave, h.Topics())
	if !res.Downgrade {
		t.Fatalf("leave: %+v", res)
	}
	g.Downgrade(res.Member, res.Events[0])
	g.Mu.Unlock()
	h.log.Fail = kerr.NotEnoughReplicas.Code
	if code := g.PersistConsumer(); code == 0 {
		t.Fatal("the write did not fail")
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	cg := g.ConsumerProtocol()
	if cg == nil || len(cg.Members) != 2 || cg.Epoch != epoch || cg.Members["c1"].Classic == nil {
		t.Fatalf("after the failed write: %+v", cg)
	}
}
