package server

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// callHandler runs req through broker id's handler in process, encoding
// the request and the response at req's version as the wire would. It is
// for versions and corner cases no client library sends; everything else
// goes over TCP.
func callHandler[R kmsg.Response](t *testing.T, c *Cluster, id int32, req kmsg.Request) R {
	t.Helper()
	if r, ok := protocol.Lookup(req.Key()); !ok || req.GetVersion() < r.Min || req.GetVersion() > r.Max {
		t.Fatalf("%s v%d is not served", kmsg.NameForKey(req.Key()), req.GetVersion())
	}
	in := kmsg.RequestForKey(req.Key())
	in.SetVersion(req.GetVersion())
	if err := in.ReadFrom(req.AppendTo(nil)); err != nil {
		t.Fatalf("decoding %s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	b := c.broker(id)
	resp, err := handlers[req.Key()](&conn{b: b, bl: b.listeners[0]}, in)
	if err != nil {
		t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	out := req.ResponseKind()
	out.SetVersion(resp.GetVersion())
	if err := out.ReadFrom(resp.AppendTo(nil)); err != nil {
		t.Fatalf("decoding %s v%d response: %v", kmsg.NameForKey(req.Key()), resp.GetVersion(), err)
	}
	return out.(R)
}

func metadataRequest(version int16, allowAuto bool, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(version)
	req.AllowAutoTopicCreation = allowAuto
	req.Topics = []kmsg.MetadataRequestTopic{}
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func TestMetadataTopicLayout(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c))
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, "layout"); err != nil {
		t.Fatal(err)
	}

	m, err := adm.Metadata(ctx, "layout")
	if err != nil {
		t.Fatal(err)
	}
	if m.Cluster != "fakekafka" || m.Controller != 1 {
		t.Errorf("cluster %q controller %d, want fakekafka 1", m.Cluster, m.Controller)
	}
	var addrs []string
	for _, b := range m.Brokers {
		addrs = append(addrs, b.Host+":"+strconv.Itoa(int(b.Port)))
		if want := int32(len(addrs)); b.NodeID != want {
			t.Errorf("broker %d listed as node %d", want, b.NodeID)
		}
	}
	if !slices.Equal(addrs, c.Bootstrap()) {
		t.Errorf("brokers %v, want %v", addrs, c.Bootstrap())
	}

	td, ok := m.Topics["layout"]
	if !ok || td.Err != nil {
		t.Fatalf("topic missing or failed: %+v", td)
	}
	if td.ID == (kadm.TopicID{}) {
		t.Error("topic ID is zero")
	}
	if st := c.State(); len(st.Topics) != 1 || st.Topics[0].ID != topicIDString(td.ID) {
		t.Errorf("State topic ID differs from Metadata's %s: %+v", topicIDString(td.ID), st.Topics)
	}
	if len(td.Partitions) != 6 {
		t.Fatalf("%d partitions, want 6", len(td.Partitions))
	}
	for _, pd := range td.Partitions.Sorted() {
		i := pd.Partition
		want := []int32{i%3 + 1, (i+1)%3 + 1, (i+2)%3 + 1}
		if pd.Err != nil || pd.Leader != want[0] || pd.LeaderEpoch != 0 {
			t.Errorf("partition %d: err %v leader %d epoch %d, want leader %d epoch 0", i, pd.Err, pd.Leader, pd.LeaderEpoch, want[0])
		}
		if !slices.Equal(pd.Replicas, want) || !slices.Equal(pd.ISR, want) || len(pd.OfflineReplicas) != 0 {
			t.Errorf("partition %d: replicas %v isr %v offline %v, want replicas = isr = %v", i, pd.Replicas, pd.ISR, pd.OfflineReplicas, want)
		}
	}
}

func TestMetadataTopicLists(t *testing.T) {
	c := NewTestCluster(t, Config{})
	for _, name := range []string{"b", "a", "c"} {
		if err := c.CreateTopic(name, 1, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	names := func(resp *kmsg.MetadataResponse) []string {
		var out []string
		for _, rt := range resp.Topics {
			out = append(out, *rt.Topic)
		}
		return out
	}
	all := []string{"a", "b", "c"}

	// v1+: null means all, empty means none.
	req := metadataRequest(12, false)
	req.Topics = nil
	if got := names(callHandler[*kmsg.MetadataResponse](t, c, 1, req)); !slices.Equal(got, all) {
		t.Errorf("null list: %v, want %v", got, all)
	}
	if got := names(callHandler[*kmsg.MetadataResponse](t, c, 1, metadataRequest(12, false))); len(got) != 0 {
		t.Errorf("empty list: %v, want none", got)
	}
	// v0: empty means all.
	if got := names(callHandler[*kmsg.MetadataResponse](t, c, 1, metadataRequest(0, false))); !slices.Equal(got, all) {
		t.Errorf("v0 empty list: %v, want %v", got, all)
	}
	// A topic named twice is answered once, sorted with the rest.
	if got := names(callHandler[*kmsg.MetadataResponse](t, c, 2, metadataRequest(12, false, "c", "a", "c"))); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("explicit list: %v, want [a c]", got)
	}
}

func TestMetadataByTopicID(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("byid", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	id := c.topic("byid").id

	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	for _, tid := range [][16]byte{id, {1, 2, 3}} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = tid
		req.Topics = append(req.Topics, rt)
	}
	resp := callHandler[*kmsg.MetadataResponse](t, c, 3, req)
	if len(resp.Topics) != 2 {
		t.Fatalf("%d topics, want 2", len(resp.Topics))
	}
	known, unknown := resp.Topics[0], resp.Topics[1]
	if known.ErrorCode != 0 || known.Topic == nil || *known.Topic != "byid" || known.TopicID != id || len(known.Partitions) != 2 {
		t.Errorf("known ID: %+v", known)
	}
	if unknown.ErrorCode != kerr.UnknownTopicID.Code || unknown.Topic != nil {
		t.Errorf("unknown ID: error %d topic %v, want UNKNOWN_TOPIC_ID and no name", unknown.ErrorCode, unknown.Topic)
	}

	// Before v12 a topic must have a name.
	req.SetVersion(11)
	req.Topics = req.Topics[:1]
	resp = callHandler[*kmsg.MetadataResponse](t, c, 3, req)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("v11 by ID: %+v, want INVALID_REQUEST", resp.Topics)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	cl := newClient(t, c)

	// Not allowed by the request: not created.
	resp, err := metadataRequest(12, false, "auto").RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("without AllowAutoTopicCreation: error %d, want UNKNOWN_TOPIC_OR_PARTITION", code)
	}
	if c.topic("auto") != nil {
		t.Fatal("topic created although the request did not allow it")
	}

	// Allowed: created with the defaults. The request that triggered it
	// is answered as Kafka 4.4 answers it (its controller creates the
	// topic afterwards): UNKNOWN_TOPIC_OR_PARTITION, no partitions, no
	// topic id; the next request finds it.
	resp, err = metadataRequest(12, true, "auto").RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if rt := resp.Topics[0]; rt.ErrorCode != kerr.UnknownTopicOrPartition.Code || len(rt.Partitions) != 0 || rt.TopicID != ([16]byte{}) {
		t.Fatalf("the answer that created the topic: %+v", rt)
	}
	resp, err = metadataRequest(12, true, "auto").RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	rt := resp.Topics[0]
	if rt.ErrorCode != 0 || len(rt.Partitions) != 1 || rt.TopicID == ([16]byte{}) {
		t.Fatalf("auto-created topic: %+v", rt)
	}
	if rp := rt.Partitions[0]; rp.ErrorCode != 0 || rp.Leader != 1 || !slices.Equal(rp.Replicas, []int32{1, 2, 3}) {
		t.Errorf("auto-created partition: %+v", rp)
	}
	if c.topic("auto") == nil || c.topic("auto").id != rt.TopicID {
		t.Error("auto-created topic is not in the cluster")
	}

	// Before v4 there is no flag: the broker setting decides.
	resp3 := callHandler[*kmsg.MetadataResponse](t, c, 1, metadataRequest(3, false, "old"))
	if resp3.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || c.topic("old") == nil {
		t.Errorf("v3 request: error %d, want the topic auto-created (and UNKNOWN_TOPIC_OR_PARTITION)", resp3.Topics[0].ErrorCode)
	}

	// Illegal names are refused whatever the settings.
	resp, err = metadataRequest(12, true, "no/slashes").RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].ErrorCode; code != kerr.InvalidTopicException.Code {
		t.Errorf("illegal name: error %d, want INVALID_TOPIC_EXCEPTION", code)
	}
}

func TestMetadataAutoCreateDisabled(t *testing.T) {
	off := false
	c := NewTestCluster(t, Config{AutoCreateTopics: &off})
	ctx := testContext(t)
	cl := newClient(t, c)
	resp, err := metadataRequest(12, true, "nope").RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Topics[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("error %d, want UNKNOWN_TOPIC_OR_PARTITION", code)
	}
	if c.topic("nope") != nil {
		t.Error("topic created with auto.create.topics.enable=false")
	}
	adm := kadm.NewClient(cl)
	m, err := adm.Metadata(ctx, "nope")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Topics["nope"].Err; !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("kadm: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
}

// A partition whose leader went offline is reported as KRaft does: error
// LEADER_NOT_AVAILABLE and leader -1, with the epoch, replicas and ISR
// still filled in and the dead replica under OfflineReplicas.
func TestMetadataLeaderless(t *testing.T) {
	c := NewTestCluster(t, Config{UncleanLeaderElection: false})
	// Replicas 1, 2, 3; 2 and 3 drop out of the ISR, then 1 crashes: no
	// replica may lead, and the dead 1 stays the last ISR member.
	if err := c.CreateTopic("headless", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{2, 3} {
		if err := c.PauseReplica("headless", 0, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetISR("headless", 0, []int32{1}); err != nil {
		t.Fatal(err)
	}
	if err := c.StopBroker(1, StopCrash); err != nil {
		t.Fatal(err)
	}

	resp, err := metadataRequest(12, false, "headless").RequestWith(testContext(t), newClient(t, c))
	if err != nil {
		t.Fatal(err)
	}
	rp := resp.Topics[0].Partitions[0]
	if rp.ErrorCode != kerr.LeaderNotAvailable.Code || rp.Leader != -1 || rp.LeaderEpoch != 1 {
		t.Errorf("error %d leader %d epoch %d, want LEADER_NOT_AVAILABLE, -1, 1", rp.ErrorCode, rp.Leader, rp.LeaderEpoch)
	}
	if !slices.Equal(rp.Replicas, []int32{1, 2, 3}) || !slices.Equal(rp.ISR, []int32{1}) || !slices.Equal(rp.OfflineReplicas, []int32{1}) {
		t.Errorf("replicas %v isr %v offline %v, want [1 2 3] [1] [1]", rp.Replicas, rp.ISR, rp.OfflineReplicas)
	}

	// v0 drops unavailable replicas from both lists.
	v0 := callHandler[*kmsg.MetadataResponse](t, c, 2, metadataRequest(0, false, "headless"))
	rp = v0.Topics[0].Partitions[0]
	if rp.ErrorCode != kerr.LeaderNotAvailable.Code || !slices.Equal(rp.Replicas, []int32{2, 3}) || len(rp.ISR) != 0 {
		t.Errorf("v0: error %d replicas %v isr %v, want LEADER_NOT_AVAILABLE [2 3] []", rp.ErrorCode, rp.Replicas, rp.ISR)
	}
}

// TestMetadataInternalTopics checks is_internal in every Metadata version
// that has it (v1 on): set for __consumer_offsets, clear for user topics,
// so a franz-go regex consumer of ".*" leaves the internal topic alone.
func TestMetadataInternalTopics(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("user", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	consumeAndCommitNothing(t, c, "g") // creates __consumer_offsets
	for v := int16(1); v <= 12; v++ {
		resp := callHandler[*kmsg.MetadataResponse](t, c, 1, metadataRequest(v, false, offsetsTopic, "user"))
		for _, rt := range resp.Topics {
			if want := *rt.Topic == offsetsTopic; rt.IsInternal != want || rt.ErrorCode != 0 {
				t.Errorf("v%d %s: is_internal %v, error %d; want %v, 0", v, *rt.Topic, rt.IsInternal, rt.ErrorCode, want)
			}
		}
	}

	p := newClient(t, c)
	if err := p.ProduceSync(ctx, &kgo.Record{Topic: "user", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons := newClient(t, c, kgo.ConsumeRegex(), kgo.ConsumeTopics(".*"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cons.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	if topics := cons.GetConsumeTopics(); len(topics) != 1 || topics[0] != "user" {
		t.Fatalf("regex .* consumes %v, want only [user]", topics)
	}
}

// consumeAndCommitNothing makes group's coordinator exist by committing an
// empty offset set through franz-go's admin client.
func consumeAndCommitNothing(t *testing.T, c *Cluster, group string) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, c))
	if _, err := adm.FetchOffsets(testContext(t), group); err != nil {
		t.Fatalf("offset fetch for %s: %v", group, err)
	}
	if c.topic(offsetsTopic) == nil {
		t.Fatal("__consumer_offsets not created by the group's first request")
	}
}
