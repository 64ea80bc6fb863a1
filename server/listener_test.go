package server

import (
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// twoListeners is a cluster with an EXTERNAL listener advertised as
// 127.0.0.1 and an INTERNAL one advertised as localhost, so a client can
// tell from Metadata which listener answered.
func twoListeners(t *testing.T, cfg Config) *Cluster {
	cfg.Listeners = []Listener{
		{Name: "EXTERNAL", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "INTERNAL", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:0", AdvertisedHost: "localhost"},
	}
	return NewTestCluster(t, cfg)
}

// listenerAddrs is one listener's advertised addresses by broker id order.
func listenerAddrs(t *testing.T, c *Cluster, name string) []string {
	t.Helper()
	for _, l := range c.Listeners() {
		if l.Name == name {
			var out []string
			for _, b := range l.Brokers {
				out = append(out, b.Advertised)
			}
			return out
		}
	}
	t.Fatalf("no listener %s", name)
	return nil
}

// metadataBrokers asks seed for Metadata, DescribeCluster and
// FindCoordinator and returns the advertised addresses of the brokers (the
// same in both answers) and of the group's coordinator.
func metadataBrokers(t *testing.T, seed string) ([]string, string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testContext(t)
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var brokers []string
	for _, b := range meta.Brokers {
		brokers = append(brokers, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
	if err != nil || dc.ErrorCode != 0 {
		t.Fatalf("DescribeCluster: %v, code %d", err, dc.ErrorCode)
	}
	var described []string
	for _, b := range dc.Brokers {
		described = append(described, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	if !slices.Equal(slices.Sorted(slices.Values(described)), slices.Sorted(slices.Values(brokers))) {
		t.Fatalf("DescribeCluster brokers %v, Metadata %v", described, brokers)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g"
	co, err := fc.RequestWith(ctx, cl)
	if err != nil || co.ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %v, code %d", err, co.ErrorCode)
	}
	return brokers, net.JoinHostPort(co.Host, strconv.Itoa(int(co.Port)))
}

func TestListenersAnswerWithTheirOwnAddresses(t *testing.T) {
	c := twoListeners(t, Config{})
	ext, in := listenerAddrs(t, c, "EXTERNAL"), listenerAddrs(t, c, "INTERNAL")
	if !slices.Equal(c.Bootstrap(), ext) {
		t.Fatalf("Bootstrap %v, want the first listener's %v", c.Bootstrap(), ext)
	}
	for _, a := range in {
		if !strings.HasPrefix(a, "localhost:") {
			t.Fatalf("INTERNAL advertises %v, want localhost", in)
		}
	}
	for _, tc := range []struct {
		seed string
		want []string
	}{{ext[1], ext}, {in[2], in}} {
		brokers, coordinator := metadataBrokers(t, tc.seed)
		want := slices.Sorted(slices.Values(tc.want))
		if slices.Sort(brokers); !slices.Equal(brokers, want) {
			t.Errorf("Metadata through %s: brokers %v, want %v", tc.seed, brokers, tc.want)
		}
		if !slices.Contains(tc.want, coordinator) {
			t.Errorf("FindCoordinator through %s: %s, want one of %v", tc.seed, coordinator, tc.want)
		}
	}

	// Records written on one listener are read on the other, across a
	// restart that reopens both.
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.StopBroker(1, StopClean); err != nil {
		t.Fatal(err)
	}
	if err := c.StartBroker(1); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	pc, err := kgo.NewClient(kgo.SeedBrokers(ext...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if err := pc.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cc, err := kgo.NewClient(kgo.SeedBrokers(in...), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	fs := cc.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "v" {
		t.Fatalf("consumed %v through INTERNAL, want the one record", recs)
	}
}

// forwarder is a TCP proxy: each port forwards to one target and counts
// the connections it carried.
type forwarder struct {
	lns   []net.Listener
	conns atomic.Int64
	wg    sync.WaitGroup
}

func newForwarder(t *testing.T, targets []string) *forwarder {
	f := &forwarder{}
	for _, target := range targets {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f.lns = append(f.lns, ln)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for {
				in, err := ln.Accept()
				if err != nil {
					return
				}
				f.conns.Add(1)
				f.wg.Add(1)
				go func() {
					defer f.wg.Done()
					defer in.Close()
					out, err := net.Dial("tcp", target)
					if err != nil {
						return
					}
					defer out.Close()
					go func() { io.Copy(out, in); out.Close() }()
					io.Copy(in, out)
				}()
			}
		}()
	}
	t.Cleanup(func() {
		for _, ln := range f.lns {
			ln.Close()
		}
		f.wg.Wait()
	})
	return f
}

func (f *forwarder) addrs() []string {
	var out []string
	for _, ln := range f.lns {
		out = append(out, ln.Addr().String())
	}
	return out
}

// A proxy in front of the brokers: once its addresses are advertised,
// every connection a client opens after the bootstrap goes through it.
func TestSetAdvertisedSendsClientsThroughAProxy(t *testing.T) {
	c := twoListeners(t, Config{})
	ext := listenerAddrs(t, c, "EXTERNAL")
	f := newForwarder(t, ext)
	if err := c.SetAdvertised("EXTERNAL", map[int32]string{1: f.addrs()[0], 2: f.addrs()[1], 3: f.addrs()[2]}); err != nil {
		t.Fatal(err)
	}
	if got := listenerAddrs(t, c, "EXTERNAL"); !slices.Equal(got, f.addrs()) {
		t.Fatalf("EXTERNAL advertises %v, want the proxy's %v", got, f.addrs())
	}
	if got := listenerAddrs(t, c, "INTERNAL"); !strings.HasPrefix(got[0], "localhost:") {
		t.Fatalf("INTERNAL changed too: %v", got)
	}
	brokers, _ := metadataBrokers(t, ext[0])
	if slices.Sort(brokers); !slices.Equal(brokers, slices.Sorted(slices.Values(f.addrs()))) {
		t.Fatalf("Metadata brokers %v, want the proxy's %v", brokers, f.addrs())
	}
	if err := c.CreateTopic("p", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	before := f.conns.Load()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.addrs()[0]), kgo.DefaultProduceTopic("p"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 3 {
		r := &kgo.Record{Partition: int32(i), Value: []byte("x")}
		if err := cl.ProduceSync(testContext(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// The leaders of p/0..2 are brokers 1..3: three produce connections
	// plus the bootstrap one, all through the proxy.
	if n := f.conns.Load() - before; n < 3 {
		t.Fatalf("%d connections through the proxy, want at least 3", n)
	}
	for i := range 3 {
		ps, _ := c.Partition("p", int32(i))
		if ps.HighWatermark != 1 {
			t.Fatalf("p/%d HW %d, want 1", i, ps.HighWatermark)
		}
	}
}

func TestSetAdvertisedRefusesBadInput(t *testing.T) {
	c := twoListeners(t, Config{Brokers: 2})
	before := c.Listeners()
	for _, tc := range []struct {
		name  string
		addrs map[int32]string
		want  string
	}{
		{"NOPE", map[int32]string{1: "h:1"}, "unknown listener"},
		{"EXTERNAL", nil, "no addresses"},
		{"EXTERNAL", map[int32]string{3: "h:1"}, "unknown broker 3"},
		{"EXTERNAL", map[int32]string{1: "h:1", 2: "h"}, "not HOST:PORT"},
		{"EXTERNAL", map[int32]string{1: ":1"}, "not HOST:PORT"},
		{"EXTERNAL", map[int32]string{1: "h:0"}, "1-65535"},
		{"EXTERNAL", map[int32]string{1: "h:70000"}, "1-65535"},
	} {
		err := c.SetAdvertised(tc.name, tc.addrs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetAdvertised(%s, %v) = %v, want %q", tc.name, tc.addrs, err, tc.want)
		}
	}
	if !errors.Is(c.SetAdvertised("NOPE", map[int32]string{1: "h:1"}), ErrUnknownListener) {
		t.Error("an unknown listener is not ErrUnknownListener")
	}
	if after := c.Listeners(); !slices.EqualFunc(before, after, func(a, b ListenerState) bool {
		return slices.Equal(a.Brokers, b.Brokers)
	}) {
		t.Fatalf("a refused change changed the listeners: %v -> %v", before, after)
	}
}

func TestListenerConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		ls    []Listener
		await string
		want  string
	}{
		{[]Listener{{Name: "EXTERNAL", Listen: "127.0.0.1:0"}}, "", "no security protocol"},
		{[]Listener{{Name: "A", SecurityProtocol: "SASL", Listen: "127.0.0.1:0"}}, "", "unknown security protocol"},
		{[]Listener{{Name: "A", SecurityProtocol: "TLS", Listen: "127.0.0.1:0"}}, "", "unknown security protocol"},
		{[]Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}, {Name: "PLAINTEXT", Listen: "127.0.0.1:0"}}, "", "listed twice"},
		{[]Listener{{Name: "A", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:9092"}, {Name: "B", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:9094"}}, "", "both use port 9094"},
		{[]Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1"}}, "", "address"},
		{[]Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:65535"}}, "", "bad port"},
		{[]Listener{{Name: "PLAINTEXT", Listen: "127.0.0.1:0"}}, "EXTERNAL", `no listener named "EXTERNAL"`},
	} {
		_, err := NewCluster(Config{Listeners: tc.ls, AwaitAdvertised: tc.await})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewCluster(%+v, await %q) = %v, want %q", tc.ls, tc.await, err, tc.want)
		}
	}
}

func TestDescribeCluster(t *testing.T) {
	c := NewTestCluster(t, Config{ClusterID: "dc"})
	req := func(version int16, endpoint int8, fenced, ops bool) *kmsg.DescribeClusterResponse {
		r := kmsg.NewPtrDescribeClusterRequest()
		r.Version, r.EndpointType, r.IncludeFencedBrokers, r.IncludeClusterAuthorizedOperations = version, endpoint, fenced, ops
		return callHandler[*kmsg.DescribeClusterResponse](t, c, 2, r)
	}
	resp := req(2, 1, false, true)
	if resp.ErrorCode != 0 || resp.ClusterID != "dc" || resp.ControllerID != 1 || len(resp.Brokers) != 3 || resp.ClusterAuthorizedOperations != authorizer.SupportedOperations(authorizer.ResourceCluster) || resp.EndpointType != 1 {
		t.Fatalf("DescribeCluster v2: %+v", resp)
	}
	if resp := req(1, 1, false, false); resp.ClusterAuthorizedOperations != -2147483648 {
		t.Fatalf("operations not asked for: %d, want Kafka's minimum int32", resp.ClusterAuthorizedOperations)
	}
	for _, tc := range []struct {
		version  int16
		endpoint int8
		code     int16
	}{{1, 2, 114}, {2, 7, 115}} { // v0 has no endpoint type: brokers
		if resp := req(tc.version, tc.endpoint, false, false); resp.ErrorCode != tc.code || resp.ErrorMessage == nil || len(resp.Brokers) != 0 {
			t.Errorf("v%d endpoint type %d: code %d, want %d", tc.version, tc.endpoint, resp.ErrorCode, tc.code)
		}
	}

	// Broker 1 stopped cleanly is fenced: absent, unless asked for, and
	// then marked; the controller moves to broker 2.
	if err := c.StopBroker(1, StopClean); err != nil {
		t.Fatal(err)
	}
	if resp := req(2, 1, false, false); len(resp.Brokers) != 2 || resp.Brokers[0].NodeID != 2 || resp.ControllerID != 2 {
		t.Fatalf("with broker 1 fenced: %+v", resp.Brokers)
	}
	resp = req(2, 1, true, false)
	if len(resp.Brokers) != 3 || resp.Brokers[0].NodeID != 1 || !resp.Brokers[0].IsFenced || resp.Brokers[1].IsFenced {
		t.Fatalf("fenced brokers included: %+v", resp.Brokers)
	}
}
