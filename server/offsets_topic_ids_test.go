package server

import (
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// pinnedClient is a client whose highest version of key is v.
func pinnedClient(t *testing.T, c *Cluster, key, v int16, opts ...kgo.Opt) *kgo.Client {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(key, v)
	return newClient(t, c, append(opts, kgo.MaxVersions(vs))...)
}

// TestOffsetsByTopicID: a franz-go consumer group commits with
// OffsetCommit v10 (topic ids) and reads its offsets back with OffsetFetch
// v10; raw requests show the broker's prechecks: an unknown id's
// partitions get UNKNOWN_TOPIC_ID and a missing partition
// UNKNOWN_TOPIC_OR_PARTITION, first in the answer and whatever the group
// says, and a deleted topic drops out of v10's all-offsets answer.
func TestOffsetsByTopicID(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 3})
	ctx := testContext(t)
	if err := c.CreateTopic("ids", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.DefaultProduceTopic("ids"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 10 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 2), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := newClient(t, c, kgo.ConsumerGroup("gid"), kgo.ConsumeTopics("ids"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < 10; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cons.CloseAllowingRebalance()

	id, _ := c.topicNameID("ids")
	cl := newClient(t, c)
	fetch := func(topics []kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchResponseGroup {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group, g.Topics = "gid", topics
		req.Groups = append(req.Groups, g)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.Version != 10 {
			t.Fatalf("OffsetFetch: %v %+v", err, resp)
		}
		return resp.Groups[0]
	}
	all := fetch(nil)
	if len(all.Topics) != 1 || all.Topics[0].TopicID != id || len(all.Topics[0].Partitions) != 2 ||
		all.Topics[0].Partitions[0].Offset != 5 || all.Topics[0].Partitions[1].Offset != 5 {
		t.Fatalf("all offsets by id: %+v", all)
	}
	// The pre-v8 request shape, as tools still send it: kgo asks at v10
	// and names the topics again from their ids.
	old := kmsg.NewPtrOffsetFetchRequest()
	old.Group = "gid"
	if r, err := old.RequestWith(ctx, cl); err != nil || len(r.Topics) != 1 || r.Topics[0].Topic != "ids" || len(r.Topics[0].Partitions) != 2 {
		t.Fatalf("old-shaped OffsetFetch through kgo: %v %+v", err, r)
	}
	unknownID := [16]byte{9, 9}
	// Asked of a broker that does not coordinate the group: the group's
	// error and no topics, as Kafka 4.4 answers.
	coord, _ := c.coordinatorOf("gid")
	nc := kmsg.NewPtrOffsetFetchRequest()
	nc.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "gid", Topics: []kmsg.OffsetFetchRequestGroupTopic{{TopicID: id, Partitions: []int32{0}}, {TopicID: unknownID, Partitions: []int32{0}}}}}
	raw, err := cl.Broker(int(coord%3+1)).Request(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if g := raw.(*kmsg.OffsetFetchResponse).Groups[0]; g.ErrorCode != kerr.NotCoordinator.Code || g.Topics != nil {
		t.Fatalf("OffsetFetch v10 of a non-coordinator: %+v", g)
	}
	some := fetch([]kmsg.OffsetFetchRequestGroupTopic{{TopicID: unknownID, Partitions: []int32{0}}, {TopicID: id, Partitions: []int32{1, 7}}})
	if len(some.Topics) != 2 || some.Topics[0].TopicID != unknownID || some.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code ||
		some.Topics[0].Partitions[0].Offset != -1 || some.Topics[1].TopicID != id || some.Topics[1].Partitions[0].Offset != 5 ||
		some.Topics[1].Partitions[1].Offset != -1 || some.Topics[1].Partitions[1].ErrorCode != 0 {
		t.Fatalf("some offsets by id: %+v", some)
	}

	commit := func(generation int32, topics ...kmsg.OffsetCommitRequestTopic) []kmsg.OffsetCommitResponseTopic {
		t.Helper()
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation, req.MemberID, req.Topics = "gid", generation, "someone", topics
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.Version != 10 {
			t.Fatalf("OffsetCommit: %v %+v", err, resp)
		}
		return resp.Topics
	}
	parts := func(ps ...int32) []kmsg.OffsetCommitRequestTopicPartition {
		var out []kmsg.OffsetCommitRequestTopicPartition
		for _, p := range ps {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = p, 7
			out = append(out, rp)
		}
		return out
	}
	// A stale generation: the coordinator refuses, the broker's own
	// answers stand and come first.
	got := commit(3, kmsg.OffsetCommitRequestTopic{TopicID: id, Partitions: parts(0, 5)}, kmsg.OffsetCommitRequestTopic{TopicID: unknownID, Partitions: parts(0)})
	want := []struct {
		id        [16]byte
		partition int32
		code      int16
	}{{id, 5, kerr.UnknownTopicOrPartition.Code}, {id, 0, kerr.UnknownMemberID.Code}, {unknownID, 0, kerr.UnknownTopicID.Code}}
	var flat []struct {
		id        [16]byte
		partition int32
		code      int16
	}
	for _, st := range got {
		for _, sp := range st.Partitions {
			flat = append(flat, struct {
				id        [16]byte
				partition int32
				code      int16
			}{st.TopicID, sp.Partition, sp.ErrorCode})
		}
	}
	if len(flat) != len(want) {
		t.Fatalf("commit answers %+v, want %+v", flat, want)
	}
	for i := range want {
		if flat[i] != want[i] {
			t.Fatalf("commit answer %d: %+v, want %+v (all: %+v)", i, flat[i], want[i], flat)
		}
	}
	// A simple commit (generation -1) of a known partition goes through.
	if got := commit(-1, kmsg.OffsetCommitRequestTopic{TopicID: id, Partitions: parts(1)}); got[0].TopicID != id || got[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("simple commit by id: %+v", got)
	}
	if p := fetch([]kmsg.OffsetFetchRequestGroupTopic{{TopicID: id, Partitions: []int32{1}}}); p.Topics[0].Partitions[0].Offset != 7 {
		t.Fatalf("after the simple commit: %+v", p)
	}

	// Before v10 a topic is its name: an empty one is just unknown.
	byName := kmsg.NewPtrOffsetCommitRequest()
	byName.Group, byName.Generation = "gid", -1
	byName.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "", Partitions: parts(0)}}
	if r, err := byName.RequestWith(ctx, pinnedClient(t, c, 8, 9)); err != nil || r.Version != 9 ||
		r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v9 commit of topic \"\": %v %+v", err, r)
	}

	// A deleted topic has no id: v10 lists no offsets for it, v9 does.
	if err := c.DeleteTopic("ids"); err != nil {
		t.Fatal(err)
	}
	if all := fetch(nil); len(all.Topics) != 0 {
		t.Fatalf("all offsets by id after the delete: %+v", all)
	}
	cl9 := pinnedClient(t, c, 9, 9)
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "gid"}}
	resp, err := req.RequestWith(ctx, cl9)
	if err != nil || resp.Version != 9 || len(resp.Groups[0].Topics) != 1 || resp.Groups[0].Topics[0].Topic != "ids" {
		t.Fatalf("v9 all offsets after the delete: %v %+v", err, resp)
	}
}

// TestTxnOffsetCommitByTopicID: TxnOffsetCommit v6 answers an unknown id
// without asking the coordinator, and commits a known one in a
// transaction the group's offsets join implicitly (transaction.version 2).
func TestTxnOffsetCommitByTopicID(t *testing.T) {
	c := txnCluster(t, Config{})
	if err := c.CreateTopic("src", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("tid6"), 60000
	ir, err := init.RequestWith(ctx, cl)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v %+v", err, ir)
	}
	id, _ := c.topicNameID("src")
	commit := func(topicID [16]byte, epoch int16) *kmsg.TxnOffsetCommitResponse {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "tid6", "g6", ir.ProducerID, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.TopicID = topicID
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset = 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.Version != 6 {
			t.Fatalf("TxnOffsetCommit: %v %+v", err, resp)
		}
		return resp
	}
	// A stale epoch would be fenced by the coordinator; an unknown id is
	// answered before it.
	if r := commit([16]byte{7}, ir.ProducerEpoch-1); r.Topics[0].TopicID != [16]byte{7} || r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: %+v", r)
	}
	if r := commit(id, ir.ProducerEpoch); r.Topics[0].TopicID != id || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("known id: %+v", r)
	}
	if r := commit(id, ir.ProducerEpoch-1); r.Topics[0].Partitions[0].ErrorCode != kerr.ProducerFenced.Code &&
		r.Topics[0].Partitions[0].ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch, known id: %+v", r)
	}
}

// TestDescribeAndDeleteGroupsNewest: DescribeGroups v6 answers a group
// that is not a classic group with GROUP_ID_NOT_FOUND and Kafka's message
// (v5: Dead without an error); DeleteGroups v3 carries a null message.
func TestDescribeAndDeleteGroupsNewest(t *testing.T) {
	c := NewTestCluster(t, Config{ConsumerGroupHeartbeatInterval: 50 * time.Millisecond})
	if err := c.CreateTopic("work", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	member := newClient(t, c, kgo.ConsumerGroup("g848"), kgo.ConsumeTopics("work"), kgo.ServerSideBalancer())
	waitFor(t, 10*time.Second, "the KIP-848 member joined", func() bool {
		gs, ok := c.Group("g848")
		return ok && len(gs.Members) == 1
	})
	cl := newClient(t, c)
	simple := withTopicIDs(c, &kmsg.OffsetCommitRequest{Version: 10, Group: "classic", Generation: -1,
		Topics: []kmsg.OffsetCommitRequestTopic{{Topic: "work", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 1, LeaderEpoch: -1}}}}})
	if r, err := simple.RequestWith(ctx, cl); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit: %v %+v", err, r)
	}
	describe := func(cl *kgo.Client, g string) kmsg.DescribeGroupsResponseGroup {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{g}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Groups[0]
	}
	for _, tc := range []struct{ group, state, msg string }{
		{"classic", "Empty", "<null>"},
		{"nope", "Dead", "Group nope not found."},
		{"g848", "Dead", "Group g848 is not a classic group."},
	} {
		g := describe(cl, tc.group)
		code := int16(0)
		if tc.msg != "<null>" {
			code = kerr.GroupIDNotFound.Code
		}
		if g.ErrorCode != code || g.State != tc.state || strPtr(g.ErrorMessage) != tc.msg {
			t.Errorf("DescribeGroups v6 %s: %+v (%s)", tc.group, g, strPtr(g.ErrorMessage))
		}
		g5 := describe(pinnedClient(t, c, 15, 5), tc.group)
		if g5.ErrorCode != 0 || g5.State != tc.state {
			t.Errorf("DescribeGroups v5 %s: %+v", tc.group, g5)
		}
	}
	// Authorized operations (KIP-430): Kafka 4.4's group operations,
	// configs included, for a group answered without an error; none with.
	withOps := func(v int16) kmsg.DescribeGroupsResponseGroup {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.SetVersion(v)
		req.Groups, req.IncludeAuthorizedOperations = []string{"nope"}, true
		resp, err := req.RequestWith(ctx, pinnedClient(t, c, 15, v))
		if err != nil || resp.Version != v {
			t.Fatalf("DescribeGroups v%d: %v %+v", v, err, resp)
		}
		return resp.Groups[0]
	}
	if g := withOps(5); g.AuthorizedOperations != 1<<3|1<<6|1<<8|1<<10|1<<11 {
		t.Errorf("v5 authorized operations of an unknown group: %d, want READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (3400)", g.AuthorizedOperations)
	}
	if g := withOps(6); g.ErrorCode != kerr.GroupIDNotFound.Code || g.AuthorizedOperations != math.MinInt32 {
		t.Errorf("v6 unknown group with authorized operations: %+v", g)
	}
	member.Close()

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"classic", "nope"}
	resp, err := del.RequestWith(ctx, cl)
	if err != nil || resp.Version != 3 || len(resp.Groups) != 2 {
		t.Fatalf("DeleteGroups v3: %v %+v", err, resp)
	}
	for _, g := range resp.Groups { // kgo splits the request by coordinator
		want := map[string]int16{"classic": 0, "nope": kerr.GroupIDNotFound.Code}[g.Group]
		if g.ErrorCode != want || g.ErrorMessage != nil {
			t.Fatalf("DeleteGroups v3 %s: %+v", g.Group, g)
		}
	}
	if g := describe(cl, "classic"); g.ErrorCode != kerr.GroupIDNotFound.Code || strPtr(g.ErrorMessage) != "Group classic not found." {
		t.Fatalf("a deleted group: %+v", g)
	}
}

// TestEmptyGroupIDDescribeDelete: Kafka 4.4 looks an empty group id up
// like any other in DescribeGroups and DeleteGroups: its coordinator
// answers GROUP_ID_NOT_FOUND (v6: "Group  not found."), the other brokers
// NOT_COORDINATOR.
func TestEmptyGroupIDDescribeDelete(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 3})
	cl := newClient(t, c)
	ctx := testContext(t)
	var found, notCoord int
	for id := int32(1); id <= 3; id++ {
		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups = []string{""}
		dr, err := cl.Broker(int(id)).Request(ctx, dg)
		if err != nil {
			t.Fatal(err)
		}
		del := kmsg.NewPtrDeleteGroupsRequest()
		del.Groups = []string{""}
		xr, err := cl.Broker(int(id)).Request(ctx, del)
		if err != nil {
			t.Fatal(err)
		}
		g, x := dr.(*kmsg.DescribeGroupsResponse).Groups[0], xr.(*kmsg.DeleteGroupsResponse).Groups[0]
		switch {
		case g.ErrorCode == kerr.GroupIDNotFound.Code && strPtr(g.ErrorMessage) == "Group  not found." && g.State == "Dead" &&
			x.ErrorCode == kerr.GroupIDNotFound.Code:
			found++
		case g.ErrorCode == kerr.NotCoordinator.Code && x.ErrorCode == kerr.NotCoordinator.Code:
			notCoord++
		default:
			t.Errorf("broker %d: describe %+v, delete %+v", id, g, x)
		}
	}
	if found != 1 || notCoord != 2 {
		t.Fatalf("%d coordinators answered GROUP_ID_NOT_FOUND, %d NOT_COORDINATOR; want 1 and 2", found, notCoord)
	}
}

// TestOffsetCommitByTopicIDGroupDenied: without READ on the group the
// whole request fails, each topic answered under the id it was asked by,
// known or not.
func TestOffsetCommitByTopicIDGroupDenied(t *testing.T) {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	id, _ := c.topicNameID("t")
	cl := newClient(t, c)
	ctx := testContext(t)
	ids := [][16]byte{{7}, id, {8}}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "g", -1
	txn := kmsg.NewPtrTxnOffsetCommitRequest()
	txn.TransactionalID, txn.Group, txn.ProducerID, txn.ProducerEpoch, txn.Generation = "x", "g", 1, 0, -1
	for _, tid := range ids {
		commit.Topics = append(commit.Topics, kmsg.OffsetCommitRequestTopic{TopicID: tid, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 1, LeaderEpoch: -1}}})
		txn.Topics = append(txn.Topics, kmsg.TxnOffsetCommitRequestTopic{TopicID: tid, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Offset: 1, LeaderEpoch: -1}}})
	}
	// Straight to the one broker: a client could not even find the
	// coordinator of a group it may not describe.
	raw, err := cl.Broker(1).Request(ctx, commit)
	if err != nil {
		t.Fatal(err)
	}
	cr := raw.(*kmsg.OffsetCommitResponse)
	if cr.Version != 10 || len(cr.Topics) != 3 {
		t.Fatalf("OffsetCommit: %+v", cr)
	}
	if raw, err = cl.Broker(1).Request(ctx, txn); err != nil {
		t.Fatal(err)
	}
	tr := raw.(*kmsg.TxnOffsetCommitResponse)
	if tr.Version != 6 || len(tr.Topics) != 3 {
		t.Fatalf("TxnOffsetCommit: %+v", tr)
	}
	for i, tid := range ids {
		if st := cr.Topics[i]; st.TopicID != tid || st.Partitions[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
			t.Errorf("OffsetCommit topic %d: %+v", i, st)
		}
		if st := tr.Topics[i]; st.TopicID != tid || st.Partitions[0].ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
			t.Errorf("TxnOffsetCommit topic %d: %+v", i, st)
		}
	}
}
