package reference

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The configs tests' files are named to sort last, so their tests run after
// the others of the package (KafkaSettings also puts Kafka's first retention
// check, log.initial.task.delay.ms, an hour after start, so that it never
// removes the corpus's old-timestamped records mid-run).
//
// Config changes answered by both clusters: every case is one
// IncrementalAlterConfigs or AlterConfigs request (or a DescribeConfigs of
// what one changed), and both must answer the same error code and message.

type alterOp struct {
	name, value string
	op          kmsg.IncrementalAlterConfigOp
	null        bool
}

func set(name, value string) alterOp { return alterOp{name: name, value: value} }
func del(name string) alterOp {
	return alterOp{name: name, op: kmsg.IncrementalAlterConfigOpDelete, null: true}
}
func appendOp(name, value string) alterOp {
	return alterOp{name: name, value: value, op: kmsg.IncrementalAlterConfigOpAppend}
}
func subtract(name, value string) alterOp {
	return alterOp{name: name, value: value, op: kmsg.IncrementalAlterConfigOpSubtract}
}

type alterCase struct {
	name         string
	typ          kmsg.ConfigResourceType
	resource     string
	broker       int32 // where to send it (0: broker 1)
	legacy       bool  // AlterConfigs instead of IncrementalAlterConfigs
	validateOnly bool
	ops          []alterOp
	describe     []string // after the alter: describe these names of the resource
}

func incAlter(c alterCase) kmsg.Request {
	if c.legacy {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.SetVersion(2)
		req.ValidateOnly = c.validateOnly
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = c.typ, c.resource
		for _, o := range c.ops {
			cfg := kmsg.NewAlterConfigsRequestResourceConfig()
			cfg.Name = o.name
			if !o.null {
				cfg.Value = kmsg.StringPtr(o.value)
			}
			rr.Configs = append(rr.Configs, cfg)
		}
		req.Resources = append(req.Resources, rr)
		return req
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.SetVersion(1)
	req.ValidateOnly = c.validateOnly
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = c.typ, c.resource
	for _, o := range c.ops {
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Op = o.name, o.op
		if !o.null {
			cfg.Value = kmsg.StringPtr(o.value)
		}
		rr.Configs = append(rr.Configs, cfg)
	}
	req.Resources = append(req.Resources, rr)
	return req
}

// outcome is one case's answer in brief: error name and message, then
// what the describe shows.
func (r *run) alterOutcome(c alterCase) string {
	r.Helper()
	to := c.broker
	if to == 0 {
		to = 1
	}
	var code int16
	var msg *string
	switch resp := r.do(to, incAlter(c)).(type) {
	case *kmsg.IncrementalAlterConfigsResponse:
		code, msg = resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage
	case *kmsg.AlterConfigsResponse:
		code, msg = resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage
	}
	out := errName(code)
	if msg != nil {
		out += ": " + *msg
	}
	if len(c.describe) > 0 {
		out += "\n" + r.describeBrief(c.typ, c.resource, to, c.describe)
	}
	return out
}

// describeBrief describes names of a resource with synonyms, one line per
// config: value, source, read-only, sensitive, type, synonyms.
func (r *run) describeBrief(typ kmsg.ConfigResourceType, name string, to int32, names []string) string {
	// Kafka applies a change on each broker when its metadata arrives, a
	// few milliseconds after the answer; nothing observable says which
	// describe is the first after it, so the describe waits out a second.
	if _, ok := r.tg.(KafkaTarget); ok {
		time.Sleep(time.Second)
	}
	var got string
	func() bool {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.SetVersion(4)
		req.IncludeSynonyms = true
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, names
		req.Resources = append(req.Resources, rr)
		resp := r.do(to, req).(*kmsg.DescribeConfigsResponse)
		var lines []string
		res := resp.Resources[0]
		if res.ErrorCode != 0 {
			lines = append(lines, errName(res.ErrorCode))
		}
		for _, c := range res.Configs {
			lines = append(lines, configLine(c))
		}
		sort.Strings(lines)
		got = strings.Join(lines, "\n")
		return true
	}()
	return got
}

func configLine(c kmsg.DescribeConfigsResponseResourceConfig) string {
	var syn []string
	for _, s := range c.ConfigSynonyms {
		syn = append(syn, fmt.Sprintf("%s=%s(%v)", s.Name, deref(s.Value), s.Source))
	}
	return fmt.Sprintf("%s=%s source=%v ro=%v sensitive=%v type=%v synonyms=[%s]",
		c.Name, deref(c.Value), c.Source, c.ReadOnly, c.IsSensitive, c.ConfigType, strings.Join(syn, " "))
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

var alterCases = []alterCase{
	{name: "topic/below-min", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("min.insync.replicas", "0")}},
	{name: "topic/not-a-number", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("min.insync.replicas", "abc")}},
	{name: "topic/unknown", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("no.such.config", "1")}},
	{name: "topic/delete-unknown", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{del("no.such.config")}},
	{name: "topic/append-non-list", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{appendOp("retention.ms", "1")}},
	{name: "topic/subtract-to-empty", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{subtract("cleanup.policy", "delete")}, describe: []string{"cleanup.policy"}},
	{name: "topic/bad-string", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("message.timestamp.type", "Foo")}},
	{name: "topic/duplicate-list", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("cleanup.policy", "compact,compact")}},
	{name: "topic/bad-list", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("cleanup.policy", "compact,nope")}},
	{name: "topic/gzip-level", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("compression.gzip.level", "10")}},
	{name: "topic/compaction-lags", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("min.compaction.lag.ms", "100"), set("max.compaction.lag.ms", "50")}},
	{name: "topic/remote-storage", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("remote.storage.enable", "true")}},
	{name: "topic/local-retention", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("retention.ms", "1000"), set("local.retention.ms", "5000")}},
	{name: "topic/jitter", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("segment.jitter.ms", "10"), set("message.timestamp.before.max.ms", "3600000")}, describe: []string{"segment.jitter.ms", "message.timestamp.before.max.ms", "segment.ms"}},
	{name: "topic/bool-case", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("unclean.leader.election.enable", "TRUE"), set("min.cleanable.dirty.ratio", "1")}, describe: []string{"unclean.leader.election.enable", "min.cleanable.dirty.ratio"}},
	{name: "topic/replica-lag", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("replica.lag.time.max.ms", "1000")}},
	{name: "topic/validate-only", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", validateOnly: true, ops: []alterOp{set("retention.bytes", "100")}, describe: []string{"retention.bytes"}},
	{name: "topic/legacy-null", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", legacy: true, ops: []alterOp{{name: "retention.ms", null: true}}},
	{name: "topic/legacy-unknown", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", legacy: true, ops: []alterOp{set("no.such.config", "1")}},
	{name: "topic/set-null", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{{name: "retention.ms", null: true}}},
	// An unknown operation on a topic is UNKNOWN_SERVER_ERROR from Kafka's
	// controller, which then resigns (its KRaft epoch moves on, seen by
	// the corpus's DescribeQuorum), so it is not sent here; server's
	// TestAlterConfigsValidation checks fakekafka's answer.
	{name: "topic/default-resource", typ: kmsg.ConfigResourceTypeTopic, resource: "", ops: []alterOp{set("retention.ms", "1")}},
	{name: "topic/unknown-topic", typ: kmsg.ConfigResourceTypeTopic, resource: "no-such-topic", ops: []alterOp{set("retention.ms", "1")}},

	{name: "broker/read-only", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("num.partitions", "3")}},
	{name: "broker/unknown", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("no.such.config", "1")}, describe: []string{"no.such.config"}},
	{name: "broker/bad-value", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("message.max.bytes", "-1")}},
	{name: "broker/not-a-number", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("message.max.bytes", "x")}},
	{name: "broker/per-broker-only", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("log.dirs", "/tmp/x")}},
	{name: "broker/per-broker", typ: kmsg.ConfigResourceTypeBroker, resource: "1", ops: []alterOp{set("log.cleaner.min.compaction.lag.ms", "2")}, describe: []string{"log.cleaner.min.compaction.lag.ms"}},
	{name: "broker/other-broker", typ: kmsg.ConfigResourceTypeBroker, resource: "2", ops: []alterOp{set("log.cleaner.min.compaction.lag.ms", "2")}},
	{name: "broker/not-an-id", typ: kmsg.ConfigResourceTypeBroker, resource: "x", ops: []alterOp{set("log.cleaner.min.compaction.lag.ms", "2")}},
	{name: "broker/delete-unknown", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{del("no.such.config")}},
	{name: "broker/retention-hours", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("log.retention.hours", "1")}, describe: []string{"log.retention.hours", "log.retention.ms"}},
	{name: "broker/retention-hours-topic", typ: kmsg.ConfigResourceTypeTopic, resource: "cfgs", ops: []alterOp{set("retention.bytes", "-1")}, describe: []string{"retention.ms", "retention.bytes"}},
	{name: "broker/retention-hours-undo", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{del("log.retention.hours"), del("no.such.config")}},
	{name: "broker/min-isr-default", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{set("min.insync.replicas", "2")}, describe: []string{"min.insync.replicas"}},
	{name: "broker/min-isr-per-broker", typ: kmsg.ConfigResourceTypeBroker, resource: "1", ops: []alterOp{set("min.insync.replicas", "1")}, describe: []string{"min.insync.replicas", "log.cleaner.min.compaction.lag.ms"}},
	{name: "broker/min-isr-undo", typ: kmsg.ConfigResourceTypeBroker, resource: "1", ops: []alterOp{del("min.insync.replicas"), del("log.cleaner.min.compaction.lag.ms")}},
	{name: "broker/min-isr-undo-default", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{del("min.insync.replicas")}},
	{name: "broker/append", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{appendOp("log.cleanup.policy", "compact")}, describe: []string{"log.cleanup.policy"}},
	{name: "broker/append-undo", typ: kmsg.ConfigResourceTypeBroker, resource: "", ops: []alterOp{del("log.cleanup.policy")}},
	{name: "broker/legacy", typ: kmsg.ConfigResourceTypeBroker, resource: "", legacy: true, ops: []alterOp{set("log.cleaner.threads", "0")}},

	{name: "group/session-below-min", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("consumer.session.timeout.ms", "10000")}},
	{name: "group/session", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("consumer.session.timeout.ms", "50000")}, describe: []string{"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms", "share.auto.offset.reset"}},
	{name: "group/heartbeat-above-max", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("consumer.heartbeat.interval.ms", "50000")}},
	{name: "group/lock-below-min", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("share.record.lock.duration.ms", "5000")}},
	{name: "group/below-def-min", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("share.delivery.count.limit", "1")}},
	{name: "group/unknown", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("no.such.config", "1")}},
	{name: "group/reset", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("share.auto.offset.reset", "by_duration:PT1H")}, describe: []string{"share.auto.offset.reset"}},
	{name: "group/bad-reset", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("share.auto.offset.reset", "bogus")}},
	{name: "group/bad-isolation", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("share.isolation.level", "foo")}},
	{name: "group/standby", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("streams.num.standby.replicas", "5")}},
	{name: "group/dlq", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{set("errors.deadletterqueue.topic.name", "__x")}},
	{name: "group/session-vs-heartbeat", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group2", ops: []alterOp{set("share.session.timeout.ms", "45000"), set("share.heartbeat.interval.ms", "15000")}},
	{name: "group/default-resource", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "", ops: []alterOp{set("consumer.session.timeout.ms", "50000")}},
	{name: "group/delete", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", ops: []alterOp{del("consumer.session.timeout.ms"), del("no.such")}, describe: []string{"consumer.session.timeout.ms"}},
	{name: "group/legacy", typ: kmsg.ConfigResourceTypeGroupConfig, resource: "cfg-group", legacy: true, ops: []alterOp{set("consumer.session.timeout.ms", "50000")}},

	{name: "logger/unknown-level", typ: kmsg.ConfigResourceTypeBrokerLogger, resource: "1", ops: []alterOp{set("kafka.server.ReplicaManager", "LOUD")}},
	{name: "logger/set", typ: kmsg.ConfigResourceTypeBrokerLogger, resource: "1", ops: []alterOp{set("kafka.server.ReplicaManager", "DEBUG")}, describe: []string{"kafka.server.ReplicaManager"}},
	{name: "logger/delete-root", typ: kmsg.ConfigResourceTypeBrokerLogger, resource: "1", ops: []alterOp{del("root")}},
	// After a DELETE the logger takes the root's level: the reference
	// harness runs its brokers with root at ERROR, fakekafka at Kafka's
	// default INFO, so only the answer is compared.
	{name: "logger/delete", typ: kmsg.ConfigResourceTypeBrokerLogger, resource: "1", ops: []alterOp{del("kafka.server.ReplicaManager")}},
	{name: "logger/other-broker", typ: kmsg.ConfigResourceTypeBrokerLogger, resource: "2", ops: []alterOp{set("kafka", "INFO")}},
	{name: "logger/append", typ: kmsg.ConfigResourceTypeBrokerLogger, resource: "1", ops: []alterOp{appendOp("kafka", "INFO")}},
	{name: "logger/legacy", typ: kmsg.ConfigResourceTypeBrokerLogger, resource: "1", legacy: true, ops: []alterOp{set("kafka", "INFO")}},
}

// describeCases are DescribeConfigs of resources that fail, or of a few
// names, sent to broker 1.
var describeCases = []struct {
	name  string
	typ   kmsg.ConfigResourceType
	res   string
	names []string
}{
	{"describe/other-broker", kmsg.ConfigResourceTypeBroker, "2", nil},
	{"describe/not-a-broker-id", kmsg.ConfigResourceTypeBroker, "x", nil},
	{"describe/default-group", kmsg.ConfigResourceTypeGroupConfig, "", nil},
	{"describe/group-without-configs", kmsg.ConfigResourceTypeGroupConfig, "no-configs", []string{"consumer.session.timeout.ms", "share.record.lock.duration.ms", "streams.assignor.name"}},
	{"describe/logger-default", kmsg.ConfigResourceTypeBrokerLogger, "", nil},
	{"describe/logger-other-broker", kmsg.ConfigResourceTypeBrokerLogger, "2", nil},
	{"describe/bad-topic-name", kmsg.ConfigResourceTypeTopic, "a b", nil},
	{"describe/unknown-topic", kmsg.ConfigResourceTypeTopic, "no-such-topic", nil},
	{"describe/broker-names", kmsg.ConfigResourceTypeBroker, "1", []string{"log.retention.ms", "log.retention.hours", "log.roll.ms", "node.id", "broker.id", "sasl.jaas.config", "num.partitions"}},
}

// createCases are CreateTopics with configs: the answer's error and
// message, and the configs it lists (name=value(source)).
var createCases = []struct {
	name, topic  string
	validateOnly bool
	configs      map[string]string
}{
	{"create/newer-configs", "cfg-new", false, map[string]string{"segment.jitter.ms": "10", "message.timestamp.before.max.ms": "3600000", "compression.zstd.level": "5"}},
	{"create/validate-only", "cfg-vo", true, map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}},
	{"create/bad-value", "cfg-bad", false, map[string]string{"min.insync.replicas": "0"}},
	{"create/unknown", "cfg-unknown", false, map[string]string{"no.such.config": "1"}},
	{"create/remote", "cfg-remote", false, map[string]string{"remote.storage.enable": "true"}},
	{"create/small-segment", "cfg-seg", false, map[string]string{"segment.bytes": "1000"}},
	{"create/internal-segment", "cfg-iseg", false, map[string]string{"internal.segment.bytes": "1000"}},
}

func (r *run) createOutcome(topic string, validateOnly bool, configs map[string]string) string {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.TimeoutMillis, req.ValidateOnly = 30000, validateOnly
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 3
	for _, k := range sortedKeys(configs) {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(configs[k])
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	res := r.do(1, req).(*kmsg.CreateTopicsResponse).Topics[0]
	out := []string{errName(res.ErrorCode) + ": " + deref(res.ErrorMessage)}
	var cfgs []string
	for _, c := range res.Configs {
		cfgs = append(cfgs, fmt.Sprintf("%s=%s(%v) ro=%v sensitive=%v", c.Name, deref(c.Value), kmsg.ConfigSource(c.Source), c.ReadOnly, c.IsSensitive))
	}
	sort.Strings(cfgs)
	return strings.Join(append(out, cfgs...), "\n")
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// describeOutcome is one describeCase's answer in brief.
func (r *run) describeOutcome(typ kmsg.ConfigResourceType, name string, names []string) string {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, names
	req.Resources = append(req.Resources, rr)
	res := r.do(1, req).(*kmsg.DescribeConfigsResponse).Resources[0]
	lines := []string{errName(res.ErrorCode) + ": " + deref(res.ErrorMessage)}
	var cfgs []string
	for _, c := range res.Configs {
		cfgs = append(cfgs, configLine(c))
	}
	sort.Strings(cfgs)
	return strings.Join(append(lines, cfgs...), "\n")
}

// TestConfigAlters sends every alterCase to both clusters and compares the
// error codes and messages, and what a describe shows after it; then the
// describeCases.
func TestConfigAlters(t *testing.T) {
	tgs := targets(t)
	got := map[string][]string{}
	for _, tg := range tgs {
		r := newRun(t, tg)
		r.create("cfgs", nil)
		for _, c := range alterCases {
			got[c.name] = append(got[c.name], r.alterOutcome(c))
		}
		for _, c := range describeCases {
			got[c.name] = append(got[c.name], r.describeOutcome(c.typ, c.res, c.names))
		}
		for _, c := range createCases {
			got[c.name] = append(got[c.name], r.createOutcome(c.topic, c.validateOnly, c.configs))
		}
	}
	for _, c := range describeCases {
		alterCases = append(alterCases, alterCase{name: c.name})
	}
	for _, c := range createCases {
		alterCases = append(alterCases, alterCase{name: c.name})
	}
	if len(tgs) < 2 {
		for _, c := range alterCases {
			t.Logf("%s: %s", c.name, got[c.name][0])
		}
		return
	}
	for _, c := range alterCases {
		if g := got[c.name]; g[0] != g[1] {
			t.Errorf("%s:\nKafka:     %s\nfakekafka: %s", c.name, g[0], g[1])
		}
	}
}
