package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// shareEnv is a cluster with topic "t" (2 partitions, rf 3) and a raw
// client, for the share coordinator's tests.
type shareEnv struct {
	t   *testing.T
	c   *Cluster
	cl  *kgo.Client
	ctx context.Context
	id  [16]byte // topic t's id
}

func newShareEnv(t *testing.T, cfg Config) *shareEnv {
	t.Helper()
	if cfg.ShareStatePartitions == 0 {
		cfg.ShareStatePartitions = 3
	}
	c := NewTestCluster(t, cfg)
	if err := c.CreateTopic("t", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	e := &shareEnv{t: t, c: c, cl: newClient(t, c), ctx: testContext(t)}
	e.id = c.topic("t").id
	return e
}

func (e *shareEnv) key(group string, partition int32) share.Key {
	return share.Key{Group: group, TopicID: e.id, Partition: partition}
}

// coordinator is the broker coordinating k now, found with
// FindCoordinator v6 key type SHARE over the wire.
func (e *shareEnv) coordinator(k share.Key) int32 {
	e.t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKeys = 2, []string{k.CoordinatorKey()}
	var id int32 = -1
	waitFor(e.t, 10*time.Second, "a share coordinator", func() bool {
		resp, err := req.RequestWith(e.ctx, e.cl)
		if err != nil || resp.Coordinators[0].ErrorCode != 0 {
			return false
		}
		id = resp.Coordinators[0].NodeID
		return true
	})
	return id
}

// pinned is a client sending key at no higher version than v.
func (e *shareEnv) pinned(key, v int16) *kgo.Client {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(key, v)
	return newClient(e.t, e.c, kgo.MaxVersions(vs))
}

// on sends req to broker id.
func on[R kmsg.Response](e *shareEnv, id int32, req kmsg.Request) R {
	e.t.Helper()
	resp, err := e.cl.Broker(int(id)).Request(e.ctx, req)
	if err != nil {
		e.t.Fatalf("%s to %d: %v", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp.(R)
}

func (e *shareEnv) initialize(id int32, k share.Key, stateEpoch int32, start int64) kmsg.InitializeShareGroupStateResponseTopicPartition {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = k.Group
	req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: k.TopicID,
		Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: k.Partition, StateEpoch: stateEpoch, StartOffset: start}}}}
	return on[*kmsg.InitializeShareGroupStateResponse](e, id, req).Topics[0].Partitions[0]
}

func (e *shareEnv) read(id int32, k share.Key, leaderEpoch int32) kmsg.ReadShareGroupStateResponseTopicPartition {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = k.Group
	req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: k.TopicID,
		Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: k.Partition, LeaderEpoch: leaderEpoch}}}}
	return on[*kmsg.ReadShareGroupStateResponse](e, id, req).Topics[0].Partitions[0]
}

func (e *shareEnv) write(id int32, k share.Key, stateEpoch, leaderEpoch int32, start int64, batches ...share.StateBatch) kmsg.WriteShareGroupStateResponseTopicPartition {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.GroupID = k.Group
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset = k.Partition, stateEpoch, leaderEpoch, start
	for _, b := range batches {
		p.StateBatches = append(p.StateBatches, kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch{FirstOffset: b.FirstOffset,
			LastOffset: b.LastOffset, DeliveryState: int8(b.DeliveryState), DeliveryCount: b.DeliveryCount})
	}
	req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: k.TopicID, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{p}}}
	return on[*kmsg.WriteShareGroupStateResponse](e, id, req).Topics[0].Partitions[0]
}

func (e *shareEnv) summary(id int32, k share.Key) kmsg.ReadShareGroupStateSummaryResponseTopicPartition {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.GroupID = k.Group
	req.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: k.TopicID,
		Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: k.Partition}}}}
	return on[*kmsg.ReadShareGroupStateSummaryResponse](e, id, req).Topics[0].Partitions[0]
}

func (e *shareEnv) deleteState(id int32, k share.Key) kmsg.DeleteShareGroupStateResponseTopicPartition {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = k.Group
	req.Topics = []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: k.TopicID,
		Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: k.Partition}}}}
	return on[*kmsg.DeleteShareGroupStateResponse](e, id, req).Topics[0].Partitions[0]
}

func batchesOf(p kmsg.ReadShareGroupStateResponseTopicPartition) []share.StateBatch {
	var out []share.StateBatch
	for _, b := range p.StateBatches {
		out = append(out, share.StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, DeliveryState: share.RecordState(b.DeliveryState), DeliveryCount: b.DeliveryCount})
	}
	return out
}

func msgOf(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestShareStateAPIs drives the five share-state APIs over TCP on the
// coordinator FindCoordinator names, with exact answers.
func TestShareStateAPIs(t *testing.T) {
	e := newShareEnv(t, Config{})
	k := e.key("sg", 1)
	co := e.coordinator(k)
	if want, _ := e.c.sc.rt.Coordinator(k.CoordinatorKey()); co != want {
		t.Fatalf("FindCoordinator says %d, the runtime %d", co, want)
	}
	// The topic exists now: internal, 3 partitions, Kafka's configs.
	ts := topicState(e.c.State(), shareStateTopic)
	if len(ts.Partitions) != 3 || ts.Configs["cleanup.policy"] != "delete" || ts.Configs["min.insync.replicas"] != "2" || ts.Configs["retention.ms"] != "-1" {
		t.Fatalf("%s: %d partitions, configs %v", shareStateTopic, len(ts.Partitions), ts.Configs)
	}
	if got := len(ts.Partitions[0].Replicas); got != 3 {
		t.Fatalf("replication factor %d", got)
	}

	// Before initialization: reads and writes are invalid, the summary -1.
	if p := e.read(co, k, 0); p.ErrorCode != kerr.InvalidRequest.Code || msgOf(p.ErrorMessage) != share.MsgReadUninitialized {
		t.Fatalf("read before init: %d %s", p.ErrorCode, msgOf(p.ErrorMessage))
	}
	if p := e.write(co, k, 0, 0, 0); p.ErrorCode != kerr.InvalidRequest.Code || msgOf(p.ErrorMessage) != share.MsgWriteUninitialized {
		t.Fatalf("write before init: %d %s", p.ErrorCode, msgOf(p.ErrorMessage))
	}
	if p := e.summary(co, k); p.ErrorCode != 0 || p.StartOffset != -1 || p.DeliveryCompleteCount != -1 || p.StateEpoch != 0 || p.LeaderEpoch != 0 {
		t.Fatalf("summary before init: %+v", p)
	}

	if p := e.initialize(co, k, 1, 0); p.ErrorCode != 0 || p.ErrorMessage != nil {
		t.Fatalf("initialize: %d %s", p.ErrorCode, msgOf(p.ErrorMessage))
	}
	if p := e.read(co, k, 4); p.ErrorCode != 0 || p.StateEpoch != 1 || p.StartOffset != 0 || len(p.StateBatches) != 0 {
		t.Fatalf("read: %+v", p)
	}
	if p := e.write(co, k, 1, 4, 0, share.StateBatch{FirstOffset: 0, LastOffset: 9, DeliveryState: share.Available, DeliveryCount: 1}); p.ErrorCode != 0 {
		t.Fatalf("write: %d", p.ErrorCode)
	}
	if p := e.write(co, k, 1, 4, 3, share.StateBatch{FirstOffset: 0, LastOffset: 2, DeliveryState: share.Acknowledged, DeliveryCount: 1},
		share.StateBatch{FirstOffset: 5, LastOffset: 5, DeliveryState: share.Archived, DeliveryCount: 2}); p.ErrorCode != 0 {
		t.Fatalf("write 2: %d", p.ErrorCode)
	}
	p := e.read(co, k, 4)
	want := []share.StateBatch{sb(3, 4, share.Available, 1), sb(5, 5, share.Archived, 2), sb(6, 9, share.Available, 1)}
	if p.ErrorCode != 0 || p.StartOffset != 3 || p.StateEpoch != 1 || !slices.Equal(batchesOf(p), want) {
		t.Fatalf("read after writes: start %d epoch %d batches %v", p.StartOffset, p.StateEpoch, batchesOf(p))
	}
	if s := e.summary(co, k); s.StartOffset != 3 || s.LeaderEpoch != 4 || s.StateEpoch != 1 || s.DeliveryCompleteCount != -1 {
		t.Fatalf("summary: %+v", s)
	}

	// Fencing.
	if p := e.write(co, k, 1, 3, 3); p.ErrorCode != kerr.FencedLeaderEpoch.Code || msgOf(p.ErrorMessage) != "The leader epoch in the request is older than the epoch on the broker." {
		t.Fatalf("stale leader: %d %s", p.ErrorCode, msgOf(p.ErrorMessage))
	}
	if p := e.read(co, k, 3); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale read: %d", p.ErrorCode)
	}
	if p := e.write(co, k, 0, 4, 3); p.ErrorCode != kerr.FencedStateEpoch.Code {
		t.Fatalf("stale state epoch: %d", p.ErrorCode)
	}
	if p := e.initialize(co, k, 0, 0); p.ErrorCode != kerr.FencedStateEpoch.Code {
		t.Fatalf("stale initialize: %d", p.ErrorCode)
	}
	// Unknown topic id and partition; negative numbers.
	unknown := share.Key{Group: "sg", TopicID: [16]byte{0xde, 0xad}, Partition: 0}
	if p := e.initialize(e.coordinator(unknown), unknown, 0, 0); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %d", p.ErrorCode)
	}
	past := e.key("sg", 2)
	if p := e.initialize(e.coordinator(past), past, 0, 0); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("partition past the count: %d", p.ErrorCode)
	}
	if p := e.write(co, k, 1, -1, 0); p.ErrorCode != kerr.InvalidRequest.Code || msgOf(p.ErrorMessage) != share.MsgNegativeLeaderEpoch {
		t.Fatalf("negative leader epoch: %d %s", p.ErrorCode, msgOf(p.ErrorMessage))
	}

	// Another broker is not the coordinator.
	other := int32(1)
	if other == co {
		other = 2
	}
	if p := e.read(other, k, 4); p.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("read on %d (coordinator %d): %d", other, co, p.ErrorCode)
	}

	// Delete, then the state is gone.
	if p := e.deleteState(co, k); p.ErrorCode != 0 {
		t.Fatalf("delete: %d", p.ErrorCode)
	}
	if p := e.read(co, k, 4); p.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("read after delete: %d", p.ErrorCode)
	}
	if p := e.deleteState(co, k); p.ErrorCode != 0 {
		t.Fatalf("second delete: %d", p.ErrorCode)
	}
	var inits, dels int
	for _, ev := range e.c.Events(0) {
		switch ev.Type {
		case EventShareStateInitialized:
			inits++
			if ev.Group != "sg" || ev.Topic != "t" || ev.Partition != 1 || ev.Detail != "state epoch 1, start offset 0" {
				t.Errorf("event %s", evLine(ev))
			}
		case EventShareStateDeleted:
			dels++
		}
	}
	if inits != 1 || dels != 1 {
		t.Fatalf("%d share_state_initialized, %d share_state_deleted events", inits, dels)
	}
}

// TestShareStateAPIsShapes: empty requests get empty answers, results
// come per topic once, partitions ascending, and v0 writes carry no
// delivery complete count.
func TestShareStateAPIsShapes(t *testing.T) {
	e := newShareEnv(t, Config{ShareStatePartitions: 1})
	k0, k1 := e.key("g2", 0), e.key("g2", 1)
	co := e.coordinator(k0)
	empty := kmsg.NewPtrReadShareGroupStateRequest()
	empty.GroupID = "g2"
	if r := on[*kmsg.ReadShareGroupStateResponse](e, co, empty); len(r.Topics) != 0 {
		t.Fatalf("no topics: %+v", r.Topics)
	}
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: e.id, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 0}}}}
	if r := on[*kmsg.InitializeShareGroupStateResponse](e, co, req); len(r.Topics) != 0 {
		t.Fatalf("empty group id: %+v", r.Topics)
	}
	req.GroupID = "g2"
	req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{
		{TopicID: e.id, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 1, StartOffset: 5}}},
		{TopicID: e.id, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 0, StartOffset: 7}}},
	}
	r := on[*kmsg.InitializeShareGroupStateResponse](e, co, req)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 2 || r.Topics[0].Partitions[0].Partition != 0 || r.Topics[0].Partitions[1].Partition != 1 {
		t.Fatalf("initialize answer %+v", r.Topics)
	}
	// v0 write: the delivery complete count is unknown (-1) afterwards.
	w := kmsg.NewPtrWriteShareGroupStateRequest()
	w.GroupID = "g2"
	w.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: e.id, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{{Partition: 0, StartOffset: 9, DeliveryCompleteCount: 3}}}}
	v0 := e.pinned(85, 0)
	resp, err := v0.Broker(int(co)).Request(e.ctx, w)
	if err != nil || resp.(*kmsg.WriteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode != 0 || resp.GetVersion() != 0 {
		t.Fatalf("v0 write: %v %+v", err, resp)
	}
	if s := e.summary(co, k0); s.StartOffset != 9 || s.DeliveryCompleteCount != -1 {
		t.Fatalf("after v0 write: %+v", s)
	}
	w.Version = 1
	w.Topics[0].Partitions[0].StartOffset = 9
	if p := on[*kmsg.WriteShareGroupStateResponse](e, co, w).Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Fatalf("v1 write: %d", p.ErrorCode)
	}
	if s := e.summary(co, k0); s.StartOffset != 9 || s.DeliveryCompleteCount != 3 {
		t.Fatalf("after v1 write: %+v", s)
	}
	if s := e.summary(co, k1); s.StartOffset != 5 || s.DeliveryCompleteCount != 0 {
		t.Fatalf("k1: %+v", s)
	}
}

func TestFindShareCoordinator(t *testing.T) {
	e := newShareEnv(t, Config{ShareStatePartitions: 50})
	k := e.key("grp:with:colons", 0)
	for _, tc := range []struct {
		version int16
		key     string
		want    int16
	}{
		{6, k.CoordinatorKey(), 0},
		{5, k.CoordinatorKey(), kerr.InvalidRequest.Code},
		{6, "nogroup", kerr.InvalidRequest.Code},
		{6, "g:notanid:0", kerr.InvalidRequest.Code},
		{6, "g:" + share.TopicIDString(e.id) + ":x", kerr.InvalidRequest.Code},
		{6, ":" + share.TopicIDString(e.id) + ":0", kerr.InvalidRequest.Code},
	} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = tc.version, 2, []string{tc.key}
		var code int16
		var node int32
		waitFor(t, 10*time.Second, "an answer", func() bool {
			resp, err := req.RequestWith(e.ctx, e.pinned(10, tc.version))
			if err != nil {
				t.Fatal(err)
			}
			code, node = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
			return code != kerr.CoordinatorNotAvailable.Code
		})
		if code != tc.want {
			t.Errorf("v%d %q: code %d, want %d", tc.version, tc.key, code, tc.want)
		}
		if tc.want == 0 {
			// Kafka's partition choice: Utils.abs(key.hashCode()) % 50.
			ps, _ := e.c.Partition(shareStateTopic, int32(coordinator.Partition(tc.key, 50)))
			if node != ps.Leader {
				t.Errorf("%q: node %d, leader of its partition %d", tc.key, node, ps.Leader)
			}
		}
	}
}

func sb(first, last int64, st share.RecordState, count int16) share.StateBatch {
	return share.StateBatch{FirstOffset: first, LastOffset: last, DeliveryState: st, DeliveryCount: count}
}

// TestShareAPIsAdvertised: ApiVersions lists the share coordinator's and
// the share-group offset APIs at Kafka 4.4's versions, on every listener.
func TestShareAPIsAdvertised(t *testing.T) {
	c := NewTestCluster(t, Config{})
	cl := newClient(t, c)
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int16][2]int16{83: {0, 0}, 84: {0, 0}, 85: {0, 1}, 86: {0, 0}, 87: {0, 1}, 90: {0, 1}, 91: {0, 0}, 92: {0, 0}}
	for _, k := range resp.ApiKeys {
		if w, ok := want[k.ApiKey]; ok {
			if k.MinVersion != w[0] || k.MaxVersion != w[1] {
				t.Errorf("%s: v%d-%d, want v%d-%d", kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion, w[0], w[1])
			}
			delete(want, k.ApiKey)
		}
	}
	for k := range want {
		t.Errorf("%s not advertised", kmsg.NameForKey(k))
	}
}
