package server

// The broker configs a cluster starts with, by Kafka's names: what a
// server.properties would hold. Config's typed fields that differ from
// Kafka's default count, and Config.BrokerConfigs sets any broker config by
// name (DescribeConfigs reports both as STATIC_BROKER_CONFIG).

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
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
	"group.consumer.migration.policy":               func(c *Config) string { return c.ConsumerGroupMigrationPolicy },
	"max.incremental.fetch.session.cache.slots":     func(c *Config) string { return sessionSlots(c.FetchSessionCacheSlots) },
	"group.streams.heartbeat.interval.ms":           func(c *Config) string { return msOr(c.StreamsGroupHeartbeatInterval, "5000") },
	"group.streams.session.timeout.ms":              func(c *Config) string { return msOr(c.StreamsGroupSessionTimeout, "45000") },
	"group.streams.initial.rebalance.delay.ms":      func(c *Config) string { return streamsDelay(c.StreamsGroupInitialRebalanceDelay) },
	"group.streams.num.standby.replicas":            func(c *Config) string { return strconv.Itoa(int(c.StreamsGroupNumStandbyReplicas)) },
	"share.coordinator.state.topic.num.partitions":  func(c *Config) string { return strconv.Itoa(c.ShareStatePartitions) },
	"transaction.state.log.num.partitions":          func(c *Config) string { return strconv.Itoa(c.TransactionStatePartitions) },
	"transaction.state.log.replication.factor":      func(c *Config) string { return strconv.Itoa(c.TransactionStateReplicationFactor) },
	"transaction.max.timeout.ms":                    func(c *Config) string { return msString(c.TransactionMaxTimeout) },
	"transaction.abort.timed.out.transaction.cleanup.interval.ms": func(c *Config) string {
		return msString(c.TransactionAbortTimedOutInterval)
	},
	"transactional.id.expiration.ms": func(c *Config) string { return msString(c.TransactionalIDExpiration) },
	"delegation.token.secret.key":    func(c *Config) string { return c.DelegationTokenSecretKey },
	"delegation.token.max.lifetime.ms": func(c *Config) string {
		return msOr(c.DelegationTokenMaxLifetime, "604800000")
	},
	"delegation.token.expiry.time.ms": func(c *Config) string { return msOr(c.DelegationTokenExpiryTime, "86400000") },
	"delegation.token.expiry.check.interval.ms": func(c *Config) string {
		return msOr(c.DelegationTokenExpiryCheckInterval, "3600000")
	},
	"ssl.principal.mapping.rules":            func(c *Config) string { return c.SSLPrincipalMappingRules },
	"sasl.kerberos.principal.to.local.rules": func(c *Config) string { return c.SASLKerberosPrincipalToLocalRules },
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

// typedFields set Config's typed fields from BrokerConfigs entries of the
// same configs, so a config set by name acts as its typed field does.
var typedFields = map[string]func(c *Config, v string){
	"min.insync.replicas":                           func(c *Config, v string) { c.MinInsyncReplicas = atoi(v) },
	"unclean.leader.election.enable":                func(c *Config, v string) { c.UncleanLeaderElection = strings.EqualFold(v, "true") },
	"replica.lag.time.max.ms":                       func(c *Config, v string) { c.ReplicaLagTimeMax = millis(v) },
	"replica.fetch.wait.max.ms":                     func(c *Config, v string) { c.ReplicaFetchWaitMax = millis(v) },
	"num.partitions":                                func(c *Config, v string) { c.NumPartitions = atoi(v) },
	"default.replication.factor":                    func(c *Config, v string) { c.DefaultReplicationFactor = atoi(v) },
	"auto.create.topics.enable":                     func(c *Config, v string) { b := strings.EqualFold(v, "true"); c.AutoCreateTopics = &b },
	"message.max.bytes":                             func(c *Config, v string) { c.MessageMaxBytes = int32(atoi(v)) },
	"socket.request.max.bytes":                      func(c *Config, v string) { c.MaxRequestBytes = int32(atoi(v)) },
	"broker.session.timeout.ms":                     func(c *Config, v string) { c.BrokerSessionTimeout = millis(v) },
	"replica.high.watermark.checkpoint.interval.ms": func(c *Config, v string) { c.HWCheckpointInterval = millis(v) },
	"log.retention.check.interval.ms":               func(c *Config, v string) { c.RetentionCheckInterval = millis(v) },
	"log.initial.task.delay.ms":                     func(c *Config, v string) { c.LogInitialTaskDelay = orAtStart(millis(v)) },
	"offsets.retention.minutes":                     func(c *Config, v string) { c.OffsetsRetention = time.Duration(atoi(v)) * time.Minute },
	"offsets.retention.check.interval.ms":           func(c *Config, v string) { c.OffsetsRetentionCheckInterval = millis(v) },
	"producer.id.expiration.ms":                     func(c *Config, v string) { c.ProducerIDExpiration = millis(v) },
	"producer.id.expiration.check.interval.ms":      func(c *Config, v string) { c.ProducerIDExpirationCheckInterval = millis(v) },
	"log.cleaner.backoff.ms":                        func(c *Config, v string) { c.CleanerBackoff = millis(v) },
	"offsets.topic.num.partitions":                  func(c *Config, v string) { c.OffsetsTopicPartitions = atoi(v) },
	"offsets.topic.replication.factor":              func(c *Config, v string) { c.OffsetsTopicReplicationFactor = atoi(v) },
	"group.initial.rebalance.delay.ms":              func(c *Config, v string) { c.GroupInitialRebalanceDelay = millis(v) },
	"group.min.session.timeout.ms":                  func(c *Config, v string) { c.GroupMinSessionTimeout = millis(v) },
	"group.max.session.timeout.ms":                  func(c *Config, v string) { c.GroupMaxSessionTimeout = millis(v) },
	"group.consumer.heartbeat.interval.ms":          func(c *Config, v string) { c.ConsumerGroupHeartbeatInterval = millis(v) },
	"group.consumer.session.timeout.ms":             func(c *Config, v string) { c.ConsumerGroupSessionTimeout = millis(v) },
	"group.consumer.migration.policy":               func(c *Config, v string) { c.ConsumerGroupMigrationPolicy = v },
	"max.incremental.fetch.session.cache.slots": func(c *Config, v string) {
		if c.FetchSessionCacheSlots = atoi(v); c.FetchSessionCacheSlots == 0 {
			c.FetchSessionCacheSlots = -1 // Config's "none"
		}
	},
	"group.streams.heartbeat.interval.ms":          func(c *Config, v string) { c.StreamsGroupHeartbeatInterval = millis(v) },
	"group.streams.session.timeout.ms":             func(c *Config, v string) { c.StreamsGroupSessionTimeout = millis(v) },
	"group.streams.initial.rebalance.delay.ms":     func(c *Config, v string) { c.StreamsGroupInitialRebalanceDelay = streamsDelayValue(v) },
	"group.streams.num.standby.replicas":           func(c *Config, v string) { c.StreamsGroupNumStandbyReplicas = int32(atoi(v)) },
	"share.coordinator.state.topic.num.partitions": func(c *Config, v string) { c.ShareStatePartitions = atoi(v) },
	"transaction.state.log.num.partitions":         func(c *Config, v string) { c.TransactionStatePartitions = atoi(v) },
	"transaction.state.log.replication.factor":     func(c *Config, v string) { c.TransactionStateReplicationFactor = atoi(v) },
	"transaction.max.timeout.ms":                   func(c *Config, v string) { c.TransactionMaxTimeout = millis(v) },
	"transaction.abort.timed.out.transaction.cleanup.interval.ms": func(c *Config, v string) {
		c.TransactionAbortTimedOutInterval = millis(v)
	},
	"transactional.id.expiration.ms": func(c *Config, v string) { c.TransactionalIDExpiration = millis(v) },
	"delegation.token.secret.key":    func(c *Config, v string) { c.DelegationTokenSecretKey = v },
	"delegation.token.max.lifetime.ms": func(c *Config, v string) {
		c.DelegationTokenMaxLifetime = millis(v)
	},
	"delegation.token.expiry.time.ms": func(c *Config, v string) { c.DelegationTokenExpiryTime = millis(v) },
	"delegation.token.expiry.check.interval.ms": func(c *Config, v string) {
		c.DelegationTokenExpiryCheckInterval = millis(v)
	},
	"ssl.principal.mapping.rules":            func(c *Config, v string) { c.SSLPrincipalMappingRules = v },
	"sasl.kerberos.principal.to.local.rules": func(c *Config, v string) { c.SASLKerberosPrincipalToLocalRules = v },
}

func atoi(v string) int { n, _ := strconv.Atoi(strings.TrimSpace(v)); return n }

// applyBrokerConfigs checks c.BrokerConfigs and sets the typed fields of
// the configs it names.
func (c *Config) applyBrokerConfigs() error {
	if err := checkBrokerConfigs(c.BrokerConfigs); err != nil {
		return err
	}
	for k, v := range c.BrokerConfigs {
		if set := typedFields[k]; set != nil {
			set(c, v)
		}
	}
	return nil
}

// msOr renders a duration Config leaves at zero for Kafka's default as
// that default.
func msOr(d time.Duration, kafkaDefault string) string {
	if d <= 0 {
		return kafkaDefault
	}
	return msString(d)
}

// streamsDelay renders StreamsGroupInitialRebalanceDelay: zero is Kafka's
// 3 s, a negative delay none.
func streamsDelay(d time.Duration) string {
	switch {
	case d < 0:
		return "0"
	case d == 0:
		return "3000"
	}
	return msString(d)
}

// streamsDelayValue is streamsDelay's inverse: a configured 0 is none.
func streamsDelayValue(v string) time.Duration {
	if d := millis(v); d > 0 {
		return d
	}
	return -1
}

// sessionSlots renders FetchSessionCacheSlots: zero is Kafka's 1000, a
// negative value none.
func sessionSlots(n int) string {
	switch {
	case n < 0:
		return "0"
	case n == 0:
		return "1000"
	}
	return strconv.Itoa(n)
}

// orAtStart is a delay where 0 means at once, as Config's negative.
func orAtStart(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
