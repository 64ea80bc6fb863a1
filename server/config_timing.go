package server

// Timing: fakekafka's defaults keep failure detection and the first
// rebalance instant, so unit tests do not wait; Config.Timing "kafka" sets
// those to Kafka 4.4's defaults, so a test sees what production sees (a
// crashed broker's partitions stay unavailable until its session times
// out). docs/failures.md has the table.

import (
	"fmt"
	"time"
)

// Config.Timing values.
const (
	// TimingFast is the default: a crashed broker is fenced at once and a
	// new group's first rebalance does not wait.
	TimingFast = "fast"
	// TimingKafka uses Kafka 4.4's defaults for every timeout and interval
	// fakekafka otherwise shortens.
	TimingKafka = "kafka"
)

// kafkaTimings are the settings whose fakekafka default is shorter than
// Kafka 4.4's, with Kafka's default: what TimingKafka sets when the field
// is left zero. Every other timeout and interval already defaults to
// Kafka's value.
var kafkaTimings = []struct {
	name  string // Kafka's config name
	field func(*Config) *time.Duration
	kafka time.Duration
}{
	{"broker.session.timeout.ms", func(c *Config) *time.Duration { return &c.BrokerSessionTimeout }, 9 * time.Second},
	{"group.initial.rebalance.delay.ms", func(c *Config) *time.Duration { return &c.GroupInitialRebalanceDelay }, 3 * time.Second},
}

// applyTiming checks Timing and, for TimingKafka, gives every setting of
// kafkaTimings left zero Kafka's default. A setting given a value keeps it,
// and so does one BrokerConfigs names, even as 0.
func (c *Config) applyTiming() error {
	switch c.Timing {
	case "", TimingFast:
		c.Timing = TimingFast
		return nil
	case TimingKafka:
	default:
		return fmt.Errorf("timing must be %q or %q, got %q", TimingFast, TimingKafka, c.Timing)
	}
	for _, s := range kafkaTimings {
		if _, named := c.BrokerConfigs[s.name]; named {
			continue // set by name, even to 0
		}
		if d := s.field(c); *d == 0 {
			*d = s.kafka
		}
	}
	return nil
}
