package server

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (e *shareEnv) groupCoordinator(group string) int32 {
	e.t.Helper()
	id, code := e.c.coordinatorOf(group)
	if code != 0 {
		e.t.Fatalf("coordinator of %s: %d", group, code)
	}
	return id
}

func (e *shareEnv) alterOffsets(id int32, group string, topics ...kmsg.AlterShareGroupOffsetsRequestTopic) *kmsg.AlterShareGroupOffsetsResponse {
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID, req.Topics = group, topics
	return on[*kmsg.AlterShareGroupOffsetsResponse](e, id, req)
}

func (e *shareEnv) describeOffsets(id int32, group string, topics []kmsg.DescribeShareGroupOffsetsRequestGroupTopic) kmsg.DescribeShareGroupOffsetsResponseGroup {
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: group, Topics: topics}}
	return on[*kmsg.DescribeShareGroupOffsetsResponse](e, id, req).Groups[0]
}

func (e *shareEnv) deleteOffsets(id int32, group string, topics ...string) *kmsg.DeleteShareGroupOffsetsResponse {
	req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	req.GroupID = group
	for _, t := range topics {
		req.Topics = append(req.Topics, kmsg.DeleteShareGroupOffsetsRequestTopic{Topic: t})
	}
	return on[*kmsg.DeleteShareGroupOffsetsResponse](e, id, req)
}

func alterTopic(name string, offsets ...int64) kmsg.AlterShareGroupOffsetsRequestTopic {
	t := kmsg.AlterShareGroupOffsetsRequestTopic{Topic: name}
	for i := 0; i+1 < len(offsets); i += 2 {
		t.Partitions = append(t.Partitions, kmsg.AlterShareGroupOffsetsRequestTopicPartition{Partition: int32(offsets[i]), StartOffset: offsets[i+1]})
	}
	return t
}

// produceTo writes n records to t/partition.
func (e *shareEnv) produceTo(partition int32, n int) {
	e.t.Helper()
	cl := newClient(e.t, e.c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for range n {
		if err := cl.ProduceSync(e.ctx, &kgo.Record{Topic: "t", Partition: partition, Value: []byte("v")}).FirstErr(); err != nil {
			e.t.Fatal(err)
		}
	}
}

// TestShareGroupOffsetsAdmin: AlterShareGroupOffsets initializes the
// share partitions' start offsets, DescribeShareGroupOffsets reads them
// back with Kafka 4.4's lag, DeleteShareGroupOffsets deletes them.
func TestShareGroupOffsetsAdmin(t *testing.T) {
	e := newShareEnv(t, Config{})
	e.produceTo(0, 10)
	const g = "admin-share"
	gc := e.groupCoordinator(g)

	// A group that does not exist yet is made by the change.
	r := e.alterOffsets(gc, g, alterTopic("nope", 0, 1), alterTopic("t", 0, 4, 1, 0, 7, 0))
	if r.ErrorCode != 0 || len(r.Topics) != 2 {
		t.Fatalf("alter: %d %+v", r.ErrorCode, r.Topics)
	}
	if u := r.Topics[0]; u.Topic != "nope" || u.TopicID != [16]byte{} || u.Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic first: %+v", u)
	}
	ok := r.Topics[1]
	if ok.Topic != "t" || ok.TopicID != e.id || len(ok.Partitions) != 3 || ok.Partitions[0].ErrorCode != 0 || ok.Partitions[1].ErrorCode != 0 ||
		ok.Partitions[2].Partition != 7 || ok.Partitions[2].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("alter t: %+v", ok)
	}
	// The state: initialized at the group's epoch (0), start offsets as given.
	p := fastPersister(e.c)
	if s, code := p.ReadSummary(e.key(g, 0), 0); code != 0 || s.StartOffset != 4 || s.StateEpoch != 0 {
		t.Fatalf("state of t/0: %+v %d", s, code)
	}

	// Describe the partitions asked for (any broker answers these).
	d := e.describeOffsets(1, g, []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "t", Partitions: []int32{0, 1}}, {Topic: "gone", Partitions: []int32{3}}})
	if d.ErrorCode != 0 || len(d.Topics) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	dt := d.Topics[0]
	if dt.Topic != "t" || dt.TopicID != e.id || dt.Partitions[0].StartOffset != 4 || dt.Partitions[0].Lag != 6 || dt.Partitions[0].LeaderEpoch != 0 ||
		dt.Partitions[1].StartOffset != 0 || dt.Partitions[1].Lag != 0 {
		t.Fatalf("describe t: %+v", dt)
	}
	if gone := d.Topics[1]; gone.Topic != "gone" || gone.TopicID != [16]byte{} || gone.Partitions[0].StartOffset != -1 || gone.Partitions[0].ErrorCode != 0 {
		t.Fatalf("describe of a missing topic: %+v", gone)
	}
	// Every initialized partition (null topics) on the group coordinator;
	// NOT_COORDINATOR elsewhere.
	all := e.describeOffsets(gc, g, nil)
	if all.ErrorCode != 0 || len(all.Topics) != 1 || len(all.Topics[0].Partitions) != 2 || all.Topics[0].Partitions[0].Lag != 6 {
		t.Fatalf("describe all: %+v", all)
	}
	other := gc%3 + 1
	if d := e.describeOffsets(other, g, nil); d.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("describe all on %d: %d", other, d.ErrorCode)
	}
	if r := e.alterOffsets(other, g, alterTopic("t", 0, 1)); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("alter on %d: %d", other, r.ErrorCode)
	}
	// A write of the share partition's leader moves the start offset and
	// says how many records past it are done: the lag stays exact
	// (10 - 8 - 1).
	if code := p.Write(e.key(g, 0), share.PartitionState{LeaderEpoch: 0, StartOffset: 8, DeliveryCompleteCount: 1}); code != 0 {
		t.Fatal(code)
	}
	if d := e.describeOffsets(gc, g, nil); d.Topics[0].Partitions[0].StartOffset != 8 || d.Topics[0].Partitions[0].Lag != 1 {
		t.Fatalf("after a write: %+v", d.Topics[0].Partitions[0])
	}
	// One that does not know it (a v0 writer's -1) leaves the lag unknown.
	if code := p.Write(e.key(g, 0), share.PartitionState{LeaderEpoch: 0, StartOffset: 9, DeliveryCompleteCount: -1}); code != 0 {
		t.Fatal(code)
	}
	if d := e.describeOffsets(gc, g, nil); d.Topics[0].Partitions[0].StartOffset != 9 || d.Topics[0].Partitions[0].Lag != -1 {
		t.Fatalf("after a write without the count: %+v", d.Topics[0].Partitions[0])
	}

	// Only an empty group's offsets change.
	e.c.sc.groupHook = func(string) (bool, int, int32) { return true, 2, 5 }
	if r := e.alterOffsets(gc, g, alterTopic("t", 0, 1)); r.ErrorCode != kerr.NonEmptyGroup.Code || msgOf(r.ErrorMessage) != "The group is not empty." || len(r.Topics) != 0 {
		t.Fatalf("alter of a group with members: %d %s %+v", r.ErrorCode, msgOf(r.ErrorMessage), r.Topics)
	}
	if r := e.deleteOffsets(gc, g, "t"); r.ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete of a group with members: %d", r.ErrorCode)
	}
	// Empty again at group epoch 5: the state epoch of what it initializes.
	e.c.sc.groupHook = func(string) (bool, int, int32) { return true, 0, 5 }
	if r := e.alterOffsets(gc, g, alterTopic("t", 1, 2)); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("alter: %+v", r)
	}
	if s, _ := p.ReadSummary(e.key(g, 1), 0); s.StateEpoch != 5 || s.StartOffset != 2 {
		t.Fatalf("re-initialized: %+v", s)
	}
	e.c.sc.groupHook = nil

	// Delete: unknown topic, topic without state, then t.
	if err := e.c.CreateTopic("other", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	dr := e.deleteOffsets(gc, g, "t", "nope", "other")
	if dr.ErrorCode != 0 || len(dr.Topics) != 3 {
		t.Fatalf("delete: %+v", dr)
	}
	if d := dr.Topics[0]; d.Topic != "t" || d.TopicID != e.id || d.ErrorCode != 0 {
		t.Fatalf("delete t: %+v", d)
	}
	if d := dr.Topics[1]; d.Topic != "nope" || d.ErrorCode != kerr.UnknownTopicOrPartition.Code || msgOf(d.ErrorMessage) != "This server does not host this topic-partition." {
		t.Fatalf("delete nope: %+v", d)
	}
	if d := dr.Topics[2]; d.Topic != "other" || d.ErrorCode != kerr.UnknownTopicOrPartition.Code || msgOf(d.ErrorMessage) != "There is no offset information to delete." {
		t.Fatalf("delete other: %+v", d)
	}
	if d := e.describeOffsets(1, g, []kmsg.DescribeShareGroupOffsetsRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}); d.Topics[0].Partitions[0].StartOffset != -1 {
		t.Fatalf("after delete: %+v", d.Topics[0].Partitions[0])
	}
	// No state left, but the share group the alter made stays (as in
	// Kafka): nothing more to delete.
	if r := e.deleteOffsets(gc, g, "t"); r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code ||
		msgOf(r.Topics[0].ErrorMessage) != "There is no offset information to delete." {
		t.Fatalf("delete again: %+v", r)
	}
	// A group that never existed is not found.
	if r := e.deleteOffsets(e.groupCoordinator("never"), "never", "t"); r.ErrorCode != kerr.GroupIDNotFound.Code || msgOf(r.ErrorMessage) != "Group never not found." {
		t.Fatalf("delete of an unknown group: %d %s", r.ErrorCode, msgOf(r.ErrorMessage))
	}
}

// TestShareGroupOffsetsOtherGroupType: a classic group's id is not a
// share group.
func TestShareGroupOffsetsOtherGroupType(t *testing.T) {
	e := newShareEnv(t, Config{})
	const g = "classic"
	mustJoin(t, e.ctx, e.cl, rawJoinRequest(g, "", 10*time.Second, "range", "t"))
	gc := e.groupCoordinator(g)
	if r := e.alterOffsets(gc, g, alterTopic("t", 0, 1)); r.ErrorCode != kerr.GroupIDNotFound.Code || msgOf(r.ErrorMessage) != "Group classic is not a share group." {
		t.Fatalf("alter: %d %s", r.ErrorCode, msgOf(r.ErrorMessage))
	}
	if r := e.deleteOffsets(gc, g, "t"); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete: %d", r.ErrorCode)
	}
	if r := e.alterOffsets(gc, "", alterTopic("t", 0, 1)); r.ErrorCode != kerr.InvalidGroupID.Code && r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("empty group id: %d", r.ErrorCode)
	}
}

// TestDeleteShareGroupStateHook: the hook DeleteGroups calls for a share
// group deletes every share partition's state of the group, and only its.
func TestDeleteShareGroupStateHook(t *testing.T) {
	e := newShareEnv(t, Config{})
	p := fastPersister(e.c)
	for _, k := range []share.Key{e.key("del", 0), e.key("del", 1), e.key("keep", 0)} {
		mustCode(t, "initialize", p.Initialize(k, 0, 3))
	}
	mustCode(t, "delete hook", e.c.deleteShareGroupState("del"))
	var groups []string
	for _, s := range e.c.ShareStates() {
		groups = append(groups, s.Group)
	}
	if len(groups) != 1 || groups[0] != "keep" {
		t.Fatalf("left: %v", groups)
	}
}

// TestShareStateOfDeletedTopic: deleting a topic removes its share
// partitions' state (tombstones), and only theirs.
func TestShareStateOfDeletedTopic(t *testing.T) {
	e := newShareEnv(t, Config{})
	scMust(t, e.c.CreateTopic("kept", 1, 3, nil))
	kept := share.Key{Group: "g", TopicID: e.c.topic("kept").id, Partition: 0}
	p := fastPersister(e.c)
	for _, k := range []share.Key{e.key("g", 0), e.key("g", 1), e.key("h", 0), kept} {
		mustCode(t, "initialize", p.Initialize(k, 0, 0))
	}
	scMust(t, e.c.DeleteTopic("t"))
	waitFor(t, 10*time.Second, "the deleted topic's share state gone", func() bool {
		s := e.c.ShareStates()
		return len(s) == 1 && s[0].TopicID == kept.TopicID
	})
	n := 0
	for _, ev := range e.c.Events(0) {
		if ev.Type == EventShareStateDeleted && ev.Detail == "topic deleted" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d share_state_deleted events", n)
	}
}
