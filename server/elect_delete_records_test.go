package server

import (
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Leader elections (ElectLeaders) and DeleteRecords through the protocol.

// TestElectPreferredLeader moves leadership away with the Go API and back
// with ElectLeaders.
func TestElectPreferredLeader(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("pref", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ElectLeader("pref", 0, 2, false); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, c))

	rs, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"pref": {0: {}, 1: {}, 7: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rs["pref"][0]; r.Err != nil {
		t.Errorf("partition 0: %v %s", r.Err, r.ErrMessage)
	}
	if r := rs["pref"][1]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Errorf("partition 1, led by its preferred replica: %v, want ELECTION_NOT_NEEDED", r.Err)
	}
	if r := rs["pref"][7]; !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("partition 7: %v, want UNKNOWN_TOPIC_OR_PARTITION", r.Err)
	}
	if ps, _ := c.Partition("pref", 0); ps.Leader != 1 {
		t.Errorf("partition 0 led by %d, want its preferred replica 1", ps.Leader)
	}

	// v0 has no election type: always preferred.
	req := kmsg.NewPtrElectLeadersRequest()
	req.SetVersion(0)
	req.ElectionType = electUnclean
	rt := kmsg.NewElectLeadersRequestTopic()
	rt.Topic, rt.Partitions = "pref", []int32{0}
	req.Topics = append(req.Topics, rt)
	if _, err := c.ElectLeader("pref", 0, 3, false); err != nil {
		t.Fatal(err)
	}
	v0 := callHandler[*kmsg.ElectLeadersResponse](t, c, 1, req)
	if p := v0.Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Errorf("v0 election: error %d", p.ErrorCode)
	}
	if ps, _ := c.Partition("pref", 0); ps.Leader != 1 {
		t.Errorf("partition 0 led by %d after a v0 election, want 1", ps.Leader)
	}

	// Every partition: those needing no election are left out.
	if _, err := c.ElectLeader("pref", 1, 3, false); err != nil {
		t.Fatal(err)
	}
	rs, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || len(rs["pref"]) != 1 || rs["pref"][1].Err != nil {
		t.Errorf("all partitions: %+v, want partition 1 elected and nothing else", rs)
	}
	if ps, _ := c.Partition("pref", 1); ps.Leader != 2 {
		t.Errorf("partition 1 led by %d, want its preferred replica 2", ps.Leader)
	}
}

// TestElectUncleanLeader leaves a partition whose only live replica is
// out of the ISR: a preferred election cannot help, an unclean one elects
// it.
func TestElectUncleanLeader(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("uncl", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("led", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	shrinkISR(t, c, "uncl")
	adm := kadm.NewClient(newClient(t, c))

	// A partition with a leader needs no unclean election.
	rs, err := adm.ElectLeaders(ctx, kadm.ElectLiveReplica, kadm.TopicsSet{"led": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rs["led"][0]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Errorf("led partition: %v, want ELECTION_NOT_NEEDED", r.Err)
	}

	for _, id := range []int32{1, 2} {
		if err := c.StopBroker(id, StopCrash); err != nil {
			t.Fatal(err)
		}
	}
	if ps, _ := c.Partition("uncl", 0); ps.Leader != -1 {
		t.Fatalf("leader %d with only an out-of-ISR replica alive, want none", ps.Leader)
	}
	rs, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"uncl": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rs["uncl"][0]; !errors.Is(r.Err, kerr.PreferredLeaderNotAvailable) {
		t.Errorf("preferred election with broker 1 down: %v, want PREFERRED_LEADER_NOT_AVAILABLE", r.Err)
	}

	rs, err = adm.ElectLeaders(ctx, kadm.ElectLiveReplica, kadm.TopicsSet{"uncl": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rs["uncl"][0]; r.Err != nil || r.How != kadm.ElectLiveReplica {
		t.Fatalf("unclean election: %v %s (how %v)", r.Err, r.ErrMessage, r.How)
	}
	ps, _ := c.Partition("uncl", 0)
	if ps.Leader != 3 || !slices.Equal(ps.ISR, []int32{3}) {
		t.Errorf("after unclean election: leader %d ISR %v, want 3 and [3]", ps.Leader, ps.ISR)
	}
}

func TestDeleteRecords(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("dr", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("compacted", 1, 3, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	for i := range 10 { // one batch each, so the start can land on any offset
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "dr", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)

	del := func(topic string, offset int64) kadm.DeleteRecordsResponse {
		t.Helper()
		rs, err := adm.DeleteRecords(ctx, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: offset}}})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := rs.Lookup(topic, 0)
		return r
	}
	if r := del("dr", 4); r.Err != nil || r.LowWatermark != 4 {
		t.Fatalf("delete to 4: low watermark %d, error %v", r.LowWatermark, r.Err)
	}
	if r := del("dr", 2); r.Err != nil || r.LowWatermark != 4 {
		t.Errorf("delete below the start: low watermark %d, error %v; want 4", r.LowWatermark, r.Err)
	}
	if r := del("dr", 11); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Errorf("delete past the HW: %v, want OFFSET_OUT_OF_RANGE", r.Err)
	}
	if r := del("compacted", -1); !errors.Is(r.Err, kerr.PolicyViolation) {
		t.Errorf("compacted topic: %v, want POLICY_VIOLATION", r.Err)
	}
	starts, err := adm.ListStartOffsets(ctx, "dr")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup("dr", 0); o.Err != nil || o.Offset != 4 {
		t.Errorf("earliest offset %d (%v), want 4", o.Offset, o.Err)
	}
	ps, _ := c.Partition("dr", 0)
	for _, r := range ps.Replicas {
		if r.LogStartOffset != 4 {
			t.Errorf("replica %d log start %d, want 4", r.Broker, r.LogStartOffset)
		}
	}

	// A consumer asking for offset 0 gets OFFSET_OUT_OF_RANGE and resets to
	// the new start.
	cons := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"dr": {0: kgo.NewOffset().At(0)}}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cons.PollRecords(ctx, 1)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	if recs := fs.Records(); len(recs) == 0 || recs[0].Offset != 4 || recs[0].Value[0] != 4 {
		t.Errorf("first record after the reset: %+v, want offset 4", recs)
	}

	// -1 deletes up to the HW; a follower refuses.
	if r := del("dr", -1); r.Err != nil || r.LowWatermark != 10 {
		t.Errorf("delete to the HW: low watermark %d, error %v; want 10", r.LowWatermark, r.Err)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "dr"
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := callHandler[*kmsg.DeleteRecordsResponse](t, c, 2, req)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.NotLeaderForPartition.Code || p.LowWatermark != -1 {
		t.Errorf("follower: error %d low watermark %d, want NOT_LEADER_OR_FOLLOWER and -1", p.ErrorCode, p.LowWatermark)
	}
}
