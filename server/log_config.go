package server

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/replication"
)

// The log's topic configs (segments, retention, compaction), each resolved
// as Kafka does: the topic's own value, else the broker default changed at
// runtime (log.retention.ms, ...), else Kafka's default.

var cleanupPolicy = oneOf("delete", "compact", "compact,delete", "delete,compact")

// ratio checks a double in [0, 1] (min.cleanable.dirty.ratio).
func ratio(v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) {
		return fmt.Errorf("%q is not a number", v)
	}
	if f < 0 || f > 1 {
		return fmt.Errorf("%v is not between 0 and 1", f)
	}
	return nil
}

// logConfigDefault names each log topic config's broker default and
// Kafka's value for it.
var logConfigDefault = map[string]struct{ broker, value string }{
	"cleanup.policy":            {"log.cleanup.policy", "delete"},
	"retention.ms":              {"log.retention.ms", "604800000"},
	"retention.bytes":           {"log.retention.bytes", "-1"},
	"segment.bytes":             {"log.segment.bytes", "1073741824"},
	"segment.ms":                {"log.roll.ms", "604800000"},
	"min.cleanable.dirty.ratio": {"log.cleaner.min.cleanable.ratio", "0.5"},
	"min.compaction.lag.ms":     {"log.cleaner.min.compaction.lag.ms", "0"},
	"max.compaction.lag.ms":     {"log.cleaner.max.compaction.lag.ms", maxLong},
	"delete.retention.ms":       {"log.cleaner.delete.retention.ms", "86400000"},
}

// logValue resolves one log config for a topic.
func logValue(cfg map[string]string, bs *brokerSettings, key string) string {
	if v, ok := cfg[key]; ok {
		return v
	}
	d := logConfigDefault[key]
	if v, ok := bs.dynamic[d.broker]; ok {
		return v
	}
	return d.value
}

func logInt(cfg map[string]string, bs *brokerSettings, key string) int64 {
	n, _ := strconv.ParseInt(logValue(cfg, bs, key), 10, 64)
	return n
}

// logConfig resolves a topic's segment, retention and compaction settings.
func logConfig(cfg map[string]string, bs *brokerSettings) (replication.SegmentConfig, replication.RetentionConfig, replication.CompactionConfig) {
	seg := replication.SegmentConfig{Bytes: logInt(cfg, bs, "segment.bytes"), Ms: logInt(cfg, bs, "segment.ms")}
	policy := logValue(cfg, bs, "cleanup.policy")
	ret := replication.RetentionConfig{
		Delete: strings.Contains(policy, "delete"),
		Ms:     logInt(cfg, bs, "retention.ms"),
		Bytes:  logInt(cfg, bs, "retention.bytes"),
	}
	dirty, _ := strconv.ParseFloat(logValue(cfg, bs, "min.cleanable.dirty.ratio"), 64)
	cmp := replication.CompactionConfig{
		Compact:                strings.Contains(policy, "compact"),
		MinCleanableDirtyRatio: dirty,
		MinLagMs:               logInt(cfg, bs, "min.compaction.lag.ms"),
		MaxLagMs:               logInt(cfg, bs, "max.compaction.lag.ms"),
		DeleteRetentionMs:      logInt(cfg, bs, "delete.retention.ms"),
	}
	if cmp.MaxLagMs == math.MaxInt64 {
		cmp.MaxLagMs = 0 // never
	}
	return seg, ret, cmp
}
