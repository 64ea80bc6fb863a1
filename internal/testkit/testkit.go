// Package testkit holds the helpers the tests of server and control share:
// waiting on conditions, clients on a cluster, raw group requests and
// events in brief. It uses only server's exported shapes (a cluster is
// anything with Bootstrap), so server's own tests can use it too.
package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/api"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Cluster is what a client needs of a cluster: its bootstrap addresses.
type Cluster interface{ Bootstrap() []string }

// WaitFor polls cond until it holds or timeout passes, then fails the test.
// Tests wait on conditions, never on sleeps.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronisation
	}
}

// Context is a context the test cancels when it ends, bounded at 60 s.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// NewClient returns a franz-go client on c, closed at the end of the test.
func NewClient(t testing.TB, c Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Must fails the test on err.
func Must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// EventLine is an event in brief, for exact comparisons of a story:
// type, then broker/leader, offsets, ISR and reason where they apply.
func EventLine(e api.Event) string {
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

// ContainsEvent says whether evs has an event of typ with detail.
func ContainsEvent(evs []api.Event, typ api.EventType, detail string) bool {
	for _, e := range evs {
		if e.Type == typ && e.Detail == detail {
			return true
		}
	}
	return false
}

// TxnLine is a transaction event in brief: type, states, partitions,
// producer epoch and cause.
func TxnLine(e api.Event) string {
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

// RunTxn produces values in one transaction and commits or aborts it.
func RunTxn(t *testing.T, cl *kgo.Client, commit bool, values ...string) {
	t.Helper()
	ctx := Context(t)
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

// FirstRequestErr is the error of one Metadata request, without retries.
func FirstRequestErr(t *testing.T, opts ...kgo.Opt) error {
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

// JoinRequest is a classic JoinGroup of a consumer subscribed to topics.
func JoinRequest(group, memberID string, session time.Duration, protocol string, topics ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID = group, memberID
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = int32(session.Milliseconds()), 5000
	req.ProtocolType = "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: protocol, Metadata: ConsumerMetadata(topics...)}}
	return req
}

// MustJoin sends req, again with the member id MEMBER_ID_REQUIRED gave,
// and fails the test on any other error.
func MustJoin(t *testing.T, ctx context.Context, cl *kgo.Client, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
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

// WantCode fails the test unless got is want (nil: no error).
func WantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	wantCode := int16(0)
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), kerr.ErrorForCode(wantCode))
	}
}

// ConsumerMetadata is a consumer protocol subscription to topics.
func ConsumerMetadata(topics ...string) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Topics = topics
	return md.AppendTo(nil)
}

// ConsumerAssignment is a consumer protocol assignment of partitions of topic.
func ConsumerAssignment(topic string, partitions ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: partitions}}
	return a.AppendTo(nil)
}
