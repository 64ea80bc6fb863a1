package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// expiryMember is a classic consumer group member driven by raw requests.
type expiryMember struct {
	group, id string
	gen       int32
}

func joinExpiryGroup(t *testing.T, cl *kgo.Client, group, topic string) expiryMember {
	t.Helper()
	ctx := testContext(t)
	md := kmsg.NewConsumerMemberMetadata()
	md.Topics = []string{topic}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = group, "consumer", 1_800_000, 60_000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: md.AppendTo(nil)}}
	jr, err := join.RequestWith(ctx, cl)
	if err == nil && jr.ErrorCode == 79 { // MEMBER_ID_REQUIRED
		join.MemberID = jr.MemberID
		jr, err = join.RequestWith(ctx, cl)
	}
	if err != nil || jr.ErrorCode != 0 {
		t.Fatalf("join %s: %v %+v", group, err, jr)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation, sync.ProtocolType, sync.Protocol = group, jr.MemberID, jr.Generation, &join.ProtocolType, jr.Protocol
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: []int32{0}}}
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: a.AppendTo(nil)}}
	if sr, err := sync.RequestWith(ctx, cl); err != nil || sr.ErrorCode != 0 {
		t.Fatalf("sync %s: %v %+v", group, err, sr)
	}
	return expiryMember{group, jr.MemberID, jr.Generation}
}

func (m expiryMember) commit(t *testing.T, c *Cluster, cl *kgo.Client, topic string, offset int64) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = m.group, m.gen, m.id
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: offset, LeaderEpoch: -1}}}}
	if r, err := withTopicIDs(c, req).RequestWith(testContext(t), cl); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit %s: %v %+v", m.group, err, r)
	}
}

func (m expiryMember) heartbeat(t *testing.T, cl *kgo.Client) {
	t.Helper()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.Generation, req.MemberID = m.group, m.gen, m.id
	if r, err := req.RequestWith(testContext(t), cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("heartbeat %s: %v %+v", m.group, err, r)
	}
}

// TestOffsetExpiryOnManualClock: with offsets.retention.minutes at an
// hour, checked every 10 minutes, a group that committed and left keeps
// its offsets for an hour after it became Empty and then loses them
// (OffsetFetch answers -1) and is gone from ListGroups; a simple commit
// (generation -1) expires an hour after the commit; a group whose member
// keeps heartbeating keeps the offsets of the topic it subscribes to.
func TestOffsetExpiryOnManualClock(t *testing.T) {
	const retention, interval = time.Hour, 10 * time.Minute
	c := manualCluster(t, Config{OffsetsRetention: retention, OffsetsRetentionCheckInterval: interval})
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	adm := kadm.NewClient(cl)

	rcs, err := adm.DescribeBrokerConfigs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfgs := map[string]string{}
	for _, rc := range rcs {
		for _, cf := range rc.Configs {
			cfgs[cf.Key] = cf.MaybeValue()
		}
	}
	if cfgs["offsets.retention.minutes"] != "60" || cfgs["offsets.retention.check.interval.ms"] != "600000" {
		t.Errorf("DescribeConfigs: offsets.retention.minutes %q, offsets.retention.check.interval.ms %q",
			cfgs["offsets.retention.minutes"], cfgs["offsets.retention.check.interval.ms"])
	}

	left := joinExpiryGroup(t, cl, "left", "t")
	left.commit(t, c, cl, "t", 42)
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group, leave.Members = "left", []kmsg.LeaveGroupRequestMember{{MemberID: left.id}}
	if r, err := leave.RequestWith(ctx, cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("leave: %v %+v", err, r)
	}
	active := joinExpiryGroup(t, cl, "active", "t")
	active.commit(t, c, cl, "t", 7)
	simple := kadm.Offsets{}
	simple.Add(kadm.Offset{Topic: "t", Partition: 0, At: 3, LeaderEpoch: -1})
	if r, err := adm.CommitOffsets(ctx, "simple", simple); err != nil || r.Error() != nil {
		t.Fatalf("simple commit: %v %v", err, r.Error())
	}
	waitFor(t, 10*time.Second, "left Empty", func() bool {
		l, err := adm.ListGroups(ctx)
		return err == nil && l["left"].State == "Empty"
	})

	committed := func(group string) int64 {
		t.Helper()
		r, err := adm.FetchOffsetsForTopics(ctx, group, "t")
		if err != nil {
			t.Fatal(err)
		}
		o, ok := r.Lookup("t", 0)
		if !ok || o.Err != nil {
			t.Fatalf("fetch %s: %+v %v", group, o, ok)
		}
		return o.At
	}
	listed := func() kadm.ListedGroups {
		t.Helper()
		l, err := adm.ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	advance := func(d time.Duration) { // in steps the active member heartbeats through
		t.Helper()
		for d > 0 {
			step := min(d, interval)
			if err := c.AdvanceClock(step); err != nil {
				t.Fatal(err)
			}
			active.heartbeat(t, cl)
			d -= step
		}
	}

	advance(retention - time.Minute)
	for group, want := range map[string]int64{"left": 42, "active": 7, "simple": 3} {
		if got := committed(group); got != want {
			t.Fatalf("a minute before retention: %s has %d, want %d", group, got, want)
		}
	}
	if l := listed(); len(l) != 3 {
		t.Fatalf("a minute before retention: groups %v", l.Groups())
	}

	advance(interval + time.Minute) // the round at retention has run
	waitFor(t, 10*time.Second, "left and simple expired", func() bool {
		l := listed()
		_, hasLeft := l["left"]
		_, hasSimple := l["simple"]
		return !hasLeft && !hasSimple
	})
	for group, want := range map[string]int64{"left": -1, "simple": -1, "active": 7} {
		if got := committed(group); got != want {
			t.Errorf("after retention: %s has %d, want %d", group, got, want)
		}
	}
	if l := listed(); l["active"].State != "Stable" {
		t.Errorf("after retention: groups %+v", l)
	}
	expired := map[string]string{}
	for _, e := range c.Events(0) {
		if e.Type == EventOffsetsExpired {
			expired[e.Group] = e.Detail + "/" + e.Reason
		}
	}
	if expired["left"] != "t-0/group_deleted" || expired["simple"] != "t-0/group_deleted" || len(expired) != 2 {
		t.Errorf("offsets_expired events: %v", expired)
	}
}
