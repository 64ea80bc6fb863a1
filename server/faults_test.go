package server

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func mustInject(t *testing.T, c *Cluster, f Fault) *FaultRule {
	t.Helper()
	r, err := c.InjectFault(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fastRetries adds options that keep a test's retries from waiting out
// kgo's backoff and its metadata refresh limit (kgo refreshes metadata
// before retrying).
func fastRetries(opts ...kgo.Opt) []kgo.Opt {
	return append(opts, kgo.RetryBackoffFn(func(int) time.Duration { return time.Millisecond }), kgo.MetadataMinAge(10*time.Millisecond))
}

func leaderLEO(t *testing.T, c *Cluster, topic string, partition int32) int64 {
	t.Helper()
	ps, ok := c.Partition(topic, partition)
	if !ok {
		t.Fatalf("no partition %s/%d", topic, partition)
	}
	for _, r := range ps.Replicas {
		if r.Broker == ps.Leader {
			return r.LogEndOffset
		}
	}
	t.Fatalf("%s/%d has no leader", topic, partition)
	return 0
}

// TestFaultRetriableProduceError: three NOT_ENOUGH_REPLICAS answers are
// retried by an idempotent producer, which then succeeds; nothing was
// appended for the failed attempts.
func TestFaultRetriableProduceError(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	rule := mustInject(t, c, Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS", Topic: "t", Partition: int32Ptr(0), Count: 3})
	ctx := testContext(t)
	prod := newClient(t, c, fastRetries(kgo.RequiredAcks(kgo.AllISRAcks()))...)
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if hits := rule.Hits(); hits != 3 {
		t.Fatalf("hits %d, want 3", hits)
	}
	if st := rule.State(); st.Remaining != 0 || st.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("state %+v", st)
	}
	if ps, _ := c.Partition("t", 0); ps.Replicas[0].LogEndOffset != 1 || ps.HighWatermark != 1 {
		t.Fatalf("LEO %d HW %d, want the record once", ps.Replicas[0].LogEndOffset, ps.HighWatermark)
	}
}

// TestFaultFetchPartitionByNumber: an error given by number on one
// partition of a Fetch; the other partition in the same request is served.
func TestFaultFetchPartitionByNumber(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	if err := c.CreateTopic("f", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(2) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "f", Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	rule := mustInject(t, c, Fault{API: "Fetch", Error: "6", Topic: "f", Partition: int32Ptr(0), Count: 1})
	if st := rule.State(); st.Error != "NOT_LEADER_OR_FOLLOWER" || st.ErrorCode != 6 {
		t.Fatalf("error %q (%d), want NOT_LEADER_OR_FOLLOWER (6)", st.Error, st.ErrorCode)
	}

	fetch := func() map[int32]kmsg.FetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.SessionEpoch = -1, -1
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 5000, 1, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "f", c.topic("f").id // kgo picks the version: name or ID
		for p := range int32(2) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := cl.Broker(1).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int32]kmsg.FetchResponseTopicPartition{}
		for _, st := range resp.(*kmsg.FetchResponse).Topics {
			for _, sp := range st.Partitions {
				got[sp.Partition] = sp
			}
		}
		if len(got) != 2 {
			t.Fatalf("response has partitions %v, want 0 and 1", got)
		}
		return got
	}

	got := fetch()
	if p0 := got[0]; p0.ErrorCode != 6 || p0.RecordBatches == nil || len(p0.RecordBatches) != 0 {
		t.Errorf("partition 0: error %d with %d record bytes (null %v), want 6 and empty, not null, records", p0.ErrorCode, len(p0.RecordBatches), p0.RecordBatches == nil)
	}
	if p1 := got[1]; p1.ErrorCode != 0 || p1.HighWatermark != 1 || countRecords(t, p1.RecordBatches) != 1 {
		t.Errorf("partition 1: error %d HW %d, want its record", p1.ErrorCode, p1.HighWatermark)
	}
	// Count 1 is used up: both partitions are served.
	got = fetch()
	if got[0].ErrorCode != 0 || countRecords(t, got[0].RecordBatches) != 1 {
		t.Errorf("partition 0 after the rule: error %d", got[0].ErrorCode)
	}
	if hits := rule.Hits(); hits != 1 {
		t.Errorf("hits %d, want 1", hits)
	}
}

// TestFaultProduceSplit: a raw Produce to two partitions where one is
// failed. With acks=1 the other is appended and both are answered; with
// acks=0 the other is appended and the connection closes, as Kafka does.
func TestFaultProduceSplit(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	if err := c.CreateTopic("s", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	mustInject(t, c, Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS", Topic: "s", Partition: int32Ptr(0)})
	produce := func(acks int16) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = acks, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "s"
		for p := range int32(2) {
			batch, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone,
				[]protocol.Record{{Value: []byte("v")}})
			if err != nil {
				t.Fatal(err)
			}
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = p, batch
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		return req
	}

	cl := newClient(t, c)
	kresp, err := cl.Broker(1).Request(testContext(t), byTopicID(c, produce(1)))
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int32]int16{}
	for _, st := range kresp.(*kmsg.ProduceResponse).Topics {
		for _, sp := range st.Partitions {
			codes[sp.Partition] = sp.ErrorCode
			if sp.ErrorCode != 0 && (sp.BaseOffset != -1 || sp.ErrorMessage == nil) {
				t.Errorf("failed partition: base offset %d, message %v", sp.BaseOffset, sp.ErrorMessage)
			}
		}
	}
	if len(codes) != 2 || codes[0] != kerr.NotEnoughReplicas.Code || codes[1] != 0 {
		t.Fatalf("error codes %v, want partition 0: 19, partition 1: 0", codes)
	}
	if leo0, leo1 := leaderLEO(t, c, "s", 0), leaderLEO(t, c, "s", 1); leo0 != 0 || leo1 != 1 {
		t.Fatalf("LEOs %d and %d after acks=1, want 0 and 1", leo0, leo1)
	}

	nc, err := net.Dial("tcp", c.Bootstrap()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req := produce(0)
	req.Version = 3 // non-flexible, matching frame's header v1
	if _, err := nc.Write(frame(0, 3, 1, req.AppendTo(nil))); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, nc)
	if leo0, leo1 := leaderLEO(t, c, "s", 0), leaderLEO(t, c, "s", 1); leo0 != 0 || leo1 != 2 {
		t.Fatalf("LEOs %d and %d after acks=0, want 0 and 2", leo0, leo1)
	}
}

// TestFaultAfterWorkDuplicates: the record is appended and replicated, then
// the producer is told NOT_ENOUGH_REPLICAS_AFTER_APPEND; a non-idempotent
// producer retries and the log holds the record twice, as in Kafka.
func TestFaultAfterWorkDuplicates(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("dup", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	rule := mustInject(t, c, Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS_AFTER_APPEND", Topic: "dup", Count: 1, AfterWork: true})
	ctx := testContext(t)
	prod := newClient(t, c, fastRetries(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(10))...)
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "dup", Value: []byte("once")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if hits := rule.Hits(); hits != 1 {
		t.Fatalf("hits %d, want 1", hits)
	}
	if leo := leaderLEO(t, c, "dup", 0); leo != 2 {
		t.Fatalf("LEO %d, want 2: the append and its retry", leo)
	}
	cons := newClient(t, c, kgo.ConsumeTopics("dup"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var values []string
	for len(values) < 2 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	}
	if len(values) != 2 || values[0] != "once" || values[1] != "once" {
		t.Fatalf("consumed %q, want the record twice", values)
	}
}

// TestFaultDelay: a delayed Metadata request is answered after the rule
// fires, and WaitHits sees it.
func TestFaultDelay(t *testing.T) {
	c := NewTestCluster(t, Config{})
	rule := mustInject(t, c, Fault{API: "Metadata", Delay: 50 * time.Millisecond, Count: 1})
	ctx := testContext(t)
	cl := newClient(t, c)
	done := make(chan error, 1)
	go func() {
		_, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
		done <- err
	}()
	if err := rule.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if err := rule.WaitHits(ctx, 2); err == nil || !strings.Contains(err.Error(), "used up") {
		t.Fatalf("waiting past the count: %v, want a used-up error", err)
	}
}

// TestFaultDropConnection: a produce whose connection drops before the
// work is retried and lands once; one whose acknowledgement is lost after
// the work (AfterWork) is deduplicated by the idempotent producer.
func TestFaultDropConnection(t *testing.T) {
	c := NewTestCluster(t, Config{})
	for _, name := range []string{"before", "after"} {
		if err := c.CreateTopic(name, 1, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testContext(t)
	prod := newClient(t, c, fastRetries(kgo.RequiredAcks(kgo.AllISRAcks()))...)
	for _, tc := range []struct {
		topic     string
		afterWork bool
	}{{"before", false}, {"after", true}} {
		rule := mustInject(t, c, Fault{API: "Produce", Topic: tc.topic, DropConnection: true, AfterWork: tc.afterWork, Count: 1})
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: tc.topic, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", tc.topic, err)
		}
		if hits := rule.Hits(); hits != 1 {
			t.Errorf("%s: hits %d, want 1", tc.topic, hits)
		}
		if leo := leaderLEO(t, c, tc.topic, 0); leo != 1 {
			t.Errorf("%s: LEO %d, want the record once", tc.topic, leo)
		}
	}
}

// TestFaultMatchesBrokerAndClient: a top-level error on InitProducerID
// fires only for its broker and client.id.
func TestFaultMatchesBrokerAndClient(t *testing.T) {
	c := NewTestCluster(t, Config{})
	rule := mustInject(t, c, Fault{API: "INIT_PRODUCER_ID", Broker: 2, ClientID: "spy", Error: "COORDINATOR_LOAD_IN_PROGRESS"})
	ctx := testContext(t)
	spy := newClient(t, c, kgo.ClientID("spy"))
	other := newClient(t, c, kgo.ClientID("other"))
	for _, tc := range []struct {
		cl     *kgo.Client
		broker int
		want   int16
	}{
		{spy, 1, 0},
		{other, 2, 0},
		{spy, 2, kerr.CoordinatorLoadInProgress.Code},
	} {
		resp, err := tc.cl.Broker(tc.broker).Request(ctx, kmsg.NewPtrInitProducerIDRequest())
		if err != nil {
			t.Fatal(err)
		}
		r := resp.(*kmsg.InitProducerIDResponse)
		if r.ErrorCode != tc.want || (tc.want != 0) != (r.ProducerID == -1) {
			t.Errorf("broker %d: error %d producer id %d, want error %d", tc.broker, r.ErrorCode, r.ProducerID, tc.want)
		}
	}
	if hits := rule.Hits(); hits != 1 {
		t.Errorf("hits %d, want 1", hits)
	}
}

// TestFaultRemove: a removed rule stops matching at once, and waiting on
// it fails instead of hanging.
func TestFaultRemove(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("gone", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	rule := mustInject(t, c, Fault{API: "Metadata", Topic: "gone", Error: "LEADER_NOT_AVAILABLE"})
	ctx := testContext(t)
	cl := newClient(t, c)
	topicError := func() int16 {
		t.Helper()
		resp, err := cl.Broker(1).Request(ctx, metadataRequest(12, false, "gone"))
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}
	if code := topicError(); code != kerr.LeaderNotAvailable.Code {
		t.Fatalf("error %d with the rule, want 5", code)
	}
	if !c.RemoveFault(rule.ID()) {
		t.Fatal("RemoveFault: rule not found")
	}
	if code := topicError(); code != 0 {
		t.Fatalf("error %d after removal", code)
	}
	if hits := rule.Hits(); hits != 1 {
		t.Errorf("hits %d, want 1", hits)
	}
	if c.RemoveFault(rule.ID()) {
		t.Error("removed twice")
	}
	if fs := c.Faults(); len(fs) != 0 {
		t.Errorf("faults after removal: %+v", fs)
	}
	if err := rule.WaitHits(ctx, 2); err == nil || !strings.Contains(err.Error(), "removed") {
		t.Errorf("waiting on a removed rule: %v", err)
	}
}

func TestFaultValidation(t *testing.T) {
	c := NewTestCluster(t, Config{})
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{API: "Nope"}, "unknown API"},
		{Fault{API: "ApiVersions"}, "ApiVersions"},
		{Fault{API: "Vote"}, "not served"},
		{Fault{API: "Produce", Error: "NOT_A_KAFKA_ERROR"}, "unknown Kafka error"},
		{Fault{API: "Produce", Error: "NONE"}, "no error"},
		{Fault{Error: "NOT_ENOUGH_REPLICAS"}, "needs an API"},
		{Fault{API: "Produce", Error: "19", DropConnection: true}, "exclude"},
		{Fault{API: "Produce", Count: -1}, "negative"},
		{Fault{API: "Produce", Delay: -time.Second}, "negative"},
		{Fault{API: "Produce", Partition: int32Ptr(-1)}, "negative"},
		{Fault{API: "Produce", Broker: 4}, "unknown broker"},
		{Fault{API: "InitProducerID", Topic: "t"}, "name no topics"},
		{Fault{API: "CreateTopics", Topic: "t", Partition: int32Ptr(0)}, "per topic"},
	} {
		if _, err := c.InjectFault(tc.f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one about %q", tc.f, err, tc.want)
		}
	}
	if fs := c.Faults(); len(fs) != 0 {
		t.Errorf("refused rules were kept: %+v", fs)
	}

	// Every served API takes an error after its work; before it, only where
	// fakekafka can leave the work undone, and otherwise it says so.
	for _, r := range protocol.Supported {
		if r.Key == apiVersionsKey {
			continue
		}
		name := kmsg.NameForKey(r.Key)
		rule, err := c.InjectFault(Fault{API: name, Error: "UNKNOWN_SERVER_ERROR", AfterWork: true})
		if err != nil {
			t.Errorf("%s after work: %v", name, err)
			continue
		}
		c.RemoveFault(rule.ID())
		rule, err = c.InjectFault(Fault{API: name, Error: "UNKNOWN_SERVER_ERROR"})
		if err != nil {
			if !strings.Contains(err.Error(), "AfterWork") {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		c.RemoveFault(rule.ID())
	}
}

// TestFaultDeleteRecordsSplit: the failed partition keeps its records; the
// other in the same request is trimmed.
func TestFaultDeleteRecordsSplit(t *testing.T) {
	if _, ok := protocol.Lookup(21); !ok {
		t.Skip("DeleteRecords is not served")
	}
	c := NewTestCluster(t, Config{Brokers: 1})
	if err := c.CreateTopic("dr", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(2) {
		for range 2 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "dr", Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustInject(t, c, Fault{API: "DeleteRecords", Error: "POLICY_VIOLATION", Topic: "dr", Partition: int32Ptr(0), Count: 1})
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 5000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "dr"
	for p := range int32(2) {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = p, 1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]kmsg.DeleteRecordsResponseTopicPartition{}
	for _, st := range resp.(*kmsg.DeleteRecordsResponse).Topics {
		for _, sp := range st.Partitions {
			got[sp.Partition] = sp
		}
	}
	if p0 := got[0]; p0.ErrorCode != kerr.PolicyViolation.Code || p0.LowWatermark != -1 {
		t.Errorf("partition 0: %+v, want POLICY_VIOLATION", p0)
	}
	if p1 := got[1]; p1.ErrorCode != 0 || p1.LowWatermark != 1 {
		t.Errorf("partition 1: %+v, want trimmed to 1", p1)
	}
	for p, want := range []int64{0, 1} {
		if ps, _ := c.Partition("dr", int32(p)); ps.Replicas[0].LogStartOffset != want {
			t.Errorf("partition %d log start %d, want %d", p, ps.Replicas[0].LogStartOffset, want)
		}
	}
}

// TestFaultCreateTopicsSplit: the failed topic is not created; the other
// in the same request is.
func TestFaultCreateTopicsSplit(t *testing.T) {
	c := NewTestCluster(t, Config{})
	rule := mustInject(t, c, Fault{API: "CreateTopics", Error: "POLICY_VIOLATION", Topic: "refused"})
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 5000
	req.Topics = append(req.Topics, createTopicRequest("refused", 1, 1), createTopicRequest("made", 1, 1))
	resp, err := newClient(t, c).Request(testContext(t), req)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int16{}
	for _, st := range resp.(*kmsg.CreateTopicsResponse).Topics {
		codes[st.Topic] = st.ErrorCode
	}
	if len(codes) != 2 || codes["refused"] != kerr.PolicyViolation.Code || codes["made"] != 0 {
		t.Fatalf("error codes %v", codes)
	}
	if c.topic("refused") != nil || c.topic("made") == nil {
		t.Fatal("the failed topic was created or the other was not")
	}
	if rule.Hits() != 1 {
		t.Fatalf("hits %d", rule.Hits())
	}
}
