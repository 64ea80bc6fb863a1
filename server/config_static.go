package server

// The broker configs a cluster starts with, by Kafka's names: what a
// server.properties would hold. Config's typed fields that differ from
// Kafka's default count, and Config.BrokerConfigs sets any broker config by
// name (DescribeConfigs reports both as STATIC_BROKER_CONFIG).

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/fakekafka/fakekafka/configs"
)

// staticFields maps Config's typed fields to Kafka's broker config names.
var staticFields = map[string]func(*Config) string{
	"min.insync.replicas":                           func(c *Config) string { return strconv.Itoa(c.MinInsyncReplicas) },
	"unclean.leader.election.enable":                func(c *Config) string { return strconv.FormatBool(c.UncleanLeaderElection) },
	"replica.lag.time.max.ms":                       func(c *Config) string { return msString(c.ReplicaLagTimeMax) },
	"replica.fetch.wait.max.ms":                     func(c *Config) string { return msString(c.ReplicaFetchWaitMax) },
	"log.flush.interval.messages":                   func(c *Config) string { return orNever(c.FlushMessages) },
	"message.max.bytes":                             func(c *Config) string { return strconv.Itoa(int(c.MessageMaxBytes)) },
	"log.flush.interval.ms":                         func(c *Config) string { return flushMs(c.FlushInterval) },
	"num.partitions":                                func(c *Config) string { return strconv.Itoa(c.NumPartitions) },
	"default.replication.factor":                    func(c *Config) string { return strconv.Itoa(c.DefaultReplicationFactor) },
	"auto.create.topics.enable":                     func(c *Config) string { return strconv.FormatBool(*c.AutoCreateTopics) },
	"socket.request.max.bytes":                      func(c *Config) string { return strconv.Itoa(int(c.MaxRequestBytes)) },
	"broker.session.timeout.ms":                     func(c *Config) string { return msString(c.BrokerSessionTimeout) },
	"replica.high.watermark.checkpoint.interval.ms": func(c *Config) string { return msString(c.HWCheckpointInterval) },
	"log.retention.check.interval.ms":               func(c *Config) string { return msString(c.RetentionCheckInterval) },
	"offsets.retention.minutes":                     func(c *Config) string { return strconv.FormatInt(int64(c.OffsetsRetention/time.Minute), 10) },
	"offsets.retention.check.interval.ms":           func(c *Config) string { return msString(c.OffsetsRetentionCheckInterval) },
	"producer.id.expiration.ms":                     func(c *Config) string { return msString(c.ProducerIDExpiration) },
	"producer.id.expiration.check.interval.ms":      func(c *Config) string { return msString(c.ProducerIDExpirationCheckInterval) },
	"log.cleaner.backoff.ms":                        func(c *Config) string { return msString(c.CleanerBackoff) },
	"offsets.topic.num.partitions":                  func(c *Config) string { return strconv.Itoa(c.OffsetsTopicPartitions) },
	"offsets.topic.replication.factor":              func(c *Config) string { return strconv.Itoa(c.OffsetsTopicReplicationFactor) },
	"group.initial.rebalance.delay.ms":              func(c *Config) string { return msString(c.GroupInitialRebalanceDelay) },
	"group.min.session.timeout.ms":                  func(c *Config) string { return msString(c.GroupMinSessionTimeout) },
	"group.max.session.timeout.ms":                  func(c *Config) string { return msString(c.GroupMaxSessionTimeout) },
	"group.consumer.heartbeat.interval.ms":          func(c *Config) string { return msString(c.ConsumerGroupHeartbeatInterval) },
	"group.consumer.session.timeout.ms":             func(c *Config) string { return msString(c.ConsumerGroupSessionTimeout) },
	"transaction.state.log.num.partitions":          func(c *Config) string { return strconv.Itoa(c.TransactionStatePartitions) },
	"transaction.state.log.replication.factor":      func(c *Config) string { return strconv.Itoa(c.TransactionStateReplicationFactor) },
	"transaction.max.timeout.ms":                    func(c *Config) string { return msString(c.TransactionMaxTimeout) },
	"transaction.abort.timed.out.transaction.cleanup.interval.ms": func(c *Config) string {
		return msString(c.TransactionAbortTimedOutInterval)
	},
	"transactional.id.expiration.ms": func(c *Config) string { return msString(c.TransactionalIDExpiration) },
}

// maxLong is Kafka's Long.MAX_VALUE, its "never" for flush settings.
const maxLong = "9223372036854775807"

func msString(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// orNever renders fakekafka's 0 ("never") as Kafka's Long.MAX_VALUE.
func orNever(n int64) string {
	if n <= 0 {
		return maxLong
	}
	return strconv.FormatInt(n, 10)
}

// flushMs is log.flush.interval.ms: null (Kafka's default, falling back
// to the scheduler interval, itself "never") when fakekafka never flushes
// on time.
func flushMs(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return msString(d)
}

// staticBrokerConfigs are the static broker configs of cfg (with its
// defaults applied): the typed fields that differ from Kafka's default,
// then BrokerConfigs.
func staticBrokerConfigs(cfg *Config) map[string]string {
	out := map[string]string{}
	for name, f := range staticFields {
		v := f(cfg)
		d, _ := configs.Broker.Lookup(name)
		if v == "" || d != nil && d.Default != nil && d.Canonical(*d.Default) == d.Canonical(v) {
			continue
		}
		out[name] = v
	}
	maps.Copy(out, cfg.BrokerConfigs)
	return out
}

// checkBrokerConfigs refuses a Config.BrokerConfigs entry Kafka would
// refuse in server.properties: an unknown name or a bad value.
func checkBrokerConfigs(m map[string]string) error {
	for k, v := range m {
		d, ok := configs.Broker.Lookup(k)
		if !ok {
			return fmt.Errorf("BrokerConfigs: unknown broker config %q", k)
		}
		if err := d.Check(v); err != nil {
			return fmt.Errorf("BrokerConfigs: %v", err)
		}
	}
	return nil
}
