package server

// DescribeConfigs, versions 0-4.
//
// Topic resources (type 2) list every topic config fakekafka knows
// (topicConfigs), as Kafka lists every LogConfig: the explicitly set ones
// with source DYNAMIC_TOPIC_CONFIG, the others with the value of the broker
// config that supplies their default (min.insync.replicas,
// message.max.bytes for max.message.bytes, log.flush.interval.messages for
// flush.messages, ...) and that config's source. A broker config's source
// is DYNAMIC_DEFAULT_BROKER_CONFIG once changed at runtime,
// STATIC_BROKER_CONFIG when the cluster's Config sets it to something other
// than Kafka's default, DEFAULT_CONFIG otherwise. A bad topic name gets
// INVALID_TOPIC_EXCEPTION, an unknown topic UNKNOWN_TOPIC_OR_PARTITION.
//
// Broker resources (type 4) are named by a broker id, which lists every
// broker config fakekafka models (the ones it cannot change at runtime are
// ReadOnly), or by "" for the cluster-wide defaults, which lists only those
// changed at runtime, as in Kafka. fakekafka keeps one set of broker configs
// for the whole cluster, so every broker id answers the same; an id that is
// no broker gets INVALID_REQUEST. Other resource types get INVALID_REQUEST.
//
// ConfigNames filters (null means all; names fakekafka does not know are
// left out); synonyms, highest precedence first, come with IncludeSynonyms
// (v1+); ConfigType is set (v3+); Documentation is always null. Nothing is
// sensitive.

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicConfigDef is what DescribeConfigs says about a topic config: its
// type, and the broker config that supplies its default (Kafka's synonym).
type topicConfigDef struct {
	typ    kmsg.ConfigType
	broker string
}

// topicConfigDefs has an entry for every key of topicConfigs (a test
// checks).
var topicConfigDefs = map[string]topicConfigDef{
	"min.insync.replicas":            {kmsg.ConfigTypeInt, "min.insync.replicas"},
	"unclean.leader.election.enable": {kmsg.ConfigTypeBoolean, "unclean.leader.election.enable"},
	"replica.lag.time.max.ms":        {kmsg.ConfigTypeLong, "replica.lag.time.max.ms"},
	"retention.ms":                   {kmsg.ConfigTypeLong, "log.retention.ms"},
	"retention.bytes":                {kmsg.ConfigTypeLong, "log.retention.bytes"},
	"cleanup.policy":                 {kmsg.ConfigTypeList, "log.cleanup.policy"},
	"compression.type":               {kmsg.ConfigTypeString, "compression.type"},
	"message.timestamp.type":         {kmsg.ConfigTypeString, "log.message.timestamp.type"},
	"segment.bytes":                  {kmsg.ConfigTypeInt, "log.segment.bytes"},
	"segment.ms":                     {kmsg.ConfigTypeLong, "log.roll.ms"},
	"max.message.bytes":              {kmsg.ConfigTypeInt, "message.max.bytes"},
	"flush.messages":                 {kmsg.ConfigTypeLong, "log.flush.interval.messages"},
	"flush.ms":                       {kmsg.ConfigTypeLong, "log.flush.interval.ms"},
	"min.cleanable.dirty.ratio":      {kmsg.ConfigTypeDouble, "log.cleaner.min.cleanable.ratio"},
	"min.compaction.lag.ms":          {kmsg.ConfigTypeLong, "log.cleaner.min.compaction.lag.ms"},
	"max.compaction.lag.ms":          {kmsg.ConfigTypeLong, "log.cleaner.max.compaction.lag.ms"},
	"delete.retention.ms":            {kmsg.ConfigTypeLong, "log.cleaner.delete.retention.ms"},
}

// brokerConfigDef is one broker config fakekafka models: its type, Kafka's
// default, the value the cluster's Config gives it, and for the configs
// that can change at runtime a check of a new value (nil: read-only).
type brokerConfigDef struct {
	typ          kmsg.ConfigType
	kafkaDefault string
	static       func(*Config) string
	check        func(string) error
}

// maxLong is Kafka's Long.MAX_VALUE, its "never" for flush settings.
const maxLong = "9223372036854775807"

func constant(v string) func(*Config) string { return func(*Config) string { return v } }

func msString(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// orNever renders fakekafka's 0 ("never") as Kafka's Long.MAX_VALUE.
func orNever(n int64) string {
	if n <= 0 {
		return maxLong
	}
	return strconv.FormatInt(n, 10)
}

var brokerConfigDefs = map[string]brokerConfigDef{
	// Changeable at runtime (Kafka's dynamic cluster-wide defaults).
	"min.insync.replicas": {kmsg.ConfigTypeInt, "1",
		func(c *Config) string { return strconv.Itoa(c.MinInsyncReplicas) }, int32AtLeast(1)},
	"unclean.leader.election.enable": {kmsg.ConfigTypeBoolean, "false",
		func(c *Config) string { return strconv.FormatBool(c.UncleanLeaderElection) }, isBool},
	"replica.lag.time.max.ms": {kmsg.ConfigTypeLong, "30000",
		func(c *Config) string { return msString(c.ReplicaLagTimeMax) }, intAtLeast(1)},
	"log.flush.interval.messages": {kmsg.ConfigTypeLong, maxLong,
		func(c *Config) string { return orNever(c.FlushMessages) }, intAtLeast(1)},
	"message.max.bytes": {kmsg.ConfigTypeInt, "1048588",
		func(c *Config) string { return strconv.Itoa(int(c.MessageMaxBytes)) }, int32AtLeast(0)},

	// Read-only: fixed when the cluster starts.
	"log.flush.interval.ms": {kmsg.ConfigTypeLong, maxLong,
		func(c *Config) string { return orNever(c.FlushInterval.Milliseconds()) }, nil},
	"num.partitions": {kmsg.ConfigTypeInt, "1",
		func(c *Config) string { return strconv.Itoa(c.NumPartitions) }, nil},
	"default.replication.factor": {kmsg.ConfigTypeInt, "1",
		func(c *Config) string { return strconv.Itoa(c.DefaultReplicationFactor) }, nil},
	"auto.create.topics.enable": {kmsg.ConfigTypeBoolean, "true",
		func(c *Config) string { return strconv.FormatBool(*c.AutoCreateTopics) }, nil},
	"socket.request.max.bytes": {kmsg.ConfigTypeInt, "104857600",
		func(c *Config) string { return strconv.Itoa(int(c.MaxRequestBytes)) }, nil},
	"broker.session.timeout.ms": {kmsg.ConfigTypeInt, "9000",
		func(c *Config) string { return msString(c.BrokerSessionTimeout) }, nil},
	"replica.high.watermark.checkpoint.interval.ms": {kmsg.ConfigTypeLong, "5000",
		func(c *Config) string { return msString(c.HWCheckpointInterval) }, nil},
	"log.retention.check.interval.ms": {kmsg.ConfigTypeLong, "300000",
		func(c *Config) string { return msString(c.RetentionCheckInterval) }, nil},
	"offsets.retention.minutes": {kmsg.ConfigTypeInt, "10080",
		func(c *Config) string { return strconv.FormatInt(int64(c.OffsetsRetention/time.Minute), 10) }, nil},
	"offsets.retention.check.interval.ms": {kmsg.ConfigTypeLong, "600000",
		func(c *Config) string { return msString(c.OffsetsRetentionCheckInterval) }, nil},
	"group.consumer.migration.policy": {kmsg.ConfigTypeString, "bidirectional",
		func(c *Config) string { return c.ConsumerGroupMigrationPolicy }, nil},
	"producer.id.expiration.ms": {kmsg.ConfigTypeInt, "86400000",
		func(c *Config) string { return msString(c.ProducerIDExpiration) }, nil},
	"producer.id.expiration.check.interval.ms": {kmsg.ConfigTypeInt, "600000",
		func(c *Config) string { return msString(c.ProducerIDExpirationCheckInterval) }, nil},
	// Defaults of the log's topic configs, changeable at runtime (log_config.go).
	"log.retention.ms":                  {kmsg.ConfigTypeLong, "604800000", constant("604800000"), intAtLeast(-1)},
	"log.retention.bytes":               {kmsg.ConfigTypeLong, "-1", constant("-1"), intAtLeast(-1)},
	"log.cleanup.policy":                {kmsg.ConfigTypeList, "delete", constant("delete"), cleanupPolicy},
	"log.segment.bytes":                 {kmsg.ConfigTypeInt, "1073741824", constant("1073741824"), int32AtLeast(14)},
	"log.roll.ms":                       {kmsg.ConfigTypeLong, "604800000", constant("604800000"), intAtLeast(1)},
	"log.cleaner.min.cleanable.ratio":   {kmsg.ConfigTypeDouble, "0.5", constant("0.5"), ratio},
	"log.cleaner.min.compaction.lag.ms": {kmsg.ConfigTypeLong, "0", constant("0"), intAtLeast(0)},
	"log.cleaner.max.compaction.lag.ms": {kmsg.ConfigTypeLong, maxLong, constant(maxLong), intAtLeast(1)},
	"log.cleaner.delete.retention.ms":   {kmsg.ConfigTypeLong, "86400000", constant("86400000"), intAtLeast(0)},
	"log.cleaner.backoff.ms": {kmsg.ConfigTypeLong, "15000",
		func(c *Config) string { return msString(c.CleanerBackoff) }, nil},
	// Defaults of topic configs that fakekafka accepts but does not act on.
	"compression.type":           {kmsg.ConfigTypeString, "producer", constant("producer"), nil},
	"log.message.timestamp.type": {kmsg.ConfigTypeString, "CreateTime", constant("CreateTime"), nil},
}

// configEntry is one described config, before version-specific encoding.
type configEntry struct {
	name     string
	value    string
	source   kmsg.ConfigSource
	readOnly bool
	typ      kmsg.ConfigType
	synonyms []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
}

func synonym(name, value string, source kmsg.ConfigSource) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name, s.Value, s.Source = name, &value, source
	return s
}

// brokerConfig describes broker config name under bs: its value, source
// and synonyms (the value at every level that sets it, highest first).
func (c *Cluster) brokerConfig(bs *brokerSettings, name string) configEntry {
	def := brokerConfigDefs[name]
	e := configEntry{name: name, typ: def.typ, readOnly: def.check == nil}
	static := def.static(&c.cfg)
	if v, ok := bs.dynamic[name]; ok {
		e.synonyms = append(e.synonyms, synonym(name, v, kmsg.ConfigSourceDynamicDefaultBrokerConfig))
	}
	if static != def.kafkaDefault {
		e.synonyms = append(e.synonyms, synonym(name, static, kmsg.ConfigSourceStaticBrokerConfig))
	}
	e.synonyms = append(e.synonyms, synonym(name, def.kafkaDefault, kmsg.ConfigSourceDefaultConfig))
	e.value, e.source = *e.synonyms[0].Value, e.synonyms[0].Source
	return e
}

// topicConfigEntries describes every topic config of t.
func (c *Cluster) topicConfigEntries(t *topic) []configEntry {
	explicit := t.cfg().configs
	bs := c.brokerSettings()
	var out []configEntry
	for _, name := range slices.Sorted(maps.Keys(topicConfigDefs)) {
		def := topicConfigDefs[name]
		b := c.brokerConfig(bs, def.broker)
		e := configEntry{name: name, typ: def.typ, value: b.value, source: b.source, synonyms: b.synonyms}
		if v, ok := explicit[name]; ok {
			e.value, e.source = v, kmsg.ConfigSourceDynamicTopicConfig
			e.synonyms = append([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{synonym(name, v, e.source)}, e.synonyms...)
		}
		out = append(out, e)
	}
	return out
}

// brokerConfigEntries describes the broker resource name: every broker
// config for a broker id, the runtime-changed defaults for "".
func (c *Cluster) brokerConfigEntries(name string) ([]configEntry, *kerr.Error, string) {
	if kerrv, msg := c.checkBrokerResource(name); kerrv != nil {
		return nil, kerrv, msg
	}
	bs := c.brokerSettings()
	var out []configEntry
	for _, k := range slices.Sorted(maps.Keys(brokerConfigDefs)) {
		if _, dynamic := bs.dynamic[k]; name == "" && !dynamic {
			continue
		}
		e := c.brokerConfig(bs, k)
		if name == "" {
			e.synonyms = e.synonyms[:1]
		}
		out = append(out, e)
	}
	if name != "" {
		// Read-only and per broker: Kafka lists it too.
		e := configEntry{name: "broker.id", value: name, source: kmsg.ConfigSourceStaticBrokerConfig, readOnly: true, typ: kmsg.ConfigTypeInt}
		e.synonyms = append(e.synonyms, synonym(e.name, name, e.source))
		out = append(out, e)
		slices.SortFunc(out, func(a, b configEntry) int { return strings.Compare(a.name, b.name) })
	}
	return out, nil, ""
}

// checkBrokerResource accepts "" (the cluster-wide default) and the id of
// any broker.
func (c *Cluster) checkBrokerResource(name string) (*kerr.Error, string) {
	if name == "" {
		return nil, ""
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil || id < 0 || id > math.MaxInt32 || c.broker(int32(id)) == nil {
		return kerr.InvalidRequest, "unknown broker " + strconv.Quote(name)
	}
	return nil, ""
}

func (cn *conn) handleDescribeConfigs(req *kmsg.DescribeConfigsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ErrorMessage = noMessage(req.Version, 0)
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var (
			entries []configEntry
			kerrv   *kerr.Error
			msg     string
		)
		switch denied := cn.configDenied(rr.ResourceType, rr.ResourceName, authorizer.OpDescribeConfigs); {
		case denied != nil:
			kerrv, msg = denied, "Authorization failed."
		case rr.ResourceType == kmsg.ConfigResourceTypeTopic:
			if err := legalTopicName(rr.ResourceName); err != nil {
				kerrv, msg = kerr.InvalidTopicException, err.Error()
			} else if t := c.topic(rr.ResourceName); t == nil {
				kerrv, msg = kerr.UnknownTopicOrPartition, "topic "+strconv.Quote(rr.ResourceName)+" does not exist"
			} else {
				entries = c.topicConfigEntries(t)
			}
		case rr.ResourceType == kmsg.ConfigResourceTypeBroker:
			entries, kerrv, msg = c.brokerConfigEntries(rr.ResourceName)
		default:
			kerrv, msg = kerr.InvalidRequest, "fakekafka describes topic and broker configs only, not resource type "+rr.ResourceType.String()
		}
		if kerrv != nil {
			sr.ErrorCode, sr.ErrorMessage = kerrv.Code, &msg
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		for _, e := range entries {
			if rr.ConfigNames != nil && !slices.Contains(rr.ConfigNames, e.name) {
				continue
			}
			sc := kmsg.NewDescribeConfigsResponseResourceConfig()
			sc.Name, sc.Value, sc.ReadOnly = e.name, &e.value, e.readOnly
			sc.Source = e.source
			// v0 has no source, only whether the resource itself sets it.
			if rr.ResourceType == kmsg.ConfigResourceTypeTopic {
				sc.IsDefault = e.source != kmsg.ConfigSourceDynamicTopicConfig
			} else {
				sc.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig
			}
			sc.ConfigType = e.typ
			if req.IncludeSynonyms {
				sc.ConfigSynonyms = e.synonyms
			}
			sr.Configs = append(sr.Configs, sc)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}
