package server

import (
	"math"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/configs"
	"github.com/fakekafka/fakekafka/replication"
)

// The log's topic configs (segments, retention, compaction), each resolved
// as Kafka does: the topic's own value, else the broker default changed at
// runtime (log.retention.ms, ...), else Kafka's default.

// logValue resolves one log config for a topic: its own value, else the
// broker's (the cluster-wide level: log.retention.ms, log.retention.hours,
// ...), else Kafka's default.
func logValue(cfg map[string]string, bs *brokerSettings, key string) string {
	if v, ok := cfg[key]; ok {
		return strings.TrimSpace(v)
	}
	d, _ := configs.Topic.Lookup(key)
	v, _ := bs.defaultFor(clusterLevel, d)
	return strings.TrimSpace(v)
}

func logInt(cfg map[string]string, bs *brokerSettings, key string) int64 {
	n, _ := strconv.ParseInt(logValue(cfg, bs, key), 10, 64)
	return n
}

// logConfig resolves a topic's segment, retention and compaction settings.
func logConfig(cfg map[string]string, bs *brokerSettings) (replication.SegmentConfig, replication.RetentionConfig, replication.CompactionConfig) {
	seg := replication.SegmentConfig{Bytes: logInt(cfg, bs, "segment.bytes"), Ms: logInt(cfg, bs, "segment.ms")}
	if v, ok := cfg["internal.segment.bytes"]; ok { // Kafka's own for tests: wins
		seg.Bytes, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	}
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
