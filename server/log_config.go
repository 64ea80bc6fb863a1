package server

import (
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/replication"
)

// The log's topic configs (segments, retention, compaction), each resolved
// as Kafka does: the topic's own value, else the broker default changed at
// runtime (log.retention.ms, ...), else Kafka's default.

var cleanupPolicy = oneOf("delete", "compact", "compact,delete", "delete,compact")

// logConfigDefault names each log topic config's broker default and
// Kafka's value for it.
var logConfigDefault = map[string]struct{ broker, value string }{
	"cleanup.policy":  {"log.cleanup.policy", "delete"},
	"retention.ms":    {"log.retention.ms", "604800000"},
	"retention.bytes": {"log.retention.bytes", "-1"},
	"segment.bytes":   {"log.segment.bytes", "1073741824"},
	"segment.ms":      {"log.roll.ms", "604800000"},
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

// logConfig resolves a topic's segment and retention settings.
func logConfig(cfg map[string]string, bs *brokerSettings) (replication.SegmentConfig, replication.RetentionConfig) {
	seg := replication.SegmentConfig{Bytes: logInt(cfg, bs, "segment.bytes"), Ms: logInt(cfg, bs, "segment.ms")}
	ret := replication.RetentionConfig{
		Delete: strings.Contains(logValue(cfg, bs, "cleanup.policy"), "delete"),
		Ms:     logInt(cfg, bs, "retention.ms"),
		Bytes:  logInt(cfg, bs, "retention.bytes"),
	}
	return seg, ret
}
