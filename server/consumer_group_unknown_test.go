package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// A ConsumerGroupHeartbeat with a non-zero member epoch does not create a
// group: to a group that does not exist Kafka 4.4 answers
// GROUP_ID_NOT_FOUND ("Consumer group %s not found."), and to a group that
// exists only by its committed offsets (a classic group to Kafka)
// GROUP_ID_NOT_FOUND ("Group %s is not a consumer group.").
func TestConsumerGroupHeartbeatUnknownGroup(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	hb := func(group string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, "AAAAAAAAAAAAAAAAAAAAAA", epoch, -1
		resp, err := req.RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	msg := func(r *kmsg.ConsumerGroupHeartbeatResponse) string {
		if r.ErrorMessage == nil {
			return ""
		}
		return *r.ErrorMessage
	}
	r := hb("no-such-group", 5)
	if r.ErrorCode != kerr.GroupIDNotFound.Code || msg(r) != "Consumer group no-such-group not found." {
		t.Fatalf("epoch 5 to no group: %v %q", kerr.ErrorForCode(r.ErrorCode), msg(r))
	}
	if _, ok := c.Group("no-such-group"); ok {
		t.Fatal("the heartbeat created the group")
	}
	// Offsets committed outside any membership (generation -1).
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "offsets-only", -1
	ot := kmsg.NewOffsetCommitRequestTopic()
	ot.Topic = "t"
	op := kmsg.NewOffsetCommitRequestTopicPartition()
	op.Offset = 0
	ot.Partitions = append(ot.Partitions, op)
	oc.Topics = append(oc.Topics, ot)
	ocr, err := oc.RequestWith(testContext(t), newClient(t, c, kgo.MaxVersions(kversion.V3_9_0())))
	if err != nil {
		t.Fatal(err)
	}
	if code := ocr.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("offset commit: %v", kerr.ErrorForCode(code))
	}
	r = hb("offsets-only", 3)
	if r.ErrorCode != kerr.GroupIDNotFound.Code || msg(r) != "Group offsets-only is not a consumer group." {
		t.Fatalf("epoch 3 to an offsets-only group: %v %q", kerr.ErrorForCode(r.ErrorCode), msg(r))
	}
	// A consumer group that exists: an unknown member is UNKNOWN_MEMBER_ID.
	join := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	join.Group, join.MemberID, join.MemberEpoch, join.RebalanceTimeoutMillis = "cg", "BBBBBBBBBBBBBBBBBBBBBB", 0, 5000
	join.SubscribedTopicNames, join.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if jr, err := join.RequestWith(testContext(t), cl); err != nil || jr.ErrorCode != 0 {
		t.Fatalf("join: %v %v", err, jr)
	}
	if r := hb("cg", 1); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member of a consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}
