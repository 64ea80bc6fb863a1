package server

import (
	"net"
	"slices"
	"testing"

	"github.com/fakekafka/fakekafka/protocol"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTelemetryUnadvertisedButAnswered: like a Kafka broker without a
// client-metrics plugin, ApiVersions hides keys 71 and 72, and a client
// that sends them anyway gets an empty subscription and its pushes are
// checked and dropped.
func TestTelemetryUnadvertisedButAnswered(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	ctx := testContext(t)
	cl := newClient(t, c)

	av, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range av.ApiKeys {
		if k.ApiKey == 71 || k.ApiKey == 72 {
			t.Fatalf("ApiVersions advertises key %d", k.ApiKey)
		}
	}

	// Clients refuse to send what ApiVersions does not list: raw frames.
	nc, err := net.Dial("tcp", c.Bootstrap()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	get := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
	rawRoundTrip(t, nc, kmsg.NewPtrGetTelemetrySubscriptionsRequest(), get)
	if get.ErrorCode != 0 || get.ClientInstanceID == ([16]byte{}) || len(get.RequestedMetrics) != 0 ||
		get.PushIntervalMillis != 300000 || get.TelemetryMaxBytes != 1<<20 || !slices.Contains(get.AcceptedCompressionTypes, 4) {
		t.Fatalf("subscription: %+v", get)
	}
	again := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	again.ClientInstanceID = get.ClientInstanceID
	got := kmsg.NewPtrGetTelemetrySubscriptionsResponse()
	rawRoundTrip(t, nc, again, got)
	if got.ClientInstanceID != get.ClientInstanceID || got.SubscriptionID != get.SubscriptionID {
		t.Fatalf("known instance: %+v, want its id and subscription echoed", got)
	}
	// Kafka's subscription id of an instance: CRC32C("[]300000") XOR the
	// instance id's Java hashCode (here 1 ^ 2 = 3).
	crc := uint32(0xd4c75bde)
	if id := telemetrySubscriptionID([16]byte{7: 1, 15: 2}); id != int32(crc)^3 {
		t.Fatalf("subscription id %#x", id)
	}

	push := func(mod func(*kmsg.PushTelemetryRequest)) int16 {
		t.Helper()
		req := kmsg.NewPtrPushTelemetryRequest()
		req.ClientInstanceID, req.SubscriptionID, req.Metrics = get.ClientInstanceID, get.SubscriptionID, []byte("m")
		mod(req)
		resp := kmsg.NewPtrPushTelemetryResponse()
		rawRoundTrip(t, nc, req, resp)
		return resp.ErrorCode
	}
	for _, tc := range []struct {
		name string
		mod  func(*kmsg.PushTelemetryRequest)
		want *kerr.Error
	}{
		{"ok", func(*kmsg.PushTelemetryRequest) {}, nil},
		{"terminating", func(r *kmsg.PushTelemetryRequest) { r.Terminating = true }, nil},
		{"no instance", func(r *kmsg.PushTelemetryRequest) { r.ClientInstanceID = [16]byte{} }, kerr.InvalidRequest},
		{"reserved instance", func(r *kmsg.PushTelemetryRequest) { r.ClientInstanceID = [16]byte{15: 1} }, kerr.InvalidRequest},
		{"stale subscription", func(r *kmsg.PushTelemetryRequest) { r.SubscriptionID++ }, kerr.UnknownSubscriptionID},
		{"codec", func(r *kmsg.PushTelemetryRequest) { r.CompressionType = 9 }, kerr.UnsupportedCompressionType},
		{"too large", func(r *kmsg.PushTelemetryRequest) { r.Metrics = make([]byte, 1<<20+1) }, kerr.TelemetryTooLarge},
	} {
		var want int16
		if tc.want != nil {
			want = tc.want.Code
		}
		if got := push(tc.mod); got != want {
			t.Errorf("%s: error %d, want %d", tc.name, got, want)
		}
	}
}

// rawRoundTrip sends req on nc with correlation id 1 and decodes the
// answer into resp, for requests a client library would not send.
func rawRoundTrip(t *testing.T, nc net.Conn, req kmsg.Request, resp kmsg.Response) {
	t.Helper()
	req.SetVersion(req.MaxVersion())
	resp.SetVersion(req.MaxVersion())
	if _, err := nc.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, 1)); err != nil {
		t.Fatal(err)
	}
	f, err := protocol.ReadFrame(nc, 1<<24)
	if err != nil {
		t.Fatal(err)
	}
	body := f[4:] // correlation id
	if resp.IsFlexible() {
		body = body[1:] // no tagged fields in the response header
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
}
