package control

// Helpers of the control API's tests: clusters, clients and event stories,
// written against server's exported API as the handler itself is. Most are
// twins of helpers of package control's tests.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// waitFor polls cond until it holds or timeout passes, then fails the test.
// Tests wait on conditions, never on sleeps.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronisation
	}
}

// newClient returns a franz-go client on c, closed at the end of the test.
func newClient(t testing.TB, c *server.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func scMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func replicaIDs(ps api.PartitionState) []int32 {
	var out []int32
	for _, r := range ps.Replicas {
		out = append(out, r.Broker)
	}
	return out
}

// evLine is an event in brief, for exact comparisons of a story:
// type, then broker/leader, offsets, ISR and reason where they apply.
func evLine(e api.Event) string {
	var b strings.Builder
	b.WriteString(string(e.Type))
	if e.Topic != "" && e.Partition >= 0 {
		fmt.Fprintf(&b, " %s/%d", e.Topic, e.Partition)
	}
	switch e.Type {
	case api.EventLeaderElected, api.EventPartitionLeaderless:
		fmt.Fprintf(&b, " leader %d (was %d) epoch %d isr %v", e.Leader, e.OldLeader, e.Epoch, e.ISR)
		if e.Unclean {
			b.WriteString(" unclean")
		}
	case api.EventLogTruncated, api.EventRecordsLost:
		fmt.Fprintf(&b, " broker %d %d->%d", e.Broker, e.From, e.To)
	case api.EventISRShrunk, api.EventISRExpanded:
		fmt.Fprintf(&b, " broker %d isr %v", e.Broker, e.ISR)
	default:
		if e.Broker >= 0 {
			fmt.Fprintf(&b, " %d", e.Broker)
		}
		if e.Mode != "" {
			fmt.Fprintf(&b, " %s", e.Mode)
		}
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	return b.String()
}

// lastSeq is the newest event's sequence number.
func evLastSeq(c *server.Cluster) uint64 {
	evs := c.Events(0)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

func containsEvent(evs []api.Event, typ api.EventType, detail string) bool {
	for _, e := range evs {
		if e.Type == typ && e.Detail == detail {
			return true
		}
	}
	return false
}

// txnLine is a transaction event in brief: type, states, partitions,
// producer epoch and cause.
func txnLine(e api.Event) string {
	var b strings.Builder
	b.WriteString(string(e.Type))
	if e.PreviousState != "" || e.State != "" {
		fmt.Fprintf(&b, " %s->%s", e.PreviousState, e.State)
	}
	if e.Topic != "" {
		fmt.Fprintf(&b, " %s/%d", e.Topic, e.Partition)
	}
	for _, tp := range e.Partitions {
		fmt.Fprintf(&b, " %s/%d", tp.Topic, tp.Partition)
	}
	fmt.Fprintf(&b, " epoch %d", e.ProducerEpoch)
	if e.Reason != "" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	return b.String()
}

// txnStory is the events of transactional id after since, in brief.
func txnStory(c *server.Cluster, since uint64, id string) []string {
	var out []string
	for _, e := range c.Events(since) {
		if e.TransactionalID == id {
			out = append(out, txnLine(e))
		}
	}
	return out
}

func checkTxnStory(t *testing.T, c *server.Cluster, since uint64, id string, want ...string) {
	t.Helper()
	if got := txnStory(c, since, id); !slices.Equal(got, want) {
		t.Errorf("events of %s:\n got %s\nwant %s", id, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func aclCluster(t *testing.T, cfg server.Config) *server.Cluster {
	cfg.Authorizer = true
	if cfg.Brokers == 0 {
		cfg.Brokers = 1
	}
	return server.NewTestCluster(t, cfg)
}

// clockStart is where the manual clocks of these tests start.
var clockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// manualCluster starts a cluster whose time moves only when the test
// advances it.
func manualCluster(t *testing.T, cfg server.Config) *server.Cluster {
	t.Helper()
	cfg.Clock = clock.NewManual(clockStart)
	return server.NewTestCluster(t, cfg)
}

// twoListeners is a cluster with an EXTERNAL listener advertised as
// 127.0.0.1 and an INTERNAL one advertised as localhost, so a client can
// tell from Metadata which listener answered.
func twoListeners(t *testing.T, cfg server.Config) *server.Cluster {
	cfg.Listeners = []server.Listener{
		{Name: "EXTERNAL", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "INTERNAL", SecurityProtocol: "PLAINTEXT", Listen: "127.0.0.1:0", AdvertisedHost: "localhost"},
	}
	return server.NewTestCluster(t, cfg)
}

// txnCluster is a three-broker cluster with few coordinator shards.
func txnCluster(t *testing.T, cfg server.Config) *server.Cluster {
	t.Helper()
	if cfg.TransactionStatePartitions == 0 {
		cfg.TransactionStatePartitions = 3
	}

	return server.NewTestCluster(t, cfg)
}

// runTxn produces values in one transaction and commits or aborts it.
func runTxn(t *testing.T, cl *kgo.Client, commit bool, values ...string) {
	t.Helper()
	ctx := testContext(t)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end (commit %v): %v", commit, err)
	}
}

// listenerBootstrap is every broker's advertised address on listener name.
func listenerBootstrap(t testing.TB, c *server.Cluster, name string) []string {
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

// securedCluster has a PLAINTEXT, an SSL, a SASL_PLAINTEXT and a SASL_SSL
// listener and the users alice and bob.
func securedCluster(t testing.TB, cfg server.Config) *server.Cluster {
	cfg.Listeners = []server.Listener{
		{Name: "PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "SSL", Listen: "127.0.0.1:0"},
		{Name: "SASL_PLAINTEXT", Listen: "127.0.0.1:0"},
		{Name: "SASL_SSL", Listen: "127.0.0.1:0"},
	}
	if cfg.SASLUsers == nil {
		cfg.SASLUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret"}
	}
	return server.NewTestCluster(t, cfg)
}

// firstRequestErr is the error of one Metadata request, without retries.
func firstRequestErr(t *testing.T, opts ...kgo.Opt) error {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.RequestRetries(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	return err
}

// rawMember is a group member driven by hand.
type rawMember struct {
	cl         *kgo.Client
	group      string
	id         string
	instance   *string
	generation int32
	assignment []byte
}

func rawJoinRequest(group, memberID string, session time.Duration, protocol string, topics ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID = group, memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = int32(session.Milliseconds()), 5000
	req.ProtocolType = "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: protocol, Metadata: consumerMetadata(topics...)}}
	return req
}

func mustJoin(t *testing.T, ctx context.Context, cl *kgo.Client, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	t.Helper()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		req.MemberID = resp.MemberID
		if resp, err = req.RequestWith(ctx, cl); err != nil {
			t.Fatal(err)
		}
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("join %s: %v", req.Group, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp
}

func groupCluster(t *testing.T, cfg server.Config) (*server.Cluster, *kgo.Client, context.Context) {
	t.Helper()
	if cfg.GroupMinSessionTimeout == 0 {
		cfg.GroupMinSessionTimeout = 100 * time.Millisecond
	}
	c := server.NewTestCluster(t, cfg)
	if err := c.CreateTopic("work", 4, 3, nil); err != nil {
		t.Fatal(err)
	}
	return c, newClient(t, c, kgo.ClientID("raw")), testContext(t)
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), kerr.ErrorForCode(wantCode))
	}
}

func consumerMetadata(topics ...string) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Topics = topics
	return md.AppendTo(nil)
}

func consumerAssignment(topic string, partitions ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: partitions}}
	return a.AppendTo(nil)
}

func (m *rawMember) sync(t *testing.T, ctx context.Context, assignments map[string][]byte) (int16, []byte) {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.id, m.instance
	for id, a := range assignments {
		req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: a})
	}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ErrorCode, resp.MemberAssignment
}
