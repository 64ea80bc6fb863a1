package server

import (
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The clients in these tests connect over PLAINTEXT, so their principal is
// User:ANONYMOUS: the ACLs name it.
const anon = "User:ANONYMOUS"

func grant(rt authorizer.ResourceType, name string, ops ...authorizer.Operation) []authorizer.ACL {
	var out []authorizer.ACL
	for _, op := range ops {
		out = append(out, authorizer.ACL{ResourceType: rt, Name: name, Pattern: authorizer.PatternLiteral,
			Principal: anon, Host: "*", Operation: op, Permission: authorizer.PermissionAllow})
	}
	return out
}

func mustGrant(t *testing.T, c *Cluster, acls ...[]authorizer.ACL) {
	t.Helper()
	for _, a := range acls {
		if err := c.CreateACLs(a...); err != nil {
			t.Fatal(err)
		}
	}
}

func aclCluster(t *testing.T, cfg Config) *Cluster {
	cfg.Authorizer = true
	if cfg.Brokers == 0 {
		cfg.Brokers = 1
	}
	return NewTestCluster(t, cfg)
}

func TestACLProduceDenied(t *testing.T) {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	// DESCRIBE lets the client find the topic; WRITE on another topic lets
	// the idempotent producer get an id (Kafka's KIP-679 rule).
	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpDescribe), grant(authorizer.ResourceTopic, "other", authorizer.OpWrite))
	cl := newClient(t, c, kgo.RecordRetries(1))
	err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce without WRITE: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	if leo := c.State().Topics[0].Partitions[0].Replicas[0].LogEndOffset; leo != 0 {
		t.Fatalf("a denied produce appended: LEO %d", leo)
	}

	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpWrite))
	cl2 := newClient(t, c)
	r, err := cl2.ProduceSync(testContext(t), &kgo.Record{Topic: "t", Value: []byte("v")}).First()
	if err != nil || r.Offset != 0 {
		t.Fatalf("produce with WRITE: offset %v, %v", r, err)
	}
}

func TestACLIdempotentProducerNeedsWriteSomewhere(t *testing.T) {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpDescribe))
	cl := newClient(t, c, kgo.RecordRetries(1))
	err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("idempotent produce with no WRITE and no IDEMPOTENT_WRITE: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
	mustGrant(t, c, grant(authorizer.ResourceCluster, authorizer.ClusterName, authorizer.OpIdempotentWrite))
	resp, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(testContext(t), newClient(t, c))
	if err != nil || resp.ErrorCode != 0 || resp.ProducerID < 0 {
		t.Fatalf("InitProducerId with IDEMPOTENT_WRITE: %+v %v", resp, err)
	}
}

func TestACLConsumeDenied(t *testing.T) {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpWrite))
	if err := newClient(t, c).ProduceSync(testContext(t), &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// WRITE implies DESCRIBE, so the consumer sees the topic, but not READ.
	cl := newClient(t, c, kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var fetchErr error
	waitFor(t, 10*time.Second, "the fetch error", func() bool {
		cl.PollRecords(testContext(t), 10).EachError(func(_ string, _ int32, err error) { fetchErr = err })
		return fetchErr != nil
	})
	if !errors.Is(fetchErr, kerr.TopicAuthorizationFailed) {
		t.Fatalf("consume without READ: %v, want TOPIC_AUTHORIZATION_FAILED", fetchErr)
	}

	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpRead))
	cl2 := newClient(t, c, kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cl2.PollRecords(testContext(t), 1)
	if err := fs.Err(); err != nil || len(fs.Records()) != 1 || string(fs.Records()[0].Value) != "v" {
		t.Fatalf("consume with READ: %v %v", fs.Records(), err)
	}
}

func TestACLGroupJoinDenied(t *testing.T) {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	// The group may be found (DESCRIBE) but not joined (READ).
	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpRead), grant(authorizer.ResourceGroup, "g", authorizer.OpDescribe))
	cl := newClient(t, c, kgo.ConsumeTopics("t"), kgo.ConsumerGroup("g"))
	var joinErr error
	waitFor(t, 10*time.Second, "the group error", func() bool {
		cl.PollRecords(testContext(t), 10).EachError(func(_ string, _ int32, err error) { joinErr = err })
		return joinErr != nil
	})
	if !errors.Is(joinErr, kerr.GroupAuthorizationFailed) {
		t.Fatalf("join without READ on the group: %v, want GROUP_AUTHORIZATION_FAILED", joinErr)
	}
	if g, ok := c.Group("g"); ok && len(g.Members) > 0 {
		t.Fatalf("a denied member joined: %+v", g)
	}

	// Without even DESCRIBE, FindCoordinator refuses.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "h"
	resp, err := fc.RequestWith(testContext(t), newClient(t, c))
	if err != nil || resp.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("FindCoordinator without DESCRIBE on the group: %+v %v", resp, err)
	}

	mustGrant(t, c, grant(authorizer.ResourceGroup, "g", authorizer.OpRead))
	cl2 := newClient(t, c, kgo.ConsumeTopics("t"), kgo.ConsumerGroup("g"))
	ctx := testContext(t)
	if err := newClient(t, c, kgo.DisableIdempotentWrite()).ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce with READ only: %v", err)
	}
	mustGrant(t, c, grant(authorizer.ResourceTopic, "t", authorizer.OpWrite))
	if err := newClient(t, c).ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fs := cl2.PollRecords(ctx, 1)
	if err := fs.Err(); err != nil || len(fs.Records()) != 1 {
		t.Fatalf("group consume with READ on the group: %v %v", fs.Records(), err)
	}
	if err := cl2.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit with READ on group and topic: %v", err)
	}
}

func TestACLTopicCreation(t *testing.T) {
	c := aclCluster(t, Config{})
	mustGrant(t, c, []authorizer.ACL{{ResourceType: authorizer.ResourceTopic, Name: "team.", Pattern: authorizer.PatternPrefixed,
		Principal: anon, Host: "*", Operation: authorizer.OpCreate, Permission: authorizer.PermissionAllow}})
	adm := kadm.NewClient(newClient(t, c))
	res, err := adm.CreateTopics(testContext(t), 1, 1, nil, "team.a", "other")
	if err != nil {
		t.Fatal(err)
	}
	if r := res["team.a"]; r.Err != nil {
		t.Fatalf("create under the granted prefix: %v", r.Err)
	}
	if r := res["other"]; !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("create without CREATE: %v, want TOPIC_AUTHORIZATION_FAILED", r.Err)
	}
	if c.topic("other") != nil {
		t.Fatal("the denied topic exists")
	}

	// CREATE on the cluster allows any name; DELETE is separate.
	mustGrant(t, c, grant(authorizer.ResourceCluster, authorizer.ClusterName, authorizer.OpCreate))
	if res, err := adm.CreateTopics(testContext(t), 1, 1, nil, "other"); err != nil || res["other"].Err != nil {
		t.Fatalf("create with CREATE on the cluster: %v %v", res, err)
	}
	del, err := adm.DeleteTopics(testContext(t), "other")
	if err != nil || !errors.Is(del["other"].Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("delete without DELETE: %v %v", del, err)
	}
}

func TestACLMetadataHidesTopics(t *testing.T) {
	c := aclCluster(t, Config{})
	for _, name := range []string{"visible", "hidden"} {
		if err := c.CreateTopic(name, 1, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustGrant(t, c, grant(authorizer.ResourceTopic, "visible", authorizer.OpRead))
	cl := newClient(t, c)
	ctx := testContext(t)

	all := kmsg.NewPtrMetadataRequest()
	all.IncludeTopicAuthorizedOperations = true
	resp, err := all.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || *resp.Topics[0].Topic != "visible" {
		t.Fatalf("all topics: %+v, want only the one it may describe", resp.Topics)
	}
	if got, want := resp.Topics[0].AuthorizedOperations, int32(1<<authorizer.OpRead|1<<authorizer.OpDescribe); got != want {
		t.Fatalf("authorized operations %b, want READ|DESCRIBE %b", got, want)
	}

	some := kmsg.NewPtrMetadataRequest()
	some.AllowAutoTopicCreation = true
	for _, name := range []string{"hidden", "missing", "visible"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		some.Topics = append(some.Topics, rt)
	}
	resp, err = some.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int16{}
	for _, rt := range resp.Topics {
		codes[*rt.Topic] = rt.ErrorCode
		if rt.ErrorCode != 0 && len(rt.Partitions) != 0 {
			t.Fatalf("%s: partitions shown with error %d", *rt.Topic, rt.ErrorCode)
		}
	}
	if codes["hidden"] != errTopicAuth || codes["missing"] != errTopicAuth || codes["visible"] != 0 {
		t.Fatalf("topics by name: %v", codes)
	}
	if c.topic("missing") != nil {
		t.Fatal("auto-created without CREATE")
	}

	// DESCRIBE and CREATE on the topic allow its auto-creation.
	mustGrant(t, c, grant(authorizer.ResourceTopic, "missing", authorizer.OpDescribe, authorizer.OpCreate))
	if resp, err = some.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if c.topic("missing") == nil {
		t.Fatalf("not auto-created with CREATE: %+v", resp.Topics)
	}

	// A listing through kadm, as tools see it (a new client: kadm would
	// answer from this one's metadata cache).
	td, err := kadm.NewClient(newClient(t, c)).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := td.Names(); !slices.Equal(names, []string{"missing", "visible"}) {
		t.Fatalf("kadm ListTopics: %v", names)
	}
}

func TestACLSuperUserAndDeny(t *testing.T) {
	c := aclCluster(t, Config{SuperUsers: []string{anon}})
	// DENY everything to everyone: a super user is still allowed.
	mustGrant(t, c, []authorizer.ACL{{ResourceType: authorizer.ResourceTopic, Name: "*", Pattern: authorizer.PatternLiteral,
		Principal: authorizer.WildcardPrincipal, Host: "*", Operation: authorizer.OpAll, Permission: authorizer.PermissionDeny}})
	cl := newClient(t, c, kgo.ConsumeTopics("t"), kgo.ConsumerGroup("g"), kgo.AllowAutoTopicCreation())
	ctx := testContext(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("super user produce: %v", err)
	}
	if fs := cl.PollRecords(ctx, 1); fs.Err() != nil || len(fs.Records()) != 1 {
		t.Fatalf("super user consume: %v", fs.Err())
	}

	// The same DENY without super users.
	c2 := aclCluster(t, Config{AllowEveryoneIfNoACLFound: true})
	if err := c2.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := c2.CreateTopic("u", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	mustGrant(t, c2, grant(authorizer.ResourceTopic, "t", authorizer.OpAll), []authorizer.ACL{{ResourceType: authorizer.ResourceTopic, Name: "t",
		Pattern: authorizer.PatternLiteral, Principal: authorizer.WildcardPrincipal, Host: "*", Operation: authorizer.OpWrite, Permission: authorizer.PermissionDeny}})
	cl2 := newClient(t, c2, kgo.RecordRetries(1))
	if err := cl2.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("DENY beats ALLOW ALL: %v", err)
	}
	// allow.everyone.if.no.acl.found: u has no ACLs at all.
	if err := newClient(t, c2).ProduceSync(ctx, &kgo.Record{Topic: "u", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("a topic without ACLs under allow.everyone.if.no.acl.found: %v", err)
	}
}

// TestACLHostMatch: a binding for another host does not apply to a client
// on loopback; one for 127.0.0.1 does.
func TestACLHostMatch(t *testing.T) {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	from := func(host string) authorizer.ACL {
		return authorizer.ACL{ResourceType: authorizer.ResourceTopic, Name: "t", Pattern: authorizer.PatternLiteral,
			Principal: anon, Host: host, Operation: authorizer.OpWrite, Permission: authorizer.PermissionAllow}
	}
	mustGrant(t, c, []authorizer.ACL{from("10.9.9.9")})
	cl := newClient(t, c, kgo.DisableIdempotentWrite(), kgo.RecordRetries(1))
	ctx := testContext(t)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce with WRITE granted to another host: %v", err)
	}
	mustGrant(t, c, []authorizer.ACL{from("127.0.0.1")})
	if err := newClient(t, c, kgo.DisableIdempotentWrite()).ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce with WRITE granted to 127.0.0.1: %v", err)
	}
}

// TestACLFaultsFireFirst: fault rules act before authorization, so a fault
// can be injected for a client that holds no ACLs.
func TestACLFaultsFireFirst(t *testing.T) {
	c := aclCluster(t, Config{})
	if _, err := c.InjectFault(Fault{API: "CreateTopics", Error: "POLICY_VIOLATION", Count: 1}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, c))
	res, err := adm.CreateTopics(testContext(t), 1, 1, nil, "t")
	if err != nil || !errors.Is(res["t"].Err, kerr.PolicyViolation) {
		t.Fatalf("faulted CreateTopics: %+v %v, want the fault's POLICY_VIOLATION", res, err)
	}
	res, err = adm.CreateTopics(testContext(t), 1, 1, nil, "t")
	if err != nil || !errors.Is(res["t"].Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("CreateTopics once the fault is spent: %+v %v", res, err)
	}
}

// TestACLCreateTopicsHidesConfigs: CREATE without DESCRIBE_CONFIGS creates
// the topic but answers its configs with TOPIC_AUTHORIZATION_FAILED and its
// partition count and replication factor as -1, as Kafka 4.4 does.
func TestACLCreateTopicsHidesConfigs(t *testing.T) {
	c := aclCluster(t, Config{})
	mustGrant(t, c, grant(authorizer.ResourceTopic, "a", authorizer.OpCreate), grant(authorizer.ResourceTopic, "b", authorizer.OpCreate, authorizer.OpDescribeConfigs))
	req := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range []string{"a", "b"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(testContext(t), newClient(t, c))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range resp.Topics {
		hidden := st.Topic == "a"
		if st.ErrorCode != 0 || (st.ConfigErrorCode == errTopicAuth) != hidden || (len(st.Configs) == 0) != hidden ||
			(st.NumPartitions == -1) != hidden || (st.ReplicationFactor == -1) != hidden {
			t.Fatalf("%s: error %d, config error %d, %d configs, %d partitions, rf %d", st.Topic, st.ErrorCode, st.ConfigErrorCode,
				len(st.Configs), st.NumPartitions, st.ReplicationFactor)
		}
	}
}

// TestACLDescribeEveryScramUserDeniedCloses: a principal without DESCRIBE on
// the cluster asking for every user's SCRAM credentials (null Users) gets
// the connection closed, as Kafka 4.4's broker does; naming users gets
// CLUSTER_AUTHORIZATION_FAILED per user.
func TestACLDescribeEveryScramUserDeniedCloses(t *testing.T) {
	c := aclCluster(t, Config{})
	nc, err := net.Dial("tcp", c.Bootstrap()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	named := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	named.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "alice"}}
	resp := named.ResponseKind()
	rawRoundTrip(t, nc, named, resp)
	if r := resp.(*kmsg.DescribeUserSCRAMCredentialsResponse); r.ErrorCode != errClusterAuth || len(r.Results) != 1 || r.Results[0].ErrorCode != errClusterAuth {
		t.Fatalf("named user: %+v", r)
	}
	every := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest() // Users null
	every.SetVersion(0)
	if _, err := nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, every, 2)); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatalf("every user: read %d bytes, want the connection closed", n)
	}
}

// TestACLOffsetFetchDeniedGroupListsNothing: before groups (v2-7) a group
// the principal may not DESCRIBE is answered GROUP_AUTHORIZATION_FAILED with
// no partitions, as Kafka does; v1 lists each asked partition with the error.
func TestACLOffsetFetchDeniedGroupListsNothing(t *testing.T) {
	c := aclCluster(t, Config{})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version    int16
		partitions int
	}{{1, 1}, {2, 0}, {7, 0}} {
		v := kversion.Stable()
		v.SetMaxKeyVersion(9, tc.version)
		cl := newClient(t, c, kgo.MaxVersions(v))
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = "g"
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "t", []int32{0}
		req.Topics = append(req.Topics, rt)
		// To broker 1 directly: the client would first look for g's
		// coordinator, which is denied too.
		kresp, err := cl.Broker(1).Request(testContext(t), req)
		if err != nil {
			t.Fatal(err)
		}
		resp := kresp.(*kmsg.OffsetFetchResponse)
		n, code := 0, resp.ErrorCode
		for _, t := range resp.Topics {
			n += len(t.Partitions)
			if tc.version < 2 {
				code = t.Partitions[0].ErrorCode
			}
		}
		if code != errGroupAuth || n != tc.partitions {
			t.Errorf("v%d: code %d, %d partitions listed; want GROUP_AUTHORIZATION_FAILED and %d", tc.version, code, n, tc.partitions)
		}
	}
}
