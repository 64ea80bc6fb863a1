package server

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestControllerMutationQuota: under controller_mutation_rate 1 (partition
// per second; a bucket of 11 with Kafka's 11 windows of 1 s) a franz-go
// client's CreateTopics v7 creates 10 and then 5 partitions (the one that
// crosses zero is accepted), and the next topic is THROTTLING_QUOTA_EXCEEDED
// with the time to refill to zero as throttle_time_ms; once the cluster's
// clock has moved that far it goes through. CreatePartitions and
// DeleteTopics are refused the same way; a CreateTopics v5 (before KIP-599)
// is only throttled.
func TestControllerMutationQuota(t *testing.T) {
	c := manualCluster(t, Config{Brokers: 1})
	if err := c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("mut")}, quota.Op{Key: quota.ControllerMutationRate, Value: 1}); err != nil {
		t.Fatal(err)
	}
	// Each step on its own client: a throttled connection is muted.
	send := func(req kmsg.Request, opts ...kgo.Opt) kmsg.Response {
		t.Helper()
		cl := newClient(t, c, append([]kgo.Opt{kgo.ClientID("mut")}, opts...)...)
		if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testContext(t), cl); err != nil {
			t.Fatal(err)
		}
		resp, err := cl.Broker(1).Request(testContext(t), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	create := func(opts []kgo.Opt, topics map[string]int32, order ...string) *kmsg.CreateTopicsResponse {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		for _, name := range order {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, topics[name], 1
			req.Topics = append(req.Topics, rt)
		}
		return send(req, opts...).(*kmsg.CreateTopicsResponse)
	}
	codes := func(resp *kmsg.CreateTopicsResponse) []int16 {
		var out []int16
		for _, st := range resp.Topics {
			out = append(out, st.ErrorCode)
		}
		return out
	}

	resp := create(nil, map[string]int32{"a": 10, "b": 5, "c": 1}, "a", "b", "c")
	if got := codes(resp); got[0] != 0 || got[1] != 0 || got[2] != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("codes %v, want a and b created, c THROTTLING_QUOTA_EXCEEDED", got)
	}
	if resp.ThrottleMillis != 4000 { // 11-10-5 = -4 tokens at 1/s
		t.Fatalf("throttle %d ms, want 4000", resp.ThrottleMillis)
	}
	if c.topic("c") != nil {
		t.Fatal("the refused topic was created")
	}

	// CreatePartitions v3 and DeleteTopics v6 are refused too.
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "b", 6
	cp.Topics = append(cp.Topics, cpt)
	if r := send(cp).(*kmsg.CreatePartitionsResponse); r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || r.ThrottleMillis != 4000 {
		t.Fatalf("CreatePartitions over the quota: %+v", r)
	}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	dtt.Topic = kmsg.StringPtr("a")
	dt.Topics, dt.TopicNames = append(dt.Topics, dtt), []string{"a"}
	if r := send(dt).(*kmsg.DeleteTopicsResponse); r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("DeleteTopics over the quota: %+v", r)
	}

	if err := c.AdvanceClock(4 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := codes(create(nil, map[string]int32{"c": 1}, "c")); got[0] != 0 {
		t.Fatalf("after the refill: code %d", got[0])
	}

	// Before KIP-599 (CreateTopics v5) nothing is refused: the topic is
	// created and the answer throttled, here (1+2)/1 s.
	v5 := kversion.Stable()
	v5.SetMaxKeyVersion(19, 5)
	old := create([]kgo.Opt{kgo.MaxVersions(v5)}, map[string]int32{"d": 2}, "d")
	if got := codes(old); got[0] != 0 || old.ThrottleMillis != 3000 {
		t.Fatalf("CreateTopics v5: codes %v throttle %d, want created and 3000", got, old.ThrottleMillis)
	}
	// A client id without the quota is not limited.
	free := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "e", 50, 1
	free.Topics = append(free.Topics, rt)
	cl := newClient(t, c)
	r, err := free.RequestWith(testContext(t), cl)
	if err != nil || r.Topics[0].ErrorCode != 0 || r.ThrottleMillis != 0 {
		t.Fatalf("another client id: %+v %v", r, err)
	}
}
