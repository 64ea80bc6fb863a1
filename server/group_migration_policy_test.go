package server

import (
	"strings"

	"github.com/fakekafka/fakekafka/clock"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// group.consumer.migration.policy through raw requests: disabled refuses
// the upgrade (GROUP_ID_NOT_FOUND) and every classic join to a consumer
// group (INCONSISTENT_GROUP_PROTOCOL); upgrade lets a group upgrade but
// not downgrade; downgrade refuses upgrades; a bad value is refused.
func TestGroupMigrationPolicy(t *testing.T) {
	if _, err := NewCluster(Config{ConsumerGroupMigrationPolicy: "sideways"}); err == nil {
		t.Fatal("a cluster started with policy sideways")
	}
	heartbeat := func(group, member string, epoch int32) *kmsg.ConsumerGroupHeartbeatRequest {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = group, member, epoch
		req.RebalanceTimeoutMillis = -1
		if epoch == 0 {
			req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 30000, []string{"t"}
		}
		if epoch >= 0 {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		return req
	}
	for _, tc := range []struct {
		policy                   string
		upgrade, join, downgrade bool
	}{
		{"disabled", false, false, false},
		{"upgrade", true, true, false},
		{"downgrade", false, true, true},
		{"BIDIRECTIONAL", true, true, true},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			c := NewTestCluster(t, Config{ConsumerGroupMigrationPolicy: tc.policy, GroupMinSessionTimeout: 100 * time.Millisecond})
			if err := c.CreateTopic("t", 2, 3, nil); err != nil {
				t.Fatal(err)
			}
			ctx := testContext(t)
			cl := newClient(t, c)
			dc := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeBroker, "1", []string{"group.consumer.migration.policy"}
			dc.Resources = append(dc.Resources, rr)
			if dresp, err := dc.RequestWith(ctx, cl); err != nil || len(dresp.Resources) != 1 || len(dresp.Resources[0].Configs) != 1 ||
				*dresp.Resources[0].Configs[0].Value != strings.ToLower(tc.policy) || !dresp.Resources[0].Configs[0].ReadOnly {
				t.Fatalf("DescribeConfigs: %v %+v", err, dresp)
			}

			// A classic group with a member; a KIP-848 member joins.
			classic := mustJoin(t, ctx, cl, rawJoinRequest("up", "", 10*time.Second, "range", "t"))
			sync := kmsg.NewPtrSyncGroupRequest()
			sync.Group, sync.MemberID, sync.Generation = "up", classic.MemberID, classic.Generation
			sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: classic.MemberID, MemberAssignment: consumerAssignment("t", 0, 1)}}
			if resp, err := sync.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
				t.Fatalf("sync: %v %v", err, resp)
			}
			resp, err := heartbeat("up", "kip848-member-000000001", 0).RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			if tc.upgrade {
				wantCode(t, "upgrade", resp.ErrorCode, nil)
			} else {
				wantCode(t, "upgrade", resp.ErrorCode, kerr.GroupIDNotFound)
				if gs, _ := c.Group("up"); gs.Type != "classic" || len(gs.Members) != 1 {
					t.Fatalf("refused upgrade left %+v", gs)
				}
			}

			// A consumer group; a classic member joins.
			if resp, err := heartbeat("mixed", "kip848-member-000000002", 0).RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
				t.Fatalf("consumer group: %v %v", err, resp)
			}
			jr := rawJoinRequest("mixed", "", 10*time.Second, "range", "t")
			jresp, err := jr.RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.join {
				wantCode(t, "classic join", jresp.ErrorCode, kerr.InconsistentGroupProtocol)
				return
			}
			wantCode(t, "classic join", jresp.ErrorCode, kerr.MemberIDRequired)
			jr.MemberID = jresp.MemberID
			if jresp, err = jr.RequestWith(ctx, cl); err != nil || jresp.ErrorCode != 0 || jresp.LeaderID != "" {
				t.Fatalf("classic join with its id: %v %+v", err, jresp)
			}

			// The KIP-848 member leaves: the group downgrades or stays.
			if resp, err := heartbeat("mixed", "kip848-member-000000002", -1).RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
				t.Fatalf("leave: %v %v", err, resp)
			}
			gs, _ := c.Group("mixed")
			if want := map[bool]string{true: "classic", false: "consumer"}[tc.downgrade]; gs.Type != want || len(gs.Members) != 1 {
				t.Fatalf("after the last KIP-848 member left: %s with %d members, want %s", gs.Type, len(gs.Members), want)
			}
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.MemberID, hb.Generation = "mixed", jresp.MemberID, jresp.Generation
			hresp, err := hb.RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			// Either way the classic member must rejoin: the group
			// rebalances (downgraded) or its epoch moved (still consumer).
			wantCode(t, "classic heartbeat", hresp.ErrorCode, kerr.RebalanceInProgress)
		})
	}
}

// A classic group stays classic when the joining KIP-848 member asks for
// an assignor the broker lacks (UNSUPPORTED_ASSIGNOR, checked first) or
// when an assignment carries a custom assignor's user data, which the
// consumer group could not keep (GROUP_ID_NOT_FOUND, as Kafka 4.4).
func TestGroupUpgradeRefusals(t *testing.T) {
	c := NewTestCluster(t, Config{GroupMinSessionTimeout: 100 * time.Millisecond})
	if err := c.CreateTopic("t", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	classic := mustJoin(t, ctx, cl, rawJoinRequest("custom", "", 10*time.Second, "range", "t"))
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	a.UserData = []byte("sticky state")
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "custom", classic.MemberID, classic.Generation
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: classic.MemberID, MemberAssignment: a.AppendTo(nil)}}
	if resp, err := sync.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("sync: %v %v", err, resp)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis = "custom", "kip848-member-000000003", 30000
	hb.SubscribedTopicNames, hb.Topics, hb.ServerAssignor = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}, kmsg.StringPtr("nope")
	resp, err := hb.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "unknown assignor", resp.ErrorCode, kerr.UnsupportedAssignor)
	hb.ServerAssignor = nil
	if resp, err = hb.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "custom assignor's user data", resp.ErrorCode, kerr.GroupIDNotFound)
	if resp.ErrorMessage == nil || *resp.ErrorMessage != "Cannot upgrade classic group custom to consumer group because an unsupported custom assignor is in use. Please refer to the documentation or switch to a default assignor before re-attempting the upgrade." {
		t.Fatalf("message %v", resp.ErrorMessage)
	}
	if gs, _ := c.Group("custom"); gs.Type != "classic" || gs.State != "Stable" || len(gs.Members) != 1 {
		t.Fatalf("after the refusals: %+v", gs)
	}
	h := kmsg.NewPtrHeartbeatRequest()
	h.Group, h.MemberID, h.Generation = "custom", classic.MemberID, classic.Generation
	if hr, err := h.RequestWith(ctx, cl); err != nil || hr.ErrorCode != 0 {
		t.Fatalf("the classic member after the refusals: %v %v", err, hr)
	}
}

// On the manual clock: the last KIP-848 member of a mixed group goes
// silent; at its session timeout (group.consumer.session.timeout.ms, 45 s)
// the group downgrades, and the classic member, which kept heartbeating,
// is told to rejoin the classic group.
func TestGroupDowngradeOnSessionTimeout(t *testing.T) {
	c := NewTestCluster(t, Config{Clock: clock.NewManual(time.Unix(1_000_000, 0))})
	if err := c.CreateTopic("t", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis = "quiet", "kip848-member-000000004", 30000
	hb.SubscribedTopicNames, hb.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if resp, err := hb.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("join: %v %v", err, resp)
	}
	join := rawJoinRequest("quiet", "", 10*time.Second, "range", "t")
	jr := mustJoin(t, ctx, cl, join)
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "quiet", jr.MemberID, jr.Generation
	if resp, err := sync.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("sync: %v %v", err, resp) // else the member is fenced after its rebalance timeout
	}
	beat := func() int16 {
		h := kmsg.NewPtrHeartbeatRequest()
		h.Group, h.MemberID, h.Generation = "quiet", jr.MemberID, jr.Generation
		resp, err := h.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ErrorCode
	}
	for range 8 { // 40 s: the classic member heartbeats, the KIP-848 one is silent
		if err := c.AdvanceClock(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		beat()
		if gs, _ := c.Group("quiet"); gs.Type != "consumer" || len(gs.Members) != 2 {
			t.Fatalf("before the session timeout: %s with %d members", gs.Type, len(gs.Members))
		}
	}
	if err := c.AdvanceClock(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the downgrade", func() bool {
		gs, _ := c.Group("quiet")
		return gs.Type == "classic" && len(gs.Members) == 1 && gs.Members[0].MemberID == jr.MemberID
	})
	wantCode(t, "the classic member's heartbeat", beat(), kerr.RebalanceInProgress)
	evs := c.Events(0)
	expired, downgraded := false, false
	for _, e := range evs {
		expired = expired || e.Type == EventGroupMemberExpired && e.Member == "kip848-member-000000004"
		downgraded = downgraded || e.Type == EventGroupDowngraded && e.Group == "quiet"
	}
	if !expired || !downgraded {
		t.Fatalf("events: expired %v downgraded %v", expired, downgraded)
	}
}
