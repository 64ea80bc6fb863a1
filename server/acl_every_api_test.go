package server

// Every API key fakekafka serves, checked against the ACL Kafka checks for
// it: a principal without the binding gets Kafka's authorization error
// where Kafka puts it (top level, per resource or per partition), or does
// not see what it may not describe; once granted, no authorization error
// is left. The requests go through franz-go over TCP, each to broker 1 as
// sent (no client-side routing or retries in between).

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// leftOut is what a case's code answers when the resource it looks for is
// missing from the answer: the way list APIs deny (Kafka hides what a
// principal may not DESCRIBE rather than failing the request).
const leftOut int16 = -1

type aclCase struct {
	name string
	key  int16
	// want is the error a principal with only base gets; 0 for an API that
	// needs no ACL at all.
	want int16
	// base is granted first; grants then lets the request through.
	base, grants []authorizer.ACL
	// setup prepares state with the given ACLs granted only meanwhile.
	setup func(e *aclEnv, t *testing.T)
	// pin is the highest version to send (-1: the newest both know).
	pin  int16
	req  func(e *aclEnv) kmsg.Request
	code func(r kmsg.Response) int16
}

// aclEnv is a case's cluster: one broker, topic "t" with one partition.
type aclEnv struct {
	t       *testing.T
	c       *Cluster
	topicID [16]byte
}

// isAuthErr says whether code is one of Kafka's authorization failures.
func isAuthErr(code int16) bool {
	return code == errTopicAuth || code == errGroupAuth || code == errClusterAuth || code == errTxnAuth || code == leftOut
}

func TestACLEveryAPI(t *testing.T) {
	for _, tc := range aclCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newACLEnv(t)
			if tc.setup != nil {
				tc.setup(e, t)
			}
			mustGrant(t, e.c, tc.base)
			cl := e.client(t, tc.key, tc.pin)
			send := func() kmsg.Response {
				t.Helper()
				if tc.key == 71 || tc.key == 72 { // unadvertised: clients will not send them
					return e.rawRequest(t, tc.req(e))
				}
				resp, err := cl.Broker(1).Request(testContext(t), tc.req(e))
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			if tc.want == 0 {
				if got := tc.code(send()); got != 0 {
					t.Fatalf("without any ACL: code %d, want 0 (%s needs no ACL)", got, tc.name)
				}
				return
			}
			if got := tc.code(send()); got != tc.want {
				t.Fatalf("denied: code %d, want %d", got, tc.want)
			}
			mustGrant(t, e.c, tc.grants)
			if got := tc.code(send()); isAuthErr(got) {
				t.Fatalf("granted %v: still code %d", tc.grants, got)
			}
		})
	}
}

// TestACLEveryAPICovered: a new API key must come with its row above.
func TestACLEveryAPICovered(t *testing.T) {
	covered := map[int16]bool{17: true, 18: true, 36: true} // authentication itself: no ACL, tested in security tests
	for _, tc := range aclCases() {
		covered[tc.key] = true
	}
	for _, r := range slices.Concat(protocol.Supported, protocol.Unadvertised) {
		if !covered[r.Key] {
			t.Errorf("API %s (key %d) has no case in aclCases", r.Name(), r.Key)
		}
	}
}

func newACLEnv(t *testing.T) *aclEnv {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	return &aclEnv{t: t, c: c, topicID: c.topic("t").id}
}

// client is a franz-go client that knows broker 1, sending key at no
// higher version than pin (if not -1).
func (e *aclEnv) client(t *testing.T, key, pin int16) *kgo.Client {
	t.Helper()
	var opts []kgo.Opt
	if pin >= 0 {
		v := kversion.Stable()
		v.SetMaxKeyVersion(key, pin)
		opts = append(opts, kgo.MaxVersions(v))
	}
	cl := newClient(t, e.c, opts...)
	// A Metadata request (no topics) teaches the client broker 1.
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testContext(t), cl); err != nil {
		t.Fatal(err)
	}
	return cl
}

// rawRequest sends req on its own connection, for the keys ApiVersions
// does not list.
func (e *aclEnv) rawRequest(t *testing.T, req kmsg.Request) kmsg.Response {
	t.Helper()
	nc, err := net.Dial("tcp", e.c.Bootstrap()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	resp := req.ResponseKind()
	rawRoundTrip(t, nc, req, resp)
	return resp
}

// withACLs runs f with acls granted, then removes them again.
func (e *aclEnv) withACLs(t *testing.T, acls []authorizer.ACL, f func()) {
	t.Helper()
	mustGrant(t, e.c, acls)
	f()
	filters := make([]authorizer.Filter, len(acls))
	for i, a := range acls {
		filters[i] = exactFilter(a)
	}
	if _, err := e.c.DeleteACLs(filters...); err != nil {
		t.Fatal(err)
	}
}

// commitOffset creates group g (empty, with an offset for t/0).
func (e *aclEnv) commitOffset(t *testing.T) {
	t.Helper()
	e.withACLs(t, slices.Concat(grant(authorizer.ResourceGroup, "g", authorizer.OpRead), grant(authorizer.ResourceTopic, "t", authorizer.OpRead)), func() {
		cl := e.client(t, 8, -1)
		resp, err := cl.Broker(1).Request(testContext(t), withTopicIDs(e.c, offsetCommitReq()))
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("setup commit: code %d", code)
		}
	})
}

// beginTxn gives transactional id x a producer id.
func (e *aclEnv) beginTxn(t *testing.T) {
	t.Helper()
	e.withACLs(t, grant(authorizer.ResourceTransactionalID, "x", authorizer.OpWrite), func() {
		cl := e.client(t, 22, -1)
		waitFor(t, defaultWait, "InitProducerId for x", func() bool {
			resp, err := cl.Broker(1).Request(testContext(t), initProducerIDReq(kmsg.StringPtr("x")))
			return err == nil && resp.(*kmsg.InitProducerIDResponse).ErrorCode == 0
		})
	})
}

const defaultWait = 10 * time.Second

func offsetCommitReq() *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = "g", -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset, rp.LeaderEpoch = 0, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func initProducerIDReq(id *string) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = id, 10000
	return req
}

// TestACLDescribeTransactionsHidesTopics: DescribeTransactions leaves out
// the partitions of topics the principal may not DESCRIBE, as Kafka does.
func TestACLDescribeTransactionsHidesTopics(t *testing.T) {
	e := newACLEnv(t)
	if err := e.c.CreateTopic("u", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	writeU := grant(authorizer.ResourceTopic, "u", authorizer.OpWrite)
	mustGrant(t, e.c, onTxn(opWrite, opDescribe), onTopic(opWrite), writeU)
	cl := newClient(t, e.c, kgo.TransactionalID("x"))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"t", "u"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	describe := func() []string {
		t.Helper()
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{"x"}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.TransactionStates[0].ErrorCode != 0 {
			t.Fatalf("DescribeTransactions: %+v %v", resp, err)
		}
		var out []string
		for _, st := range resp.TransactionStates[0].Topics {
			out = append(out, st.Topic)
		}
		slices.Sort(out)
		return out
	}
	if got := describe(); !slices.Equal(got, []string{"t", "u"}) {
		t.Fatalf("with both topics described: %v", got)
	}
	if _, err := e.c.DeleteACLs(exactFilter(writeU[0])); err != nil {
		t.Fatal(err)
	}
	if got := describe(); !slices.Equal(got, []string{"t"}) {
		t.Fatalf("without DESCRIBE on u: %v, want only t", got)
	}
}

// TestACLConsumerGroupDescribeNeedsTopics: since Kafka 4.0 (KAFKA-18813) a
// KIP-848 group whose members are assigned a topic the principal may not
// DESCRIBE is described only as TOPIC_AUTHORIZATION_FAILED.
func TestACLConsumerGroupDescribeNeedsTopics(t *testing.T) {
	e := newACLEnv(t)
	ctx := testContext(t)
	describeT := onTopic(opDescribe)
	mustGrant(t, e.c, onGroup(opRead), describeT)
	cl := e.client(t, 68, -1)
	waitFor(t, defaultWait, "a member assigned t/0", func() bool {
		resp, err := cl.Broker(1).Request(ctx, consumerHeartbeatReq(e))
		if err != nil {
			t.Fatal(err)
		}
		hb := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
		return hb.ErrorCode == 0 && hb.Assignment != nil && len(hb.Assignment.Topics) == 1
	})
	describe := func() kmsg.ConsumerGroupDescribeResponseGroup {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"g"}
		resp, err := cl.Broker(1).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
	}
	if _, err := e.c.DeleteACLs(exactFilter(describeT[0])); err != nil {
		t.Fatal(err)
	}
	if g := describe(); g.ErrorCode != errTopicAuth || len(g.Members) != 0 {
		t.Fatalf("without DESCRIBE on t: %+v, want TOPIC_AUTHORIZATION_FAILED and nothing else", g)
	}
	mustGrant(t, e.c, describeT)
	if g := describe(); g.ErrorCode != 0 || len(g.Members) != 1 || g.Members[0].Assignment.TopicPartitions[0].Topic != "t" {
		t.Fatalf("with DESCRIBE on t: %+v", g)
	}
}

// TestACLRegexSubscriptionNeedsDescribe: a KIP-848 regex subscription
// resolves only to topics the subscribing principal may DESCRIBE (Kafka
// 4.0, KAFKA-18813), so it is never assigned a topic it cannot see.
func TestACLRegexSubscriptionNeedsDescribe(t *testing.T) {
	e := newACLEnv(t)
	if err := e.c.CreateTopic("tu", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	mustGrant(t, e.c, onTopic(opDescribe), grant(authorizer.ResourceGroup, "g", opRead), grant(authorizer.ResourceGroup, "g2", opRead))
	cl := e.client(t, 68, -1)
	assigned := func(group string) []string {
		t.Helper()
		var names []string
		waitFor(t, defaultWait, "an assignment for "+group, func() bool {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, "authz-regex-member-01", 10000
			req.SubscribedTopicRegex, req.Topics = kmsg.StringPtr("t.*"), []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			resp, err := cl.Broker(1).Request(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			hb := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
			if hb.ErrorCode != 0 || hb.Assignment == nil || len(hb.Assignment.Topics) == 0 {
				return false
			}
			names = names[:0]
			for _, at := range hb.Assignment.Topics {
				names = append(names, e.c.topicByID(at.TopicID).name)
			}
			slices.Sort(names)
			return true
		})
		return names
	}
	if got := assigned("g"); !slices.Equal(got, []string{"t"}) {
		t.Fatalf("regex t.* without DESCRIBE on tu: assigned %v, want [t]", got)
	}
	mustGrant(t, e.c, grant(authorizer.ResourceTopic, "tu", opDescribe))
	if got := assigned("g2"); !slices.Equal(got, []string{"t", "tu"}) {
		t.Fatalf("regex t.* with DESCRIBE on both: assigned %v", got)
	}
}
