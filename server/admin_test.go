package server

import (
	"errors"
	"github.com/fakekafka/fakekafka/protocol"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func createTopicRequest(name string, partitions int32, rf int16) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	return rt
}

func TestCreateTopicsWithAssignment(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	cl := newClient(t, c)

	rt := createTopicRequest("placed", -1, -1)
	for i, rs := range [][]int32{{3, 1}, {2, 3}} { // listed out of order on purpose
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(1-i), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "min.insync.replicas", kmsg.StringPtr("2")
	rt.Configs = append(rt.Configs, cfg)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	st := resp.Topics[0]
	if st.ErrorCode != 0 || st.NumPartitions != 2 || st.ReplicationFactor != 2 || st.TopicID == ([16]byte{}) {
		t.Fatalf("response: %+v", st)
	}
	i := slices.IndexFunc(st.Configs, func(c kmsg.CreateTopicsResponseTopicConfig) bool { return c.Name == "min.insync.replicas" })
	if i < 0 || *st.Configs[i].Value != "2" || st.Configs[i].Source != 1 {
		t.Errorf("configs: %+v, want min.insync.replicas=2 from DYNAMIC_TOPIC_CONFIG", st.Configs)
	}

	ps, ok := c.Partition("placed", 0)
	if !ok || ps.Leader != 2 || ps.Replicas[0].Broker != 2 || ps.Replicas[1].Broker != 3 {
		t.Errorf("partition 0: %+v, want replicas [2 3] led by 2", ps)
	}
	ps, ok = c.Partition("placed", 1)
	if !ok || ps.Leader != 3 || ps.Replicas[0].Broker != 3 || ps.Replicas[1].Broker != 1 {
		t.Errorf("partition 1: %+v, want replicas [3 1] led by 3", ps)
	}
	if got := c.State().Topics[0].Configs; len(got) != 1 || got["min.insync.replicas"] != "2" {
		t.Errorf("topic configs %v", got)
	}
	p := c.partition("placed", 0)
	p.mu.Lock()
	minISR := p.st.Config().MinInsyncReplicas
	p.mu.Unlock()
	if minISR != 2 {
		t.Errorf("partition min.insync.replicas %d, want 2", minISR)
	}
}

func TestCreateTopicsKadm(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c))

	r, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if r.NumPartitions != 3 || r.ReplicationFactor != 3 || r.ID == (kadm.TopicID{}) {
		t.Errorf("created: %+v", r)
	}
	if cfg, ok := r.Configs["min.insync.replicas"]; !ok || cfg.Value == nil || *cfg.Value != "2" || cfg.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("configs: %+v", r.Configs)
	}

	for _, tc := range []struct {
		name    string
		topic   string
		parts   int32
		rf      int16
		configs map[string]*string
		want    error
	}{
		{"exists", "orders", 3, 3, nil, kerr.TopicAlreadyExists},
		{"zero partitions", "zero", 0, 3, nil, kerr.InvalidPartitions},
		{"rf above brokers", "wide", 1, 4, nil, kerr.InvalidReplicationFactor},
		{"zero rf", "narrow", 1, 0, nil, kerr.InvalidReplicationFactor},
		{"illegal name", "bad name", 1, 1, nil, kerr.InvalidTopicException},
		{"too long", strings.Repeat("t", 250), 1, 1, nil, kerr.InvalidTopicException},
		{"unknown config", "cfg", 1, 1, map[string]*string{"no.such.config": kadm.StringPtr("1")}, kerr.InvalidConfig},
		{"bad config value", "cfg", 1, 1, map[string]*string{"min.insync.replicas": kadm.StringPtr("0")}, kerr.InvalidConfig},
		{"null config value", "cfg", 1, 1, map[string]*string{"retention.ms": nil}, kerr.InvalidConfig},
	} {
		rs, err := adm.CreateTopics(ctx, tc.parts, tc.rf, tc.configs, tc.topic)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := rs[tc.topic]
		if !errors.Is(r.Err, tc.want) || r.ErrMessage == "" || r.NumPartitions != -1 || r.ReplicationFactor != -1 {
			t.Errorf("%s: err %v (%q) partitions %d rf %d, want %v with a message and -1/-1", tc.name, r.Err, r.ErrMessage, r.NumPartitions, r.ReplicationFactor, tc.want)
		}
	}

	// Validate-only answers as if created and creates nothing.
	rs, err := adm.ValidateCreateTopics(ctx, -1, -1, nil, "dry")
	if err != nil {
		t.Fatal(err)
	}
	if r := rs["dry"]; r.Err != nil || r.NumPartitions != 1 || r.ReplicationFactor != 3 || r.ID != (kadm.TopicID{}) {
		t.Errorf("validate-only: %+v, want the defaults 1 and 3 and no ID", r)
	}
	if c.topic("dry") != nil {
		t.Error("validate-only created the topic")
	}
	if names := len(c.State().Topics); names != 1 {
		t.Errorf("%d topics after the failures, want only orders", names)
	}
}

func TestCreateTopicsRequestChecks(t *testing.T) {
	c := NewTestCluster(t, Config{})
	assign := func(rt *kmsg.CreateTopicsRequestTopic, parts ...int32) {
		for _, p := range parts {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, []int32{1, 2}
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
	}
	gap := createTopicRequest("gap", -1, -1)
	assign(&gap, 0, 2)
	twice := createTopicRequest("twice", -1, -1)
	assign(&twice, 0, 0)
	mixed := createTopicRequest("mixed", 2, -1)
	assign(&mixed, 0, 1)
	unknownBroker := createTopicRequest("nobroker", -1, -1)
	assign(&unknownBroker, 0)
	unknownBroker.ReplicaAssignment[0].Replicas = []int32{1, 9}

	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.Topics = []kmsg.CreateTopicsRequestTopic{
		createTopicRequest("dup", 1, 1), gap, createTopicRequest("dup", 2, 1), twice, mixed, unknownBroker, createTopicRequest("fine", 1, 1),
	}
	resp := callHandler[*kmsg.CreateTopicsResponse](t, c, 2, req)
	got := map[string]int16{}
	for _, st := range resp.Topics {
		if _, ok := got[st.Topic]; ok {
			t.Errorf("%s answered twice", st.Topic)
		}
		got[st.Topic] = st.ErrorCode
	}
	want := map[string]int16{
		"dup":      kerr.InvalidRequest.Code,
		"gap":      kerr.InvalidReplicaAssignment.Code,
		"twice":    kerr.InvalidReplicaAssignment.Code,
		"mixed":    kerr.InvalidRequest.Code,
		"nobroker": kerr.InvalidReplicaAssignment.Code,
		"fine":     0,
	}
	for name, code := range want {
		if got[name] != code {
			t.Errorf("%s: error %d, want %d", name, got[name], code)
		}
	}
	if c.topic("dup") != nil || c.topic("gap") != nil || c.topic("fine") == nil {
		t.Error("wrong topics created")
	}
	// As Kafka (seen in compat/reference): a failed topic carries an empty
	// config list, a created one every topic config with its source.
	for _, st := range resp.Topics {
		if st.ErrorCode != 0 && (st.Configs == nil || len(st.Configs) != 0) {
			t.Errorf("%s failed with configs %v, want an empty list", st.Topic, st.Configs)
		}
		if st.Topic != "fine" {
			continue
		}
		found := false
		for _, cfg := range st.Configs {
			if cfg.Name == "min.insync.replicas" {
				found = cfg.Value != nil && *cfg.Value == "1" && cfg.Source == int8(kmsg.ConfigSourceDefaultConfig)
			}
		}
		if !found || len(st.Configs) < 5 {
			t.Errorf("created topic's configs %v: want every topic config, min.insync.replicas=1 from the default", st.Configs)
		}
	}
}

func TestDeleteTopics(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	cl := newClient(t, c)
	adm := kadm.NewClient(cl)
	for _, name := range []string{"doomed", "byid", "kept"} {
		if err := c.CreateTopic(name, 2, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	id := c.topic("byid").id

	rs, err := adm.DeleteTopics(ctx, "doomed", "missing")
	if err != nil {
		t.Fatal(err)
	}
	if err := rs["doomed"].Err; err != nil {
		t.Errorf("deleting doomed: %v", err)
	}
	if err := rs["missing"].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("deleting missing: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	// Straight to a broker, bypassing the client's metadata cache.
	resp, err := metadataRequest(12, false, "doomed", "kept").RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		want := int16(0)
		if *rt.Topic == "doomed" {
			want = kerr.UnknownTopicOrPartition.Code
		}
		if rt.ErrorCode != want {
			t.Errorf("metadata for %s after delete: error %d, want %d", *rt.Topic, rt.ErrorCode, want)
		}
	}

	// v6 by topic ID: known, unknown, and both name and ID at once.
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.SetVersion(6)
	for _, e := range []struct {
		name *string
		id   [16]byte
	}{{nil, id}, {nil, [16]byte{9}}, {kmsg.StringPtr("kept"), id}} {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic, rt.TopicID = e.name, e.id
		req.Topics = append(req.Topics, rt)
	}
	dresp := callHandler[*kmsg.DeleteTopicsResponse](t, c, 3, req)
	if len(dresp.Topics) != 3 {
		t.Fatalf("%d results, want 3", len(dresp.Topics))
	}
	if r := dresp.Topics[0]; r.ErrorCode != 0 || r.Topic == nil || *r.Topic != "byid" || r.TopicID != id {
		t.Errorf("by ID: %+v", r)
	}
	if r := dresp.Topics[1]; r.ErrorCode != kerr.UnknownTopicID.Code || r.ErrorMessage == nil {
		t.Errorf("unknown ID: %+v", r)
	}
	if r := dresp.Topics[2]; r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("name and ID: %+v", r)
	}
	if c.topic("byid") != nil || c.topic("kept") == nil {
		t.Error("wrong topics deleted")
	}
}

// produceTimestamps writes one batch per timestamp to partition 0 and
// returns once each is acknowledged.
func produceTimestamps(t *testing.T, cl *kgo.Client, topic string, tss ...int64) {
	t.Helper()
	for _, ts := range tss {
		r := &kgo.Record{Topic: topic, Value: []byte("v"), Timestamp: time.UnixMilli(ts)}
		if err := cl.ProduceSync(testContext(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func listOffsetsRequest(topic string, replicaID int32, currentEpoch int32, timestamps ...int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(8) // clients negotiate their own; callHandler uses this
	req.ReplicaID = replicaID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, ts := range timestamps {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch = ts, currentEpoch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func TestListOffsets(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("lo", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.DefaultProduceTopic("lo"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)

	if end, err := adm.ListEndOffsets(ctx, "lo"); err != nil || end["lo"][0].Offset != 0 {
		t.Fatalf("empty topic end offset: %+v %v", end, err)
	}
	produceTimestamps(t, cl, "lo", 1000, 2000, 3000, 5000, 4000)

	start, err := adm.ListStartOffsets(ctx, "lo")
	if err != nil {
		t.Fatal(err)
	}
	if o := start["lo"][0]; o.Err != nil || o.Offset != 0 || o.LeaderEpoch != 0 || o.Timestamp != -1 {
		t.Errorf("earliest: %+v, want offset 0 epoch 0 timestamp -1", o)
	}
	end, err := adm.ListEndOffsets(ctx, "lo")
	if err != nil {
		t.Fatal(err)
	}
	if o := end["lo"][0]; o.Err != nil || o.Offset != 5 || o.LeaderEpoch != 0 {
		t.Errorf("latest: %+v, want offset 5 epoch 0", o)
	}

	// Each request asks for one timestamp: the same partition twice in one
	// request is INVALID_REQUEST, checked below.
	for _, tc := range []struct {
		ts         int64
		off, gotTS int64
	}{
		{0, 0, 1000},
		{2500, 2, 3000},
		{4500, 3, 5000},
		{6000, -1, -1},
		{-3, 3, 5000}, // MAX_TIMESTAMP
		{-4, 0, -1},   // EARLIEST_LOCAL
	} {
		resp, err := listOffsetsRequest("lo", -1, -1, tc.ts).RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != 0 || sp.Offset != tc.off || sp.Timestamp != tc.gotTS {
			t.Errorf("timestamp %d: error %d offset %d timestamp %d, want offset %d timestamp %d", tc.ts, sp.ErrorCode, sp.Offset, sp.Timestamp, tc.off, tc.gotTS)
		}
	}

	// Kafka 4.4 refuses a negative timestamp it does not define
	// (list_offsets_versions.go; versions_test.go has the rest).
	if resp, err := listOffsetsRequest("lo", -1, -1, -7).RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	} else if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.UnsupportedVersion.Code || sp.Offset != -1 {
		t.Errorf("timestamp -7: error %d offset %d, want UNSUPPORTED_VERSION and -1", sp.ErrorCode, sp.Offset)
	}

	// Version and routing corner cases straight to a broker.
	check := func(broker, replicaID, currentEpoch int32, ts int64, wantCode int16, wantOff int64) {
		t.Helper()
		resp := callHandler[*kmsg.ListOffsetsResponse](t, c, broker, listOffsetsRequest("lo", replicaID, currentEpoch, ts))
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != wantCode || (wantCode == 0 && sp.Offset != wantOff) {
			t.Errorf("broker %d replica %d epoch %d ts %d: error %d offset %d, want error %d offset %d", broker, replicaID, currentEpoch, ts, sp.ErrorCode, sp.Offset, wantCode, wantOff)
		}
	}
	check(2, -1, -1, -1, kerr.NotLeaderForPartition.Code, 0)
	check(1, -1, 5, -1, kerr.UnknownLeaderEpoch.Code, 0)
	check(1, -1, 0, -1, 0, 5)
	waitFor(t, 5*time.Second, "follower 2 to replicate", func() bool {
		ps, _ := c.Partition("lo", 0)
		return ps.Replicas[1].LogEndOffset == 5
	})
	check(2, -2, -1, -2, 0, 0) // debugging may read a follower
	check(2, -2, -1, -1, 0, 5)

	twice := listOffsetsRequest("lo", -1, -1, -1, -2)
	resp := callHandler[*kmsg.ListOffsetsResponse](t, c, 1, twice)
	for _, sp := range resp.Topics[0].Partitions {
		if sp.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("partition listed twice: error %d, want INVALID_REQUEST", sp.ErrorCode)
		}
	}
	resp = callHandler[*kmsg.ListOffsetsResponse](t, c, 1, listOffsetsRequest("nope", -1, -1, -1))
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: error %d", code)
	}
}

// A new leader whose HW has not reached the start of its epoch answers
// LATEST with OFFSET_NOT_AVAILABLE until its followers catch it up
// (scenario 14 of kafka-semantics.md).
// TestListOffsetsRecordGranularity: timestamp searches answer the record,
// not the batch, as Kafka does (KAFKA-16310; seen in compat/reference).
func TestListOffsetsRecordGranularity(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("lor", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	var recs []protocol.Record
	for _, d := range []int64{0, 2000, 2000, 1000} { // 1000, 3000, 3000, 2000
		recs = append(recs, protocol.Record{TimestampDelta: d, Value: []byte("v")})
	}
	raw, err := protocol.BuildBatch(protocol.BatchHeader{BaseTimestamp: 1000, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone, recs)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "lor"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	leader := c.State().Topics[0].Partitions[0].Leader
	if p := callHandler[*kmsg.ProduceResponse](t, c, leader, req).Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Fatalf("produce: %d", p.ErrorCode)
	}
	for _, tc := range []struct{ ts, off, gotTS int64 }{
		{-3, 1, 3000},   // MAX_TIMESTAMP: the first record with the largest timestamp
		{1500, 1, 3000}, // the first record at or after 1500 in offset order
		{500, 0, 1000},
		{3500, -1, -1},
	} {
		sp := callHandler[*kmsg.ListOffsetsResponse](t, c, leader, listOffsetsRequest("lor", -1, -1, tc.ts)).Topics[0].Partitions[0]
		if sp.ErrorCode != 0 || sp.Offset != tc.off || sp.Timestamp != tc.gotTS {
			t.Errorf("timestamp %d: error %d offset %d timestamp %d, want offset %d timestamp %d", tc.ts, sp.ErrorCode, sp.Offset, sp.Timestamp, tc.off, tc.gotTS)
		}
	}
}

func TestListOffsetsLaggingNewLeader(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("lag", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	// Follower 3 stops fetching but stays in the ISR, so the HW stays at 0
	// while follower 2 copies everything.
	if err := c.PauseReplica("lag", 0, 3); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	produceTimestamps(t, cl, "lag", 1000, 2000, 3000)
	waitFor(t, 5*time.Second, "follower 2 to replicate", func() bool {
		ps, _ := c.Partition("lag", 0)
		return ps.Replicas[1].LogEndOffset == 3
	})

	p := c.partition("lag", 0)
	p.mu.Lock()
	var code int16
	p.mutate(func() { code = p.st.Elect(2, false, c.now()) })
	p.mu.Unlock()
	if code != 0 {
		t.Fatalf("elect: %d", code)
	}

	for _, ts := range []int64{-1, 1500} {
		resp := callHandler[*kmsg.ListOffsetsResponse](t, c, 2, listOffsetsRequest("lag", -1, 1, ts))
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetNotAvailable.Code {
			t.Errorf("timestamp %d on the new leader: error %d, want OFFSET_NOT_AVAILABLE", ts, code)
		}
	}
	// Earliest is not bounded by the HW.
	resp := callHandler[*kmsg.ListOffsetsResponse](t, c, 2, listOffsetsRequest("lag", -1, 1, -2))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != 0 {
		t.Errorf("earliest on the new leader: %+v", sp)
	}

	if err := c.ResumeReplica("lag", 0, 3); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the new leader's HW to reach its epoch start", func() bool {
		ps, _ := c.Partition("lag", 0)
		return ps.HighWatermark == 3
	})
	resp = callHandler[*kmsg.ListOffsetsResponse](t, c, 2, listOffsetsRequest("lag", -1, 1, -1))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != 3 || sp.LeaderEpoch != 1 {
		t.Errorf("latest once caught up: %+v, want offset 3 epoch 1", sp)
	}
	resp = callHandler[*kmsg.ListOffsetsResponse](t, c, 2, listOffsetsRequest("lag", -1, 1, 1500))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != 1 || sp.LeaderEpoch != 0 {
		t.Errorf("by timestamp once caught up: %+v, want offset 1 written in epoch 0", sp)
	}
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("ofle", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	produceTimestamps(t, cl, "ofle", 1000, 2000, 3000, 4000)

	ask := func(epoch, current int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "ofle"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.LeaderEpoch, rp.CurrentLeaderEpoch = epoch, current
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	if sp := ask(0, 0); sp.ErrorCode != 0 || sp.LeaderEpoch != 0 || sp.EndOffset != 4 {
		t.Errorf("epoch 0: %+v, want epoch 0 end offset 4 (the LEO)", sp)
	}
	if sp := ask(3, -1); sp.ErrorCode != 0 || sp.LeaderEpoch != -1 || sp.EndOffset != -1 {
		t.Errorf("unknown later epoch: %+v, want -1/-1", sp)
	}
	if sp := ask(0, 5); sp.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("future current epoch: error %d, want UNKNOWN_LEADER_EPOCH", sp.ErrorCode)
	}

	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(4)
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "ofle"
	rt.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{kmsg.NewOffsetForLeaderEpochRequestTopicPartition(), kmsg.NewOffsetForLeaderEpochRequestTopicPartition()}
	rt.Partitions[1].Partition = 7
	req.Topics = append(req.Topics, rt)
	resp := callHandler[*kmsg.OffsetForLeaderEpochResponse](t, c, 2, req)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Errorf("from a follower: error %d, want NOT_LEADER_OR_FOLLOWER", code)
	}
	if code := resp.Topics[0].Partitions[1].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown partition: error %d, want UNKNOWN_TOPIC_OR_PARTITION", code)
	}
}

func TestInitProducerID(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	cl := newClient(t, c)
	initPID := func(id int64, epoch int16) *kmsg.InitProducerIDResponse {
		t.Helper()
		req := kmsg.NewPtrInitProducerIDRequest()
		req.ProducerID, req.ProducerEpoch = id, epoch
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	a, b := initPID(-1, -1), initPID(-1, -1)
	if a.ErrorCode != 0 || b.ErrorCode != 0 || a.ProducerID < 0 || a.ProducerID == b.ProducerID || a.ProducerEpoch != 0 || b.ProducerEpoch != 0 {
		t.Fatalf("two new producers: %+v %+v, want distinct IDs at epoch 0", a, b)
	}
	if r := initPID(a.ProducerID, 0); r.ErrorCode != 0 || r.ProducerID != a.ProducerID || r.ProducerEpoch != 1 {
		t.Errorf("epoch bump: %+v, want ID %d epoch 1", r, a.ProducerID)
	}
	if r := initPID(a.ProducerID, math.MaxInt16); r.ErrorCode != 0 || slices.Contains([]int64{a.ProducerID, b.ProducerID}, r.ProducerID) || r.ProducerEpoch != 0 {
		t.Errorf("exhausted epoch: %+v, want a fresh ID at epoch 0", r)
	}
	if r := initPID(1<<40, 3); r.ErrorCode != 0 || r.ProducerID == 1<<40 || r.ProducerEpoch != 0 {
		t.Errorf("ID never issued: %+v, want a fresh ID at epoch 0", r)
	}
	if r := initPID(a.ProducerID, -1); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("ID without epoch: error %d, want INVALID_REQUEST", r.ErrorCode)
	}

	// Transactional IDs are checked before the coordinator is asked
	// (txn_test.go covers the coordinator's answers).
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(5)
	req.TransactionalID = kmsg.StringPtr("tx")
	req.TransactionTimeoutMillis = 0
	if r := callHandler[*kmsg.InitProducerIDResponse](t, c, 1, req); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Errorf("transactional, zero timeout: error %d, want INVALID_TRANSACTION_TIMEOUT", r.ErrorCode)
	}
	req.TransactionTimeoutMillis = 15*60*1000 + 1 // past transaction.max.timeout.ms
	if r := callHandler[*kmsg.InitProducerIDResponse](t, c, 1, req); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Errorf("transactional, timeout past the max: error %d, want INVALID_TRANSACTION_TIMEOUT", r.ErrorCode)
	}
}
