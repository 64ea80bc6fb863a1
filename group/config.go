package group

// Group-level configs (Kafka's GroupConfig, KIP-848/932/1071): what one
// group overrides of the broker's group defaults. The server resolves a
// group's effective Config (its overrides over the broker defaults) and
// hands it to the state machines; they never read broker configs.

import "time"

// Config is a group's effective configuration. Field names follow the
// config keys (consumer.session.timeout.ms → ConsumerSessionTimeout).
type Config struct {
	ConsumerSessionTimeout    time.Duration // consumer.session.timeout.ms
	ConsumerHeartbeatInterval time.Duration // consumer.heartbeat.interval.ms

	ShareSessionTimeout      time.Duration // share.session.timeout.ms
	ShareHeartbeatInterval   time.Duration // share.heartbeat.interval.ms
	ShareRecordLockDuration  time.Duration // share.record.lock.duration.ms
	ShareDeliveryCountLimit  int32         // share.delivery.count.limit
	ShareAutoOffsetReset     string        // share.auto.offset.reset: latest, earliest or by_duration:<ISO-8601>
	ShareIsolationLevel      string        // share.isolation.level: read_uncommitted or read_committed
	ShareRenewAcknowledge    bool          // share.renew.acknowledge.enable
	SharePartitionMaxRecords int32         // group.share.partition.max.record.locks (broker-level only)

	StreamsSessionTimeout        time.Duration // streams.session.timeout.ms
	StreamsHeartbeatInterval     time.Duration // streams.heartbeat.interval.ms
	StreamsNumStandbyReplicas    int32         // streams.num.standby.replicas
	StreamsNumWarmupReplicas     int32         // streams.num.warmup.replicas
	StreamsAcceptableRecoveryLag int64         // streams.acceptable.recovery.lag
	StreamsInitialRebalanceDelay time.Duration // streams.initial.rebalance.delay.ms
}

// DefaultConfig is Kafka 4.4's broker defaults for every group config.
func DefaultConfig() Config {
	return Config{
		ConsumerSessionTimeout:       45 * time.Second,
		ConsumerHeartbeatInterval:    5 * time.Second,
		ShareSessionTimeout:          45 * time.Second,
		ShareHeartbeatInterval:       5 * time.Second,
		ShareRecordLockDuration:      30 * time.Second,
		ShareDeliveryCountLimit:      5,
		ShareAutoOffsetReset:         "latest",
		ShareIsolationLevel:          "read_uncommitted",
		ShareRenewAcknowledge:        true,
		SharePartitionMaxRecords:     2000,
		StreamsSessionTimeout:        45 * time.Second,
		StreamsHeartbeatInterval:     5 * time.Second,
		StreamsNumStandbyReplicas:    0,
		StreamsNumWarmupReplicas:     2,
		StreamsAcceptableRecoveryLag: 10000,
		StreamsInitialRebalanceDelay: 3 * time.Second,
	}
}
