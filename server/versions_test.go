package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// versionLog records the "wrote <API> v<N>" lines of a kgo client's debug
// log: the versions it actually sent.
type versionLog struct {
	mu   sync.Mutex
	sent map[string]bool
}

func (l *versionLog) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *versionLog) Log(_ kgo.LogLevel, msg string, _ ...any) {
	if name, ok := strings.CutPrefix(msg, "wrote "); ok {
		l.mu.Lock()
		if l.sent == nil {
			l.sent = map[string]bool{}
		}
		l.sent[name] = true
		l.mu.Unlock()
	}
}

func (l *versionLog) saw(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent[name]
}

// TestNewestVersionsThroughFranzGo: franz-go picks the newest version both
// sides serve, so a plain produce and consume now runs at Produce v13 (by
// topic id), Fetch v18, ListOffsets v11, Metadata v13 and ApiVersions v5
// (with the cluster and node ids it expects, which fakekafka checks); and a
// producer whose topic was deleted and recreated under the same name gets
// UNKNOWN_TOPIC_ID for the old id, and lands in the
// new topic once purged.
func TestNewestVersionsThroughFranzGo(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("vv", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	var plog, clog versionLog
	prod := newClient(t, c, kgo.DefaultProduceTopic("vv"), kgo.WithLogger(&plog))
	for i := range 10 {
		r := &kgo.Record{Key: []byte{byte(i % 2)}, Value: fmt.Appendf(nil, "v%d", i)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := newClient(t, c, kgo.ConsumeTopics("vv"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithLogger(&clog))
	got := map[string]bool{}
	for len(got) < 10 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = true })
	}
	for i := range 10 {
		if !got[fmt.Sprintf("v%d", i)] {
			t.Fatalf("record v%d not consumed: %v", i, got)
		}
	}
	for _, want := range []struct {
		l    *versionLog
		name string
	}{{&plog, "ApiVersions v5"}, {&plog, "Metadata v13"}, {&plog, "Produce v13"}, {&clog, "Fetch v18"}, {&clog, "ListOffsets v11"}} {
		if !want.l.saw(want.name) {
			t.Errorf("franz-go never sent %s", want.name)
		}
	}

	// The same name, a new id: the producer's cached id is unknown now.
	before, _ := c.topicIDOf("vv")
	if err := c.DeleteTopic("vv"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("vv", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := c.topicIDOf("vv"); after == before {
		t.Fatal("the recreated topic kept its id")
	}
	// franz-go fails the old topic with UNKNOWN_TOPIC_ID, on purpose, until
	// it is purged; then it learns the new id.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("stale")}).FirstErr(); !errors.Is(err, kerr.UnknownTopicID) {
		t.Fatalf("produce to the recreated topic by its old id: %v, want UNKNOWN_TOPIC_ID", err)
	}
	prod.PurgeTopicsFromProducing("vv")
	r, err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("again")}).First()
	if err != nil {
		t.Fatal(err)
	}
	if r.Partition != 0 || r.Offset != 0 {
		t.Fatalf("produced to the recreated topic at %d/%d, want 0/0", r.Partition, r.Offset)
	}
}

// TestProduceV13TopicIDs: v13 names topics by id; an unknown or zero id is
// UNKNOWN_TOPIC_ID for each of its partitions (no offsets), beside a known
// one that is written; the answer carries each entry's id. A client held at
// v12 still produces by name.
func TestProduceV13TopicIDs(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	if err := c.CreateTopic("p13", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	id, _ := c.topicIDOf("p13")
	cl := newClient(t, c)
	ctx := testContext(t)
	entry := func(id [16]byte, partitions ...int32) kmsg.ProduceRequestTopic {
		rt := kmsg.NewProduceRequestTopic()
		rt.TopicID = id
		for _, p := range partitions {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = p, buildBatch(t, "x")
			rt.Partitions = append(rt.Partitions, rp)
		}
		return rt
	}
	unknown := [16]byte{0xde, 0xad}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	req.Topics = []kmsg.ProduceRequestTopic{entry(id, 0, 1), entry(unknown, 0, 1), entry([16]byte{}, 0)}
	resp, err := req.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Version != 13 || len(resp.Topics) != 3 {
		t.Fatalf("v%d answer with %d topics, want v13 with 3", resp.Version, len(resp.Topics))
	}
	for i, want := range []struct {
		id   [16]byte
		code int16
	}{{id, 0}, {unknown, kerr.UnknownTopicID.Code}, {[16]byte{}, kerr.UnknownTopicID.Code}} {
		st := resp.Topics[i]
		if st.TopicID != want.id {
			t.Errorf("entry %d: answered id %x, want %x", i, st.TopicID, want.id)
		}
		for _, sp := range st.Partitions {
			if sp.ErrorCode != want.code {
				t.Errorf("entry %d partition %d: %v, want %v", i, sp.Partition, kerr.ErrorForCode(sp.ErrorCode), kerr.ErrorForCode(want.code))
			}
			if want.code != 0 && (sp.BaseOffset != -1 || sp.LogAppendTime != -1 || sp.LogStartOffset != -1 || sp.ErrorMessage != nil) {
				t.Errorf("entry %d partition %d: base %d append time %d log start %d message %v, want -1s and no message",
					i, sp.Partition, sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset, sp.ErrorMessage)
			}
			if want.code == 0 && sp.BaseOffset != 0 {
				t.Errorf("partition %d written at %d, want 0", sp.Partition, sp.BaseOffset)
			}
		}
	}
	for p := range int32(2) {
		if ps, _ := c.Partition("p13", p); ps.Replicas[0].LogEndOffset != 1 {
			t.Errorf("partition %d holds %d records, want 1 (the known id's only)", p, ps.Replicas[0].LogEndOffset)
		}
	}

	// Held at v12, a client names the topic; the id is not on the wire.
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(0, 12)
	old := newClient(t, c, kgo.MaxVersions(vs), kgo.DefaultProduceTopic("p13"))
	if r, err := old.ProduceSync(ctx, &kgo.Record{Value: []byte("v12")}).First(); err != nil || r.Offset != 1 {
		t.Fatalf("v12 produce: %v at %d, want offset 1", err, r.Offset)
	}
}

// TestListOffsetsSpecialTimestampsByVersion: each special timestamp is
// served from the version that introduced it and refused with
// UNSUPPORTED_VERSION below it, as are negative timestamps Kafka does not
// define; the refusal comes before the partition is looked up, but after
// the duplicate check. LATEST_TIERED and EARLIEST_PENDING_UPLOAD find
// nothing (no tiered storage), once the leader checks pass.
func TestListOffsetsSpecialTimestampsByVersion(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	if err := c.CreateTopic("lsv", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("lsv"))
	for i, ts := range []int64{3000, 9000, 5000} { // the max timestamp is at offset 1
		rec := &kgo.Record{Value: []byte{byte(i)}, Timestamp: time.UnixMilli(ts)}
		if err := prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	first := map[int64]int16{-1: 1, -2: 1, -3: 7, -4: 8, -5: 9, -6: 11}
	want := map[int64]struct{ off, ts int64 }{
		-1: {3, -1}, -2: {0, -1}, -3: {1, 9000}, -4: {0, -1}, -5: {-1, -1}, -6: {-1, -1},
	}
	for v := int16(1); v <= 11; v++ {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(2, v)
		cl := newClient(t, c, kgo.MaxVersions(vs))
		for _, ts := range []int64{-1, -2, -3, -4, -5, -6, -7, -100} {
			resp, err := listOffsetsRequest("lsv", -1, -1, ts).RequestWith(ctx, cl.Broker(1))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Version != v {
				t.Fatalf("sent v%d, want v%d", resp.Version, v)
			}
			sp := resp.Topics[0].Partitions[0]
			need, known := first[ts]
			if !known || v < need {
				if sp.ErrorCode != kerr.UnsupportedVersion.Code || sp.Offset != -1 || sp.Timestamp != -1 {
					t.Errorf("v%d ts %d: %v offset %d timestamp %d, want UNSUPPORTED_VERSION -1/-1", v, ts, kerr.ErrorForCode(sp.ErrorCode), sp.Offset, sp.Timestamp)
				}
				continue
			}
			w := want[ts]
			if sp.ErrorCode != 0 || sp.Offset != w.off || sp.Timestamp != w.ts {
				t.Errorf("v%d ts %d: %v offset %d timestamp %d, want offset %d timestamp %d", v, ts, kerr.ErrorForCode(sp.ErrorCode), sp.Offset, sp.Timestamp, w.off, w.ts)
			}
			if v >= 4 && (ts == -5 || ts == -6) && sp.LeaderEpoch != -1 {
				t.Errorf("v%d ts %d: leader epoch %d, want -1", v, ts, sp.LeaderEpoch)
			}
		}
	}

	cl := newClient(t, c)
	ask := func(topic string, partition int32, epoch int32, ts int64) int16 {
		t.Helper()
		req := listOffsetsRequest(topic, -1, epoch, ts)
		req.Topics[0].Partitions[0].Partition = partition
		resp, err := req.RequestWith(ctx, cl.Broker(1))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := ask("lsv", 9, -1, -7); code != kerr.UnsupportedVersion.Code {
		t.Errorf("ts -7 on an unknown partition: %v, want UNSUPPORTED_VERSION (before the lookup)", kerr.ErrorForCode(code))
	}
	if code := ask("nope", 0, -1, -7); code != kerr.UnsupportedVersion.Code {
		t.Errorf("ts -7 on an unknown topic: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(code))
	}
	if code := ask("lsv", 9, -1, -6); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("ts -6 on an unknown partition: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(code))
	}
	if code := ask("lsv", 0, 7, -5); code != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("ts -5 with a future leader epoch: %v, want UNKNOWN_LEADER_EPOCH", kerr.ErrorForCode(code))
	}
	twice := listOffsetsRequest("lsv", -1, -1, -7, -7)
	resp, err := twice.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range resp.Topics[0].Partitions {
		if sp.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("partition listed twice with ts -7: %v, want INVALID_REQUEST (checked first)", kerr.ErrorForCode(sp.ErrorCode))
		}
	}
}

// TestApiVersionsV5ClusterAndNode: KIP-1242's check, and the request
// validation in front of it, over TCP.
func TestApiVersionsV5ClusterAndNode(t *testing.T) {
	c := NewTestCluster(t, Config{ClusterID: "vcluster"})
	cl := newClient(t, c)
	ctx := testContext(t)
	for _, tc := range []struct {
		name            string
		cluster         *string
		node            int32
		software, sw    string
		code            int16
		keys            bool
		versionOverride int16
	}{
		{name: "this cluster, this node", cluster: kmsg.StringPtr("vcluster"), node: 2, code: 0, keys: true},
		{name: "neither", node: -1, code: 0, keys: true},
		{name: "another node", cluster: kmsg.StringPtr("vcluster"), node: 3, code: kerr.RebootstrapRequired.Code},
		{name: "another cluster", cluster: kmsg.StringPtr("elsewhere"), node: 2, code: kerr.RebootstrapRequired.Code},
		{name: "cluster without node", cluster: kmsg.StringPtr("vcluster"), node: -1, code: kerr.InvalidRequest.Code},
		{name: "node without cluster", node: 2, code: kerr.InvalidRequest.Code},
		{name: "software name with a space", node: -1, software: "my client", code: kerr.InvalidRequest.Code},
		{name: "software version ending in a dot", node: -1, sw: "1.", code: kerr.InvalidRequest.Code},
		{name: "v4 has no ids to check", cluster: kmsg.StringPtr("elsewhere"), node: 3, code: 0, keys: true, versionOverride: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1.0"
			if tc.software != "" {
				req.ClientSoftwareName = tc.software
			}
			if tc.sw != "" {
				req.ClientSoftwareVersion = tc.sw
			}
			req.ClusterID, req.NodeID = tc.cluster, tc.node
			var rq kmsg.Requestor = cl.Broker(2)
			if tc.versionOverride != 0 {
				vs := kversion.Stable()
				vs.SetMaxKeyVersion(18, tc.versionOverride)
				rq = newClient(t, c, kgo.MaxVersions(vs)).Broker(2)
			}
			resp, err := req.RequestWith(ctx, rq)
			if err != nil {
				t.Fatal(err)
			}
			if v := max(tc.versionOverride, 5); tc.versionOverride == 0 && resp.Version != v {
				t.Fatalf("answered v%d, want v%d", resp.Version, v)
			}
			if resp.ErrorCode != tc.code || (len(resp.ApiKeys) > 0) != tc.keys {
				t.Fatalf("%v with %d API keys, want %v (keys: %v)", kerr.ErrorForCode(resp.ErrorCode), len(resp.ApiKeys), kerr.ErrorForCode(tc.code), tc.keys)
			}
		})
	}
}

// TestMetadataWholeRequestErrors: requests Kafka fails as a whole, with
// v13's top-level error code; a good v13 request answers it 0.
func TestMetadataWholeRequestErrors(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("md", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	id, _ := c.topicIDOf("md")
	ctx := testContext(t)
	send := func(v int16, topics ...kmsg.MetadataRequestTopic) *kmsg.MetadataResponse {
		t.Helper()
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(3, v)
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = topics
		resp, err := req.RequestWith(ctx, newClient(t, c, kgo.MaxVersions(vs)).Broker(1))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != v {
			t.Fatalf("answered v%d, want v%d", resp.Version, v)
		}
		return resp
	}
	named := kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr("md")}
	byID := kmsg.MetadataRequestTopic{TopicID: id}
	neither := kmsg.NewMetadataRequestTopic()
	whole := func(resp *kmsg.MetadataResponse, top, code int16, what string) {
		t.Helper()
		if resp.ErrorCode != top || len(resp.Brokers) != 0 || resp.ClusterID != nil || resp.ControllerID != -1 {
			t.Errorf("%s: top-level %v, %d brokers, cluster id %v, controller %d; want %v and nothing else",
				what, kerr.ErrorForCode(resp.ErrorCode), len(resp.Brokers), resp.ClusterID, resp.ControllerID, kerr.ErrorForCode(top))
		}
		for _, rt := range resp.Topics {
			if rt.ErrorCode != code || rt.Topic == nil || len(rt.Partitions) != 0 {
				t.Errorf("%s: topic %v: %v with %d partitions, want %v and none", what, rt.Topic, kerr.ErrorForCode(rt.ErrorCode), len(rt.Partitions), kerr.ErrorForCode(code))
			}
		}
	}
	unknown := kerr.UnknownServerError.Code
	whole(send(13, named, neither), unknown, unknown, "v13, a topic with neither name nor id")
	whole(send(12, named, neither), 0, unknown, "v12, the same") // no top-level code on the wire
	whole(send(11, byID), 0, kerr.InvalidRequest.Code, "v11 by id")
	whole(send(11, named, neither), 0, kerr.InvalidRequest.Code, "v11 with a null name")

	for _, rt := range []kmsg.MetadataRequestTopic{named, byID} {
		resp := send(13, rt)
		if resp.ErrorCode != 0 || len(resp.Brokers) != 3 || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || resp.Topics[0].TopicID != id {
			t.Fatalf("v13: top-level %d, %d brokers, topics %+v", resp.ErrorCode, len(resp.Brokers), resp.Topics)
		}
	}
}

// TestDescribeLogDirsV5Cordoned: IsCordoned follows the broker's own
// cordoned.log.dirs ("*" or its log dir), changed at runtime; a dir the
// broker does not have, or "*" with others, is refused.
func TestDescribeLogDirsV5Cordoned(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("ld", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	cordoned := func(broker int32) bool {
		t.Helper()
		req := kmsg.NewPtrDescribeLogDirsRequest()
		resp, err := req.RequestWith(ctx, cl.Broker(int(broker)))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 5 || len(resp.Dirs) != 1 {
			t.Fatalf("v%d answer with %d dirs", resp.Version, len(resp.Dirs))
		}
		return resp.Dirs[0].IsCordoned
	}
	alter := func(value *string) int16 {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Value = "cordoned.log.dirs", value
		if value == nil {
			cfg.Op = kmsg.IncrementalAlterConfigOpDelete
		}
		rr.Configs = append(rr.Configs, cfg)
		req.Resources = append(req.Resources, rr)
		resp, err := req.RequestWith(ctx, cl.Broker(1))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Resources[0].ErrorCode
	}
	set := func(value *string) {
		t.Helper()
		if code := alter(value); code != 0 {
			t.Fatalf("cordoned.log.dirs=%v: %v", value, kerr.ErrorForCode(code))
		}
	}
	if cordoned(1) || cordoned(2) {
		t.Fatal("cordoned before any config")
	}
	set(kmsg.StringPtr("*"))
	if !cordoned(1) || cordoned(2) {
		t.Fatalf("after * on broker 1: cordoned %v/%v, want true/false", cordoned(1), cordoned(2))
	}
	// Kafka refuses a dir the broker does not have, and * with others.
	for _, bad := range []string{"/elsewhere", "/elsewhere," + LogDir(1), "*," + LogDir(1)} {
		if code := alter(kmsg.StringPtr(bad)); code != kerr.InvalidRequest.Code {
			t.Errorf("cordoned.log.dirs=%s: %v, want INVALID_REQUEST", bad, kerr.ErrorForCode(code))
		}
	}
	if !cordoned(1) {
		t.Fatal("a refused change lifted the cordon")
	}
	set(kmsg.StringPtr(LogDir(1)))
	if !cordoned(1) {
		t.Fatal("broker 1's own dir alone: not cordoned")
	}

	// New replicas stay off the cordoned broker: replication factor 3 is
	// out of reach, 2 lands on brokers 2 and 3.
	create := func(name string, rf int16) int16 {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 5000
		rt := createTopicRequest(name, 4, rf)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].ErrorCode
	}
	if code := create("rf3", 3); code != kerr.InvalidReplicationFactor.Code {
		t.Fatalf("rf 3 with a cordoned broker: %v, want INVALID_REPLICATION_FACTOR", kerr.ErrorForCode(code))
	}
	if code := create("rf2", 2); code != 0 {
		t.Fatalf("rf 2 with a cordoned broker: %v", kerr.ErrorForCode(code))
	}
	for p := range int32(4) {
		ps, _ := c.Partition("rf2", p)
		for _, r := range ps.Replicas {
			if r.Broker == 1 {
				t.Fatalf("partition %d placed on cordoned broker 1: %+v", p, ps.Replicas)
			}
		}
	}
	set(nil)
	if code := create("rf3", 3); code != 0 {
		t.Fatalf("rf 3 once uncordoned: %v", kerr.ErrorForCode(code))
	}
	if cordoned(1) {
		t.Fatal("cordoned after the config was deleted")
	}
}

// topicIDOf is topic name's id, for tests.
func (c *Cluster) topicIDOf(name string) ([16]byte, bool) {
	if t := c.topic(name); t != nil {
		return t.id, true
	}
	return [16]byte{}, false
}

// TestProduceV13UnknownIDBeforeAuthorization: as Kafka's handleProduceRequest,
// an unknown topic id is answered before the topic's WRITE is checked; a
// known id without WRITE gets TOPIC_AUTHORIZATION_FAILED.
func TestProduceV13UnknownIDBeforeAuthorization(t *testing.T) {
	e := newACLEnv(t) // no ACLs: the client may write nothing
	cl := e.client(t, 0, -1)
	for _, tc := range []struct {
		id   [16]byte
		want int16
	}{{[16]byte{4, 4}, kerr.UnknownTopicID.Code}, {e.topicID, errTopicAuth}} {
		req := produceBatchRequest("", 1, 5000, buildBatch(t, "x"))
		req.Topics[0].TopicID = tc.id
		resp, err := req.RequestWith(testContext(t), cl.Broker(1))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 13 {
			t.Fatalf("sent v%d, want v13", resp.Version)
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != tc.want {
			t.Errorf("id %x: %v, want %v", tc.id, kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
		}
	}
}

// TestApiVersionsV5BeforeSASL: before SASL authentication Kafka's
// authenticator answers ApiVersions: it checks the request's form (software
// name, the ids in pairs) but not which cluster and node it names.
func TestApiVersionsV5BeforeSASL(t *testing.T) {
	c := securedCluster(t, Config{Brokers: 1})
	av := func(cluster *string, node int32, software string) *kmsg.ApiVersionsResponse {
		t.Helper()
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 5
		req.ClientSoftwareName, req.ClientSoftwareVersion = software, "1"
		req.ClusterID, req.NodeID = cluster, node
		return dialRaw(t, saslAddr(t, c)).call(req).(*kmsg.ApiVersionsResponse)
	}
	if resp := av(kmsg.StringPtr("elsewhere"), 9, "raw"); resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Errorf("another cluster before SASL: %v with %d keys, want the full answer", kerr.ErrorForCode(resp.ErrorCode), len(resp.ApiKeys))
	}
	if resp := av(nil, 9, "raw"); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("a node without a cluster before SASL: %v, want INVALID_REQUEST", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := av(nil, -1, "bad name"); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("a bad software name before SASL: %v, want INVALID_REQUEST", kerr.ErrorForCode(resp.ErrorCode))
	}

	// An invalid ApiVersions leaves the authenticator where it was: the
	// client may ask again, then hand-shake.
	r := dialRaw(t, saslAddr(t, c))
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = 5, "bad name", "1"
	if resp := r.call(req).(*kmsg.ApiVersionsResponse); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("first, invalid: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	req.ClientSoftwareName = "raw"
	if resp := r.call(req).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("again, valid: %v with %d keys", kerr.ErrorForCode(resp.ErrorCode), len(resp.ApiKeys))
	}
	if resp := r.handshake(1, "PLAIN"); resp.ErrorCode != 0 {
		t.Fatalf("handshake after: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}
