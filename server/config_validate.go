package server

// Topic configs checked as Kafka 4.4's LogConfig.validate checks them: the
// names, each value (configs.Def.Check), then the rules across configs.

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/configs"
	"github.com/twmb/franz-go/pkg/kerr"
)

// fakeTopicConfigs are fakekafka's own topic configs, which Kafka does not
// have: the Go API (Cluster.CreateTopic, AlterTopicConfig) takes them, the
// Kafka protocol refuses them as Kafka does.
var fakeTopicConfigs = map[string]*configs.Def{
	// A per-topic replica.lag.time.max.ms, so one test's topic can drop
	// lagging followers sooner than the rest.
	"replica.lag.time.max.ms": {Name: "replica.lag.time.max.ms", Type: configs.Long,
		Valid: &configs.Validator{Kind: configs.Range, Min: "1"}},
	// segment.bytes below Kafka 4.4's 1 MiB minimum, as fakekafka always
	// took it (over the protocol, internal.segment.bytes is Kafka's way).
	"segment.bytes": {Name: "segment.bytes", Type: configs.Int,
		Valid: &configs.Validator{Kind: configs.Range, Min: "14"}},
}

// validateTopicConfigs checks a topic's whole set of explicit configs.
// goAPI admits fakeTopicConfigs.
func validateTopicConfigs(cfg map[string]string, goAPI bool) *configErr {
	names := slices.Sorted(maps.Keys(cfg))
	def := func(k string) *configs.Def {
		if d, ok := fakeTopicConfigs[k]; ok && goAPI {
			return d
		}
		d, _ := configs.Topic.Lookup(k)
		return d
	}
	for _, k := range names {
		if def(k) == nil {
			return refuse(kerr.InvalidConfig, "Unknown topic config name: %s", k)
		}
	}
	for _, k := range names {
		if err := def(k).Check(cfg[k]); err != nil {
			return refuse(kerr.InvalidConfig, "%v", err)
		}
	}
	long := func(k string) int64 {
		v, ok := cfg[k]
		if !ok {
			if d := def(k); d != nil && d.Default != nil {
				v = *d.Default
			}
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n
	}
	if lo, hi := long("min.compaction.lag.ms"), long("max.compaction.lag.ms"); lo > hi {
		return refuse(kerr.InvalidConfig, "conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", lo, hi)
	}
	if strings.EqualFold(strings.TrimSpace(cfg["remote.storage.enable"]), "true") {
		// fakekafka has no remote log storage system, as a broker without
		// remote.log.storage.system.enable.
		return refuse(kerr.InvalidConfig, "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")
	}
	return nil
}
