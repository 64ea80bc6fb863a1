package server

// The admin and describe APIs' answers that compat/reference's corpus
// (corpus_admin2_test.go) pinned against Kafka 4.4, through franz-go's kadm
// or raw requests sent to a chosen broker, over TCP.

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// toBroker sends req to broker id and returns the answer (kgo sends it at
// the newest version both sides support).
func toBroker[R kmsg.Response](t *testing.T, cl *kgo.Client, id int32, req kmsg.Request) R {
	t.Helper()
	ctx := testContext(t)
	if _, err := kadm.NewClient(cl).BrokerMetadata(ctx); err != nil { // learn the brokers
		t.Fatal(err)
	}
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		t.Fatalf("%s to broker %d: %v", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp.(R)
}

func TestAdminTopicNameCollisions(t *testing.T) {
	c := NewTestCluster(t, Config{})
	cl := newClient(t, c)
	adm := kadm.NewClient(cl)
	ctx := testContext(t)
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "a.b"); err != nil || r.Err != nil {
		t.Fatalf("a.b: %v %v", err, r.Err)
	}
	for _, tc := range []struct {
		name     string
		validate bool
		err      error
		msg      string
	}{
		{"a_b", false, kerr.InvalidTopicException, "Topic 'a_b' collides with existing topic: a.b"},
		{"a_b", true, kerr.InvalidTopicException, "Topic 'a_b' collides with existing topic: a.b"},
		{"a.b", false, kerr.TopicAlreadyExists, "Topic 'a.b' already exists."}, // the same name exists: checked first
	} {
		create := adm.CreateTopics
		if tc.validate {
			create = adm.ValidateCreateTopics
		}
		rs, err := create(ctx, 1, 1, nil, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if r := rs[tc.name]; !errors.Is(r.Err, tc.err) || r.ErrMessage != tc.msg || r.NumPartitions != -1 {
			t.Errorf("%s (validate only %v): %v %q %d partitions, want %v %q -1", tc.name, tc.validate, r.Err, r.ErrMessage, r.NumPartitions, tc.err, tc.msg)
		}
	}
	// Names in one request collide only with topics that existed before it.
	rs, err := adm.CreateTopics(ctx, 1, 1, nil, "x.y", "x_y")
	if err != nil || rs["x.y"].Err != nil || rs["x_y"].Err != nil {
		t.Fatalf("x.y and x_y in one request: %v %+v", err, rs)
	}
	// Auto-creation and the Go API refuse the collision too.
	m := kmsg.NewPtrMetadataRequest()
	m.AllowAutoTopicCreation = true
	m.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("a_b")}}
	if got := toBroker[*kmsg.MetadataResponse](t, cl, 1, m).Topics[0].ErrorCode; got != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("auto-creating a_b: %s, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(got))
	}
	if err := c.CreateTopic("a_b", 1, 1, nil); !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("Go API a_b: %v", err)
	}
	for _, tp := range c.State().Topics {
		if tp.Name == "a_b" {
			t.Fatal("a_b was created")
		}
	}
}

func TestAdminValidateOnlyAnswers(t *testing.T) {
	c := NewTestCluster(t, Config{})
	adm := kadm.NewClient(newClient(t, c))
	ctx := testContext(t)
	if err := c.CreateTopic("t", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	rs, err := adm.ValidateCreateTopics(ctx, 2, 3, map[string]*string{"retention.ms": kmsg.StringPtr("1000")}, "v")
	if err != nil {
		t.Fatal(err)
	}
	r := rs["v"]
	if r.Err != nil || r.NumPartitions != 2 || r.ReplicationFactor != 3 || r.Configs["retention.ms"].Value == nil ||
		*r.Configs["retention.ms"].Value != "1000" || r.Configs["retention.ms"].Source != kmsg.ConfigSourceDynamicTopicConfig ||
		r.Configs["segment.bytes"].Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("validate-only create: %+v", r)
	}
	if slices.ContainsFunc(c.State().Topics, func(ts TopicState) bool { return ts.Name == "v" }) {
		t.Fatal("a validate-only CreateTopics created the topic")
	}
	ps, err := adm.ValidateUpdatePartitions(ctx, 2, "t")
	if err != nil {
		t.Fatal(err)
	}
	if p := ps["t"]; !errors.Is(p.Err, kerr.InvalidPartitions) || p.ErrMessage != "The topic t currently has 3 partition(s); 2 would not be an increase." {
		t.Errorf("validate-only shrink: %v %q", p.Err, p.ErrMessage)
	}
	as, err := adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "segment.bytes", Value: kmsg.StringPtr("1000")}}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if a := as[0]; !errors.Is(a.Err, kerr.InvalidConfig) || a.ErrMessage != "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576" {
		t.Errorf("validate-only segment.bytes: %v %q", a.Err, a.ErrMessage)
	}
	as, err = adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "retention.ms", Value: kmsg.StringPtr("1")}}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if a := as[0]; !errors.Is(a.Err, kerr.InvalidConfig) || a.ErrMessage != "Can't APPEND to key retention.ms because its type is not LIST." {
		t.Errorf("validate-only APPEND: %v %q", a.Err, a.ErrMessage)
	}
}

// TestAdminConfigMinimums: topic configs Kafka 4.4's LogConfig refuses,
// with its messages (each checked against Kafka by the corpus).
func TestAdminConfigMinimums(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	adm := kadm.NewClient(newClient(t, c))
	ctx := testContext(t)
	for _, tc := range []struct{ key, value, msg string }{
		{"segment.bytes", "1048575", "Invalid value 1048575 for configuration segment.bytes: Value must be at least 1048576"},
		{"segment.bytes", "4294967296", "Invalid value 4294967296 for configuration segment.bytes: Not a number of type INT"},
		{"segment.ms", "0", "Invalid value 0 for configuration segment.ms: Value must be at least 1"},
		{"compression.gzip.level", "10", "Invalid value 10 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"},
		{"compression.zstd.level", "23", "Invalid value 23 for configuration compression.zstd.level: Value must be no more than 22"},
		{"min.cleanable.dirty.ratio", "1.5", "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"},
		{"follower.replication.throttled.replicas", "bogus", "Invalid value [bogus] for configuration follower.replication.throttled.replicas: follower.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."},
		{"message.downconversion.enable", "true", "Unknown topic config name: message.downconversion.enable"},
	} {
		rs, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{tc.key: kmsg.StringPtr(tc.value)}, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		r := rs["cfg"]
		if !errors.Is(r.Err, kerr.InvalidConfig) || r.ErrMessage != tc.msg {
			t.Errorf("%s=%s: %v %q, want INVALID_CONFIG %q", tc.key, tc.value, r.Err, r.ErrMessage, tc.msg)
		}
	}
	rs, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{"retention.ms": nil}, "cfg")
	if r := rs["cfg"]; err != nil || !errors.Is(r.Err, kerr.InvalidConfig) || r.ErrMessage != "Null value not supported for topic configs: retention.ms" {
		t.Errorf("null value: %v %+v", err, r)
	}
	if r, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.bytes": kmsg.StringPtr("1048576")}, "cfg"); err != nil || r.Err != nil {
		t.Errorf("segment.bytes at the minimum: %v %v", err, r.Err)
	}
}

// TestAdminBatchedCoordinators: a v4 FindCoordinator names a coordinator
// for every key, the empty one too; a batched OffsetFetch answers
// NOT_COORDINATOR for the groups another broker coordinates, beside the
// offsets of the ones the receiver does.
func TestAdminBatchedCoordinators(t *testing.T) {
	c := NewTestCluster(t, Config{})
	cl := newClient(t, c)
	adm := kadm.NewClient(cl)
	ctx := testContext(t)
	if err := c.CreateTopic("t", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	keys := []string{"g", ""}
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("g%d", i))
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = keys
	node := map[string]int32{}
	for _, co := range toBroker[*kmsg.FindCoordinatorResponse](t, cl, 1, fc).Coordinators {
		if co.ErrorCode != 0 || co.NodeID < 1 || co.Port <= 0 {
			t.Fatalf("FindCoordinator %q: %+v", co.Key, co)
		}
		node[co.Key] = co.NodeID
	}
	other := ""
	for _, k := range keys[2:] {
		if node[k] != node["g"] {
			other = k
			break
		}
	}
	if other == "" {
		t.Fatal("every group on one coordinator")
	}
	if _, err := adm.CommitOffsets(ctx, "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 4})); err != nil {
		t.Fatal(err)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	for _, g := range []string{"g", other} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		of.Groups = append(of.Groups, rg)
	}
	resp := toBroker[*kmsg.OffsetFetchResponse](t, cl, node["g"], of)
	if len(resp.Groups) != 2 {
		t.Fatalf("%d groups answered", len(resp.Groups))
	}
	if g := resp.Groups[0]; g.ErrorCode != 0 || len(g.Topics) != 1 || g.Topics[0].Partitions[0].Offset != 5 {
		t.Errorf("g: %+v", g)
	}
	if g := resp.Groups[1]; g.Group != other || g.ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("%s (coordinated by %d): %s, want NOT_COORDINATOR", other, node[other], kerr.ErrorForCode(g.ErrorCode))
	}
	// Authorized operations only on a group described without error.
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups, dg.IncludeAuthorizedOperations = []string{"g", other}, true
	for _, g := range toBroker[*kmsg.DescribeGroupsResponse](t, cl, node["g"], dg).Groups {
		if want := map[string]int32{"g": 3400, other: -2147483648}[g.Group]; g.AuthorizedOperations != want {
			t.Errorf("DescribeGroups %s (error %d): operations %d, want %d", g.Group, g.ErrorCode, g.AuthorizedOperations, want)
		}
	}
	// The empty group id is a group like any other (Kafka keeps it for
	// compatibility): no offsets, no error.
	empty := kmsg.NewPtrOffsetFetchRequest()
	empty.Groups = []kmsg.OffsetFetchRequestGroup{{Group: ""}}
	if g := toBroker[*kmsg.OffsetFetchResponse](t, cl, node[""], empty).Groups[0]; g.ErrorCode != 0 || len(g.Topics) != 0 {
		t.Errorf("empty group id: %+v", g)
	}
}

func TestAdminAuthorizedOperations(t *testing.T) {
	// DescribeGroups v5: from v6 an unknown group is GROUP_ID_NOT_FOUND,
	// and a group answered with an error reports no operations.
	v5 := kversion.Stable()
	v5.SetMaxKeyVersion(kmsg.DescribeGroups.Int16(), 5)
	newClient := func(t *testing.T, c *Cluster) *kgo.Client { return newClient(t, c, kgo.MaxVersions(v5)) }
	describeGroup := func(t *testing.T, cl *kgo.Client, group string) kmsg.DescribeGroupsResponseGroup {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups, req.IncludeAuthorizedOperations = []string{group}, true
		return toBroker[*kmsg.DescribeGroupsResponse](t, cl, 1, req).Groups[0]
	}
	t.Run("no authorizer", func(t *testing.T) {
		c := NewTestCluster(t, Config{Brokers: 1})
		cl := newClient(t, c)
		if ops := describeGroup(t, cl, "g").AuthorizedOperations; ops != 3400 {
			t.Errorf("group: %d, want Kafka 4.4's 3400 (READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS)", ops)
		}
		m := kmsg.NewPtrMetadataRequest()
		m.IncludeTopicAuthorizedOperations = true
		m.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("nope")}}
		if tp := toBroker[*kmsg.MetadataResponse](t, cl, 1, m).Topics[0]; tp.ErrorCode != kerr.UnknownTopicOrPartition.Code || tp.AuthorizedOperations != 3576 {
			t.Errorf("unknown topic: %s ops %d, want UNKNOWN_TOPIC_OR_PARTITION 3576", kerr.ErrorForCode(tp.ErrorCode), tp.AuthorizedOperations)
		}
	})
	t.Run("ACLs", func(t *testing.T) {
		c := aclCluster(t, Config{})
		mustGrant(t, c, grant(authorizer.ResourceCluster, "kafka-cluster", authorizer.OpDescribe),
			grant(authorizer.ResourceGroup, "g", authorizer.OpRead))
		cl := newClient(t, c)
		bit := func(ops ...authorizer.Operation) int32 {
			var b int32
			for _, op := range ops {
				b |= 1 << op
			}
			return b
		}
		if ops := describeGroup(t, cl, "g").AuthorizedOperations; ops != bit(authorizer.OpRead, authorizer.OpDescribe) {
			t.Errorf("READ on g: %d, want READ and the DESCRIBE it implies", ops)
		}
		mustGrant(t, c, grant(authorizer.ResourceGroup, "g", authorizer.OpAlterConfigs))
		if ops := describeGroup(t, cl, "g").AuthorizedOperations; ops != bit(authorizer.OpRead, authorizer.OpDescribe, authorizer.OpAlterConfigs, authorizer.OpDescribeConfigs) {
			t.Errorf("READ and ALTER_CONFIGS on g: %d", ops)
		}
		// A topic the principal may WRITE (which implies DESCRIBE), known or not.
		mustGrant(t, c, grant(authorizer.ResourceTopic, "w", authorizer.OpWrite))
		m := kmsg.NewPtrMetadataRequest()
		m.IncludeTopicAuthorizedOperations = true
		m.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("w")}, {Topic: kmsg.StringPtr("hidden")}}
		mr := toBroker[*kmsg.MetadataResponse](t, cl, 1, m)
		// Answered by name: hidden, then w.
		if tp := mr.Topics[1]; tp.ErrorCode != kerr.UnknownTopicOrPartition.Code || tp.AuthorizedOperations != bit(authorizer.OpWrite, authorizer.OpDescribe) {
			t.Errorf("unknown topic w with WRITE: %s ops %d", kerr.ErrorForCode(tp.ErrorCode), tp.AuthorizedOperations)
		}
		if tp := mr.Topics[0]; tp.ErrorCode != kerr.TopicAuthorizationFailed.Code || tp.AuthorizedOperations != -2147483648 {
			t.Errorf("topic without DESCRIBE: %s ops %d", kerr.ErrorForCode(tp.ErrorCode), tp.AuthorizedOperations)
		}

	})
}

func TestAdminTransactionFilters(t *testing.T) {
	mc := clock.NewManual(time.Time{})
	c := txnCluster(t, Config{Clock: mc})
	if err := c.CreateTopic("d", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	runTxn(t, newClient(t, c, kgo.TransactionalID("done-1"), kgo.DefaultProduceTopic("d")), true, "x")
	waitTxnComplete(t, c, "done-1")
	cl := newClient(t, c)
	adm := kadm.NewClient(cl)
	ds, err := adm.DescribeTransactions(testContext(t), "done-1")
	if err != nil || ds["done-1"].State != "CompleteCommit" {
		t.Fatalf("done-1: %v %+v", err, ds)
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{"done-1"}
	coord := toBroker[*kmsg.FindCoordinatorResponse](t, cl, 1, fc).Coordinators[0].NodeID
	list := func(duration int64, pattern *string) *kmsg.ListTransactionsResponse {
		req := kmsg.NewPtrListTransactionsRequest()
		req.DurationFilterMillis, req.TransactionalIDPattern = duration, pattern
		return toBroker[*kmsg.ListTransactionsResponse](t, cl, coord, req)
	}
	ids := func(r *kmsg.ListTransactionsResponse) []string {
		var out []string
		for _, s := range r.TransactionStates {
			out = append(out, s.TransactionalID)
		}
		return out
	}
	// The completed transaction counts from its start; the clock stood still.
	if got := ids(list(0, nil)); len(got) != 0 {
		t.Errorf("duration 0 with no time passed: %v", got)
	}
	c.AdvanceClock(5 * time.Second)
	if got := ids(list(0, nil)); !slices.Equal(got, []string{"done-1"}) {
		t.Errorf("duration 0 after 5s: %v", got)
	}
	if got := ids(list(5000, nil)); len(got) != 0 {
		t.Errorf("duration 5000 after exactly 5s: %v (Kafka keeps only longer ones)", got)
	}
	if got := ids(list(-1, kmsg.StringPtr("done-.*"))); !slices.Equal(got, []string{"done-1"}) {
		t.Errorf("pattern done-.*: %v", got)
	}
	if got := ids(list(-1, kmsg.StringPtr("done"))); len(got) != 0 {
		t.Errorf("pattern done matches only part of the id: %v", got)
	}
	if r := list(-1, kmsg.StringPtr("done-[")); r.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Errorf("bad pattern: %s", kerr.ErrorForCode(r.ErrorCode))
	}
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"", "done-1"}
	resp := toBroker[*kmsg.DescribeTransactionsResponse](t, cl, coord, dt)
	if resp.TransactionStates[0].ErrorCode != kerr.InvalidRequest.Code || resp.TransactionStates[1].ErrorCode != 0 {
		t.Errorf("empty id: %+v", resp.TransactionStates)
	}
	dt.TransactionalIDs = []string{"done-1"}
	if code := toBroker[*kmsg.DescribeTransactionsResponse](t, cl, coord%3+1, dt).TransactionStates[0].ErrorCode; code != kerr.NotCoordinator.Code {
		t.Errorf("to a broker that does not coordinate it: %s", kerr.ErrorForCode(code))
	}
}

// TestAdminDescribeProducersOnFollower: a follower answers from its own
// replica, as Kafka 4.4 does, once it has replicated the producer's batch.
func TestAdminDescribeProducersOnFollower(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopicAssigned("p", [][]int32{{1, 2, 3}}, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.DefaultProduceTopic("p"))
	ctx := testContext(t)
	for range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	req := func(topic string) *kmsg.DescribeProducersRequest {
		r := kmsg.NewPtrDescribeProducersRequest()
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		r.Topics = append(r.Topics, rt)
		return r
	}
	leader := toBroker[*kmsg.DescribeProducersResponse](t, cl, 1, req("p")).Topics[0].Partitions[0]
	if leader.ErrorCode != 0 || len(leader.ActiveProducers) != 1 || leader.ActiveProducers[0].LastSequence != 2 {
		t.Fatalf("leader: %+v", leader)
	}
	waitFor(t, 10*time.Second, "the follower has the batches", func() bool {
		f := toBroker[*kmsg.DescribeProducersResponse](t, cl, 2, req("p")).Topics[0].Partitions[0]
		return f.ErrorCode == 0 && len(f.ActiveProducers) == 1 && f.ActiveProducers[0].LastSequence == 2 &&
			f.ActiveProducers[0].ProducerID == leader.ActiveProducers[0].ProducerID
	})
	if err := c.CreateTopicAssigned("p2", [][]int32{{1, 2}}, nil); err != nil {
		t.Fatal(err)
	}
	if code := toBroker[*kmsg.DescribeProducersResponse](t, cl, 3, req("p2")).Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Errorf("a broker without a replica: %s, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	u := toBroker[*kmsg.DescribeProducersResponse](t, cl, 2, req("nope")).Topics[0].Partitions[0]
	if u.ErrorCode != kerr.UnknownTopicOrPartition.Code || u.ErrorMessage == nil || *u.ErrorMessage != "This server does not host this topic-partition." {
		t.Errorf("unknown topic: %+v", u)
	}
}

func TestAdminElectLeadersArguments(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopicAssigned("e", [][]int32{{1, 2, 3}}, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	rs, err := kadm.NewClient(cl).ElectLeaders(testContext(t), kadm.ElectPreferredReplica, kadm.TopicsSet{"e": {0: {}, 9: {}}, "nope": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		topic string
		part  int32
		err   error
		msg   string
	}{
		{"e", 0, kerr.ElectionNotNeeded, "Leader election not needed for topic partition."},
		{"e", 9, kerr.UnknownTopicOrPartition, "No such partition as e-9"},
		{"nope", 0, kerr.UnknownTopicOrPartition, "No such topic as nope"},
	} {
		if r := rs[w.topic][w.part]; !errors.Is(r.Err, w.err) || r.ErrMessage != w.msg {
			t.Errorf("%s/%d: %v %q, want %v %q", w.topic, w.part, r.Err, r.ErrMessage, w.err, w.msg)
		}
	}
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType, req.TimeoutMillis = 5, 10000
	req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "e", Partitions: []int32{0, 0}}}
	resp := toBroker[*kmsg.ElectLeadersResponse](t, cl, 1, req)
	if resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 ||
		*resp.Topics[0].Partitions[1].ErrorMessage != "Unknown election type 5" {
		t.Errorf("unknown election type: %+v", resp)
	}
	req.ElectionType = 0 // the same partition twice: answered twice
	resp = toBroker[*kmsg.ElectLeadersResponse](t, cl, 1, req)
	if ps := resp.Topics[0].Partitions; len(ps) != 2 || ps[0].ErrorCode != kerr.ElectionNotNeeded.Code || ps[1].ErrorCode != kerr.ElectionNotNeeded.Code {
		t.Errorf("duplicate partitions: %+v", resp)
	}
}

func TestAdminDescribeConfigsArguments(t *testing.T) {
	c := NewTestCluster(t, Config{})
	cl := newClient(t, c)
	for _, w := range []struct {
		typ  kmsg.ConfigResourceType
		name string
		code int16
		msg  string
	}{
		{kmsg.ConfigResourceTypeBroker, "2", kerr.InvalidRequest.Code, "Unexpected broker id, expected 1 or empty string, but received 2"},
		{kmsg.ConfigResourceTypeBroker, "abc", kerr.InvalidRequest.Code, "Broker id must be an integer, but it is: abc"},
		{kmsg.ConfigResourceTypeBrokerLogger, "abc", kerr.InvalidRequest.Code, "Broker id must be an integer, but it is: abc"},
		{kmsg.ConfigResourceTypeBrokerLogger, "2", kerr.InvalidRequest.Code, "Unexpected broker id, expected 1 but received 2"},
		{99, "x", kerr.InvalidRequest.Code, msgInvalidRequest},
		{kmsg.ConfigResourceTypeTopic, "", kerr.InvalidTopicException.Code, "Topic name is invalid: the empty string is not allowed"},
		{configResourceTypeGroup, "", kerr.InvalidRequest.Code, "Group name must not be empty"},
	} {
		req := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = w.typ, w.name
		req.Resources = append(req.Resources, rr)
		r := toBroker[*kmsg.DescribeConfigsResponse](t, cl, 1, req).Resources[0]
		if r.ErrorCode != w.code || r.ErrorMessage == nil || *r.ErrorMessage != w.msg {
			got := "<null>"
			if r.ErrorMessage != nil {
				got = *r.ErrorMessage
			}
			t.Errorf("%v %q: %s %q, want %s %q", w.typ, w.name, kerr.ErrorForCode(r.ErrorCode), got, kerr.ErrorForCode(w.code), w.msg)
		}
	}
}

// TestAdminBatchedGroupOrder: a DescribeGroups and a ConsumerGroupDescribe
// of many groups answer in Kafka's order: by the HashMap order of their
// __consumer_offsets partitions (for partitions 7, 3, 12, 0, 45 Java
// iterates 0, 45, 12, 7, 3), an empty ConsumerGroupDescribe id first.
func TestAdminBatchedGroupOrder(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1, OffsetsTopicPartitions: 50})
	cl := newClient(t, c)
	named := map[int]string{}
	for i := 0; len(named) < 5; i++ {
		g := fmt.Sprintf("g%d", i)
		if p := coordinator.Partition(g, 50); slices.Contains([]int{7, 3, 12, 0, 45}, p) && named[p] == "" {
			named[p] = g
		}
	}
	var groups, want []string
	for _, p := range []int{7, 3, 12, 0, 45} {
		groups = append(groups, named[p])
	}
	for _, p := range []int{0, 45, 12, 7, 3} {
		want = append(want, named[p])
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = groups
	var got []string
	for _, g := range toBroker[*kmsg.DescribeGroupsResponse](t, cl, 1, dg).Groups {
		got = append(got, g.Group)
	}
	if !slices.Equal(got, want) {
		t.Errorf("DescribeGroups %v answered %v, want %v", groups, got, want)
	}
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = append(slices.Clone(groups), "")
	got = nil
	for _, g := range toBroker[*kmsg.ConsumerGroupDescribeResponse](t, cl, 1, cd).Groups {
		got = append(got, g.Group)
		if g.Group == "" && (g.ErrorCode != kerr.InvalidGroupID.Code || g.ErrorMessage != nil) {
			t.Errorf("empty id: %+v", g)
		}
		if g.Group != "" && (g.ErrorCode != kerr.GroupIDNotFound.Code || *g.ErrorMessage != "Group "+g.Group+" not found.") {
			t.Errorf("%s: %+v", g.Group, g)
		}
	}
	if want = append([]string{""}, want...); !slices.Equal(got, want) {
		t.Errorf("ConsumerGroupDescribe %v answered %v, want %v", cd.Groups, got, want)
	}
}

// TestAdminCollidingTopicsRestored: a data dir written before collisions
// were refused may hold both a.b and a_b; a restart restores both.
func TestAdminCollidingTopicsRestored(t *testing.T) {
	dir := t.TempDir()
	c := NewTestCluster(t, Config{Brokers: 1, DataDir: dir})
	if err := c.CreateTopic("a.b", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	// What an older fakekafka allowed: a_b beside a.b (restored as such).
	if _, e, msg := c.createTopic(topicSpec{name: "a_b", partitions: 1, rf: 1, before: map[string]*topic{}}, false); e != nil {
		t.Fatalf("a_b: %v %s", e, msg)
	}
	c.Close()
	c2 := NewTestCluster(t, Config{Brokers: 1, DataDir: dir})
	var names []string
	for _, ts := range c2.State().Topics {
		names = append(names, ts.Name)
	}
	if !slices.Contains(names, "a.b") || !slices.Contains(names, "a_b") {
		t.Fatalf("restored %v", names)
	}
}
