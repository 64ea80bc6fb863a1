package server

import (
	"errors"
	"github.com/fakekafka/fakekafka/protocol"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/configs"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func setOp(name, value string) kadm.AlterConfig {
	return kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: kadm.StringPtr(value)}
}

// produceErr produces one record with acks=all and no retries.
func produceErr(t *testing.T, cl *kgo.Client, topic string) error {
	t.Helper()
	return cl.ProduceSync(testContext(t), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

// shrinkISR keeps broker 3's replica of topic/0 out of the ISR.
func shrinkISR(t *testing.T, c *Cluster, topic string) {
	t.Helper()
	if err := c.PauseReplica(topic, 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.SetISR(topic, 0, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
}

func describedConfig(t *testing.T, rcs kadm.ResourceConfigs, resource, key string) kadm.Config {
	t.Helper()
	rc, err := rcs.On(resource, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", resource, err, rc.Err)
	}
	for _, cfg := range rc.Configs {
		if cfg.Key == key {
			return cfg
		}
	}
	t.Fatalf("%s: no config %s in %+v", resource, key, rc.Configs)
	return kadm.Config{}
}

// TestIncrementalAlterMinISR raises min.insync.replicas past the ISR with
// IncrementalAlterConfigs: the next acks=all produce is refused; lowering
// it again lets the same producer through.
func TestIncrementalAlterMinISR(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("mi", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	shrinkISR(t, c, "mi")
	adm := kadm.NewClient(newClient(t, c))
	prod := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))

	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{setOp("min.insync.replicas", "3")}, "mi")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	if err := produceErr(t, prod, "mi"); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("produce with min.insync.replicas=3 and ISR [1 2]: %v, want NOT_ENOUGH_REPLICAS", err)
	}

	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{setOp("min.insync.replicas", "2")}, "mi")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	if err := produceErr(t, prod, "mi"); err != nil {
		t.Fatalf("produce with min.insync.replicas=2: %v", err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "mi")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := describedConfig(t, rcs, "mi", "min.insync.replicas"); cfg.MaybeValue() != "2" || cfg.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("min.insync.replicas %q from %v, want 2 from DYNAMIC_TOPIC_CONFIG", cfg.MaybeValue(), cfg.Source)
	}

	// DELETE reverts to the broker default.
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "min.insync.replicas"}}, "mi")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	rcs, err = adm.DescribeTopicConfigs(ctx, "mi")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := describedConfig(t, rcs, "mi", "min.insync.replicas"); cfg.MaybeValue() != "1" || cfg.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("min.insync.replicas after DELETE %q from %v, want 1 from DEFAULT_CONFIG", cfg.MaybeValue(), cfg.Source)
	}
}

// TestLowerMinISRWakesParkedProduce parks an acks=all produce, shrinks the
// ISR below min.insync.replicas so the HW freezes, then lowers the minimum
// with the Go API: the HW moves and the parked produce succeeds.
func TestLowerMinISRWakesParkedProduce(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("wake", 1, 3, map[string]string{"min.insync.replicas": "3"}); err != nil {
		t.Fatal(err)
	}
	if err := c.PauseReplica("wake", 0, 3); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0),
		kgo.ProduceRequestTimeout(30*time.Second))
	done := make(chan error, 1)
	prod.Produce(testContext(t), &kgo.Record{Topic: "wake", Value: []byte("v")}, func(_ *kgo.Record, err error) { done <- err })

	replicaLEO := func(id int32) int64 {
		ps, _ := c.Partition("wake", 0)
		for _, r := range ps.Replicas {
			if r.Broker == id {
				return r.LogEndOffset
			}
		}
		return -1
	}
	waitFor(t, 10*time.Second, "the record on the leader and broker 2", func() bool { return replicaLEO(1) == 1 && replicaLEO(2) == 1 })
	if err := c.SetISR("wake", 0, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("wake", 0); ps.HighWatermark != 0 {
		t.Fatalf("HW %d with the ISR below min.insync.replicas, want 0", ps.HighWatermark)
	}
	select {
	case err := <-done:
		t.Fatalf("produce completed while the HW was frozen: %v", err)
	default:
	}

	if err := c.AlterTopicConfig("wake", map[string]string{"min.insync.replicas": "2"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("parked produce: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("parked produce did not complete after lowering min.insync.replicas")
	}
	if ps, _ := c.Partition("wake", 0); ps.HighWatermark != 1 {
		t.Errorf("HW %d, want 1", ps.HighWatermark)
	}
}

func TestDescribeTopicConfigs(t *testing.T) {
	c := NewTestCluster(t, Config{MinInsyncReplicas: 2})
	ctx := testContext(t)
	if err := c.CreateTopic("dc", 1, 3, map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, c))
	rcs, err := adm.DescribeTopicConfigs(ctx, "dc", "nope")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On("dc", nil)
	var keys []string
	for _, cfg := range rc.Configs {
		keys = append(keys, cfg.Key)
	}
	var want []string
	for _, d := range configs.Topic.Described() {
		want = append(want, d.Name)
	}
	if !slices.Equal(keys, want) {
		t.Errorf("described %v, want every topic config %v", keys, want)
	}
	for _, tc := range []struct {
		key, value string
		source     kmsg.ConfigSource
		synonyms   int
	}{
		// log.retention.ms's default is null, and log.retention.hours is
		// not retention.ms's synonym: Kafka lists the topic's value only.
		{"retention.ms", "1000", kmsg.ConfigSourceDynamicTopicConfig, 1},
		{"min.insync.replicas", "2", kmsg.ConfigSourceStaticBrokerConfig, 2},
		{"max.message.bytes", "1048588", kmsg.ConfigSourceDefaultConfig, 1},
		{"flush.messages", maxLong, kmsg.ConfigSourceDefaultConfig, 1},
		{"cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig, 1},
	} {
		cfg := describedConfig(t, rcs, "dc", tc.key)
		if cfg.MaybeValue() != tc.value || cfg.Source != tc.source || len(cfg.Synonyms) != tc.synonyms {
			t.Errorf("%s = %q from %v with %d synonyms, want %q from %v with %d", tc.key, cfg.MaybeValue(), cfg.Source, len(cfg.Synonyms), tc.value, tc.source, tc.synonyms)
		}
	}
	if cfg := describedConfig(t, rcs, "dc", "max.message.bytes"); cfg.Synonyms[0].Key != "message.max.bytes" {
		t.Errorf("max.message.bytes synonyms %+v, want message.max.bytes", cfg.Synonyms)
	}
	if rc, _ := rcs.On("nope", nil); !errors.Is(rc.Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", rc.Err)
	}

	// A broker default changed at runtime shows up with its source.
	if err := c.AlterBrokerConfig(map[string]string{"min.insync.replicas": "3"}, nil); err != nil {
		t.Fatal(err)
	}
	rcs, err = adm.DescribeTopicConfigs(ctx, "dc")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := describedConfig(t, rcs, "dc", "min.insync.replicas"); cfg.MaybeValue() != "3" || cfg.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || len(cfg.Synonyms) != 3 {
		t.Errorf("min.insync.replicas %q from %v synonyms %+v, want 3 from DYNAMIC_DEFAULT_BROKER_CONFIG over static 2 and default 1", cfg.MaybeValue(), cfg.Source, cfg.Synonyms)
	}

	// ConfigNames filters; ConfigType is set.
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeTopic, "dc", []string{"cleanup.policy", "no.such"}
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, newClient(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if cs := resp.Resources[0].Configs; len(cs) != 1 || cs[0].Name != "cleanup.policy" || cs[0].ConfigType != kmsg.ConfigTypeList || cs[0].ReadOnly {
		t.Errorf("filtered configs %+v, want cleanup.policy of type LIST", cs)
	}

	// v0 (IsDefault instead of a source) is no longer served: Kafka 4.0
	// removed it (KIP-896).
	if r, ok := protocol.Lookup(kmsg.DescribeConfigs.Int16()); !ok || r.Min != 1 {
		t.Errorf("DescribeConfigs served from v%d, want v1", r.Min)
	}
}

func TestDescribeBrokerConfigs(t *testing.T) {
	c := NewTestCluster(t, Config{DefaultReplicationFactor: 2})
	ctx := testContext(t)
	adm := kadm.NewClient(newClient(t, c))

	rcs, err := adm.DescribeBrokerConfigs(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, value string
		source     kmsg.ConfigSource
	}{
		{"broker.id", "2", kmsg.ConfigSourceStaticBrokerConfig},
		{"min.insync.replicas", "1", kmsg.ConfigSourceDefaultConfig},
		{"default.replication.factor", "2", kmsg.ConfigSourceStaticBrokerConfig},
		{"message.max.bytes", "1048588", kmsg.ConfigSourceDefaultConfig},
	} {
		if cfg := describedConfig(t, rcs, "2", tc.key); cfg.MaybeValue() != tc.value || cfg.Source != tc.source {
			t.Errorf("%s = %q from %v, want %q from %v", tc.key, cfg.MaybeValue(), cfg.Source, tc.value, tc.source)
		}
	}

	// The cluster-wide default resource lists only what changed at runtime.
	rcs, err = adm.DescribeBrokerConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rc, _ := rcs.On("", nil); rc.Err != nil || len(rc.Configs) != 0 {
		t.Fatalf("default resource before any change: %+v", rc)
	}
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{setOp("unclean.leader.election.enable", "true")})
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	rcs, err = adm.DescribeBrokerConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rc, _ := rcs.On("", nil); rc.Err != nil || len(rc.Configs) != 1 || rc.Configs[0].Key != "unclean.leader.election.enable" ||
		rc.Configs[0].MaybeValue() != "true" || rc.Configs[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("default resource after a change: %+v", rc)
	}

	// A resource name that is no broker's id.
	cl := newClient(t, c)
	for _, name := range []string{"9", "x"} {
		req := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, name
		req.Resources = append(req.Resources, rr)
		resp, err := req.RequestWith(ctx, cl.Broker(1))
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.Resources[0].ErrorCode; code != kerr.InvalidRequest.Code {
			t.Errorf("broker %q: error %d, want INVALID_REQUEST", name, code)
		}
	}
}

// TestAlterConfigsReplaces uses the non-incremental AlterConfigs, which
// replaces every explicit config of the topic.
func TestAlterConfigsReplaces(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("rep", 1, 3, map[string]string{"retention.ms": "1000", "min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, c))
	rs, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, "rep")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	if got := c.State().Topics[0].Configs; !maps.Equal(got, map[string]string{"cleanup.policy": "compact"}) {
		t.Errorf("configs after AlterConfigs: %v", got)
	}
	p := c.partition("rep", 0)
	p.mu.Lock()
	minISR := p.st.Config().MinInsyncReplicas
	p.mu.Unlock()
	if minISR != 1 {
		t.Errorf("partition min.insync.replicas %d after replacing the configs, want the default 1", minISR)
	}
}

func TestAlterConfigsValidation(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("val", 1, 3, map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, c))
	configs := func() map[string]string { return c.State().Topics[0].Configs }

	// Validate-only answers without changing anything.
	rs, err := adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{setOp("retention.ms", "5")}, "val")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("validate: %v %+v", err, rs)
	}
	rs, err = adm.ValidateAlterTopicConfigsState(ctx, nil, "val")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("validate state: %v %+v", err, rs)
	}
	if got := configs(); got["retention.ms"] != "1000" || len(got) != 1 {
		t.Fatalf("configs changed by validate-only requests: %v", got)
	}

	for _, tc := range []struct {
		name string
		op   kadm.AlterConfig
		want error
	}{
		{"unknown key", setOp("no.such.config", "1"), kerr.InvalidConfig},
		{"bad value", setOp("min.insync.replicas", "0"), kerr.InvalidConfig},
		{"not an int", setOp("retention.ms", "soon"), kerr.InvalidConfig},
		{"append to a non-list", kadm.AlterConfig{Op: kadm.AppendConfig, Name: "retention.ms", Value: kadm.StringPtr("1")}, kerr.InvalidConfig},
		{"not in the list", setOp("cleanup.policy", "compact,nope"), kerr.InvalidConfig},
		{"replica.lag.time.max.ms is no topic config", setOp("replica.lag.time.max.ms", "1000"), kerr.InvalidConfig},
		{"null value", kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.ms"}, kerr.InvalidRequest},
	} {
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{tc.op}, "val")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !errors.Is(rs[0].Err, tc.want) || rs[0].ErrMessage == "" {
			t.Errorf("%s: %v (%q), want %v with a message", tc.name, rs[0].Err, rs[0].ErrMessage, tc.want)
		}
	}
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{setOp("retention.ms", "1")}, "nope")
	if err != nil || !errors.Is(rs[0].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v %+v", err, rs)
	}
	if got := configs(); got["retention.ms"] != "1000" || len(got) != 1 {
		t.Fatalf("configs changed by failed requests: %v", got)
	}

	// APPEND and SUBTRACT edit a list config, starting from its default.
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, "val")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("append: %v %+v", err, rs)
	}
	if got := configs()["cleanup.policy"]; got != "delete,compact" {
		t.Errorf("cleanup.policy after APPEND compact: %q, want delete,compact", got)
	}
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: kadm.StringPtr("delete")}}, "val")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("subtract: %v %+v", err, rs)
	}
	if got := configs()["cleanup.policy"]; got != "compact" {
		t.Errorf("cleanup.policy after SUBTRACT delete: %q, want compact", got)
	}

	// Deleting a config that is not set, or not known, is no error; nor is
	// SUBTRACT down to an empty list (Kafka 4.4).
	for _, op := range []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "no.such.config"}, {Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")}} {
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{op}, "val")
		if err != nil || rs[0].Err != nil {
			t.Errorf("%v %s: %v %+v, want no error", op.Op, op.Name, err, rs)
		}
	}
	if got := configs(); got["cleanup.policy"] != "" || got["retention.ms"] != "1000" || len(got) != 2 {
		t.Fatalf("configs after SUBTRACT to empty: %v, want cleanup.policy empty", got)
	}
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "cleanup.policy"}}, "val")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("delete: %v %+v", err, rs)
	}

	// An unknown operation: Kafka's controller fails it with
	// UNKNOWN_SERVER_ERROR and no message.
	unknownOp := kmsg.NewPtrIncrementalAlterConfigsRequest()
	uo := kmsg.NewIncrementalAlterConfigsRequestResource()
	uo.ResourceType, uo.ResourceName = kmsg.ConfigResourceTypeTopic, "val"
	uo.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: 7, Value: kmsg.StringPtr("1")}}
	unknownOp.Resources = append(unknownOp.Resources, uo)
	if r := callHandler[*kmsg.IncrementalAlterConfigsResponse](t, c, 1, unknownOp).Resources[0]; r.ErrorCode != kerr.UnknownServerError.Code || r.ErrorMessage != nil {
		t.Errorf("unknown operation: %v %v, want UNKNOWN_SERVER_ERROR without a message", errorName(r.ErrorCode), r.ErrorMessage)
	}

	// Broker configs: only the ones Kafka changes dynamically, with valid
	// values, as INVALID_REQUEST (Kafka's DynamicBrokerConfig); names
	// Kafka does not know are taken.
	for _, op := range []kadm.AlterConfig{setOp("num.partitions", "3"), setOp("message.max.bytes", "-1")} {
		rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{op})
		if err != nil || !errors.Is(rs[0].Err, kerr.InvalidRequest) {
			t.Errorf("broker %s=%s: %v %+v, want INVALID_REQUEST", op.Name, *op.Value, err, rs)
		}
	}
	if rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{setOp("no.such.config", "1")}); err != nil || rs[0].Err != nil {
		t.Errorf("broker no.such.config: %v %+v, want it taken", err, rs)
	}

	// Whole-request checks: a resource twice, a key twice, a resource type
	// fakekafka does not alter.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
		keys []string
	}{
		{kmsg.ConfigResourceTypeTopic, "val", []string{"retention.ms"}},
		{kmsg.ConfigResourceTypeTopic, "val", []string{"retention.ms"}},
		{kmsg.ConfigResourceTypeBroker, "", []string{"min.insync.replicas", "min.insync.replicas"}},
		{kmsg.ConfigResourceTypeClientMetrics, "m", []string{"interval.ms"}}, // not kept by fakekafka
	} {
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.typ, r.name
		for _, k := range r.keys {
			cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			cfg.Name, cfg.Value = k, kmsg.StringPtr("2")
			rr.Configs = append(rr.Configs, cfg)
		}
		req.Resources = append(req.Resources, rr)
	}
	resp := callHandler[*kmsg.IncrementalAlterConfigsResponse](t, c, 1, req)
	if len(resp.Resources) != 3 {
		t.Fatalf("%d results, want one per distinct resource", len(resp.Resources))
	}
	for _, r := range resp.Resources {
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil {
			t.Errorf("%v %q: error %d, want INVALID_REQUEST with a message", r.ResourceType, r.ResourceName, r.ErrorCode)
		}
	}
}

// TestBrokerMinISRDefault changes the cluster-wide min.insync.replicas:
// a topic without its own value follows, one with its own does not.
func TestBrokerMinISRDefault(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("free", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("pinned", 1, 3, map[string]string{"min.insync.replicas": "1"}); err != nil {
		t.Fatal(err)
	}
	shrinkISR(t, c, "free")
	shrinkISR(t, c, "pinned")
	adm := kadm.NewClient(newClient(t, c))
	prod := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))

	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{setOp("min.insync.replicas", "3")})
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	if err := produceErr(t, prod, "free"); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Errorf("topic without an override: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if err := produceErr(t, prod, "pinned"); err != nil {
		t.Errorf("topic with min.insync.replicas=1: %v", err)
	}
	// Topics created now take the new default too.
	if err := c.CreateTopic("later", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	p := c.partition("later", 0)
	p.mu.Lock()
	minISR := p.st.Config().MinInsyncReplicas
	p.mu.Unlock()
	if minISR != 3 {
		t.Errorf("new topic's min.insync.replicas %d, want 3", minISR)
	}

	// A broker's own value is stored apart from the cluster-wide default
	// (and only the default is acted on): deleting broker 2's, which it
	// does not have, changes nothing.
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "min.insync.replicas"}}, 2)
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	if err := produceErr(t, prod, "free"); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Errorf("after deleting broker 2's own value: %v, want NOT_ENOUGH_REPLICAS still", err)
	}
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "min.insync.replicas"}})
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	if err := produceErr(t, prod, "free"); err != nil {
		t.Errorf("after reverting the broker default: %v", err)
	}
}

// TestStaticConfigNames keeps Config's typed fields named after Kafka's
// broker configs, and their values valid ones.
func TestStaticConfigNames(t *testing.T) {
	var cfg Config
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range staticFields {
		d, ok := configs.Broker.Lookup(name)
		if !ok {
			t.Errorf("%s is no Kafka broker config", name)
			continue
		}
		if v := f(&cfg); v != "" {
			if err := d.Check(v); err != nil {
				t.Errorf("%s: default %q: %v", name, v, err)
			}
		}
	}
	for name := range typedFields {
		if _, ok := configs.Broker.Lookup(name); !ok {
			t.Errorf("typed field of %s, which is no Kafka broker config", name)
		}
	}
}

// TestBrokerConfigsAct: a broker config set by name in Config.BrokerConfigs
// acts as its typed field does and is described as static.
func TestBrokerConfigsAct(t *testing.T) {
	c := NewTestCluster(t, Config{BrokerConfigs: map[string]string{"min.insync.replicas": "2", "log.retention.hours": "1"}})
	if err := c.CreateTopic("bc", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	p := c.partition("bc", 0)
	p.mu.Lock()
	rc := p.st.Config()
	p.mu.Unlock()
	if rc.MinInsyncReplicas != 2 || rc.Retention.Ms != 3600000 {
		t.Errorf("partition config: min.insync.replicas %d, retention.ms %d; want 2 and 3600000", rc.MinInsyncReplicas, rc.Retention.Ms)
	}
	rcs, err := kadm.NewClient(newClient(t, c)).DescribeTopicConfigs(testContext(t), "bc")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := describedConfig(t, rcs, "bc", "min.insync.replicas"); cfg.MaybeValue() != "2" || cfg.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("min.insync.replicas %q from %v, want 2 from STATIC_BROKER_CONFIG", cfg.MaybeValue(), cfg.Source)
	}
	// log.retention.ms is null: retention.ms comes from the hours, and
	// Kafka lists no synonym for it.
	if cfg := describedConfig(t, rcs, "bc", "retention.ms"); cfg.MaybeValue() != "3600000" || cfg.Source != kmsg.ConfigSourceDefaultConfig || len(cfg.Synonyms) != 0 {
		t.Errorf("retention.ms %q from %v with %v", cfg.MaybeValue(), cfg.Source, cfg.Synonyms)
	}
}
