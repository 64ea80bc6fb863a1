package server

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tinyRequestQuota is a request_percentage no request can stay under:
// any handler time is far above it, so every throttle is Kafka's cap of
// one quota window.
const tinyRequestQuota = 1e-9

// TestRequestQuotaMutesOnTheClock: a Metadata request over the
// request_percentage quota is answered at once with throttle_time_ms of one
// quota window (Kafka's cap for request quotas), and the next request on
// the connection waits until the cluster's clock has moved that far.
func TestRequestQuotaMutesOnTheClock(t *testing.T) {
	c := manualCluster(t, Config{Brokers: 1})
	if err := c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("x")}, quota.Op{Key: quota.RequestPercentage, Value: tinyRequestQuota}); err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", c.Bootstrap()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	r := bufio.NewReader(nc)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 8
	if _, err := nc.Write(frame(3, 8, 1, req.AppendTo(nil))); err != nil { // client id "x"
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 8
	if err := resp.ReadFrom(readResponse(t, r, 1)); err != nil {
		t.Fatal(err)
	}
	const want = 1000 // quota.window.size.seconds, in ms
	if resp.ThrottleMillis != want {
		t.Fatalf("throttle %d ms, want %d", resp.ThrottleMillis, want)
	}
	// The next Metadata (itself throttled once answered) waits behind the
	// mute until the clock has moved the whole throttle time.
	if _, err := nc.Write(frame(3, 8, 2, req.AppendTo(nil))); err != nil {
		t.Fatal(err)
	}
	releasedAfter(t, c, nc, r, want, 2)
}

// TestRequestQuotaThrottlesFranzGo: a franz-go producer whose client id has
// a request_percentage set with kadm sees throttle_time_ms on its
// responses (OnBrokerThrottle, applied after the response: KIP-219) and is
// muted, yet every record arrives; a Fetch throttled by the request quota
// comes back empty, as in Kafka. Another client id is not throttled.
func TestRequestQuotaThrottlesFranzGo(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, QuotaWindowSize: 20 * time.Millisecond})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c))
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: kmsg.StringPtr("busy")}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: tinyRequestQuota}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("AlterClientQuotas: %+v %v", res, err)
	}

	h := &throttles{}
	cl := newClient(t, c, kgo.ClientID("busy"), kgo.WithHooks(h), kgo.DisableIdempotentWrite())
	const n = 5
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Each produce after the first waited out the previous one's mute (the
	// broker reads nothing before it ends, and franz-go holds its next
	// write for it): a lower bound, so no flake on a slow machine.
	if took := time.Since(start); took < (n-1)*20*time.Millisecond {
		t.Fatalf("%d throttled produces took %v, less than the %v of mutes between them", n, took, (n-1)*20*time.Millisecond)
	}
	h.mu.Lock()
	if h.n < n || !h.after || h.total < n*20*time.Millisecond {
		t.Fatalf("%d throttles totalling %v (after %v), want at least one 20 ms throttle per produce", h.n, h.total, h.after)
	}
	h.mu.Unlock()
	if leo := c.State().Topics[0].Partitions[0].HighWatermark; leo != n {
		t.Fatalf("HW %d, want %d: a request throttle must not drop records", leo, n)
	}
	found := false
	for _, e := range eventsOfType(c.Events(0), EventClientThrottled) {
		found = found || strings.Contains(e.Detail, `client-id "busy"`)
	}
	if !found {
		t.Fatal("no client_throttled event for client id busy")
	}

	fetch := fetchReq(&aclEnv{topicID: c.topic("t").id})
	kresp, err := cl.Broker(1).Request(ctx, fetch)
	if err != nil {
		t.Fatal(err)
	}
	if f := kresp.(*kmsg.FetchResponse); f.ThrottleMillis <= 0 || len(f.Topics) != 0 {
		t.Fatalf("fetch over the request quota: throttle %d ms, %d topics; want a throttled empty answer", f.ThrottleMillis, len(f.Topics))
	}

	other := newClient(t, c, kgo.ClientID("other"))
	kresp, err = other.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		t.Fatal(err)
	}
	if d := kresp.(*kmsg.MetadataResponse).ThrottleMillis; d != 0 {
		t.Fatalf("client id other throttled %d ms", d)
	}
}

// TestRequestQuotaSkipsParkedTime: a Fetch long poll holds no handler in
// Kafka (it is a delayed operation), so 300 ms of waiting for data costs a
// 10% request quota nothing; counted, it would be 30% over one second.
func TestRequestQuotaSkipsParkedTime(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, QuotaWindowSize: 100 * time.Millisecond})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.AlterClientQuotas(quota.Entity{ClientID: quota.Named("poll")}, quota.Op{Key: quota.RequestPercentage, Value: 10}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.ClientID("poll"))
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testContext(t), cl); err != nil {
		t.Fatal(err)
	}
	fetch := fetchReq(&aclEnv{topicID: c.topic("t").id}).(*kmsg.FetchRequest)
	fetch.MaxWaitMillis, fetch.MinBytes = 300, 1
	start := time.Now()
	kresp, err := cl.Broker(1).Request(testContext(t), fetch)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("the long poll answered after %v, before its 300 ms", waited)
	}
	if d := kresp.(*kmsg.FetchResponse).ThrottleMillis; d != 0 {
		t.Fatalf("a long poll was throttled %d ms: its wait was counted as handler time", d)
	}
}
