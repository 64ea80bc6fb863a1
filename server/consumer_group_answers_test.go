package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConsumerGroupAnswersAsKafka: details of KIP-848 answers that the
// reference corpus compared with Kafka 4.4 (compat/reference): a
// heartbeat's interval only on success (0 on an error and on a leave), a
// member's client host as "/ip" and its regex as "" when it has none.
func TestConsumerGroupAnswersAsKafka(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("work", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	ctx := testContext(t)
	heartbeat := func(member string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version = 1
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "answers", member, epoch, -1
		if epoch == 0 {
			req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 60_000, []string{"work"}
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	joined := heartbeat("member-one", 0)
	if joined.ErrorCode != 0 || joined.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("join: %v, interval %d, want NONE and 5000", errorName(joined.ErrorCode), joined.HeartbeatIntervalMillis)
	}
	fenced := heartbeat("member-one", joined.MemberEpoch+10)
	unknown := heartbeat("member-two", 1)
	if fenced.ErrorCode != kerr.FencedMemberEpoch.Code || fenced.HeartbeatIntervalMillis != 0 ||
		unknown.ErrorCode != kerr.UnknownMemberID.Code || unknown.HeartbeatIntervalMillis != 0 {
		t.Fatalf("fenced %v interval %d, unknown %v interval %d: want the errors with interval 0",
			errorName(fenced.ErrorCode), fenced.HeartbeatIntervalMillis, errorName(unknown.ErrorCode), unknown.HeartbeatIntervalMillis)
	}

	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{"answers"}
	desc, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if g := desc.Groups[0]; g.ErrorCode != 0 || len(g.Members) != 1 {
		t.Fatalf("describe: %v, %d members", errorName(g.ErrorCode), len(g.Members))
	} else if m := g.Members[0]; m.ClientHost != "/127.0.0.1" || m.SubscribedTopicRegex == nil || *m.SubscribedTopicRegex != "" {
		t.Fatalf("member client host %q, regex %v: want /127.0.0.1 and \"\"", m.ClientHost, m.SubscribedTopicRegex)
	}

	left := heartbeat("member-one", -1)
	if left.ErrorCode != 0 || left.MemberEpoch != -1 || left.HeartbeatIntervalMillis != 0 {
		t.Fatalf("leave: %v epoch %d interval %d, want NONE, -1 and 0", errorName(left.ErrorCode), left.MemberEpoch, left.HeartbeatIntervalMillis)
	}
}
