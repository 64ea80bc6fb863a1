package server

// A group's effective group-level configs (Kafka's GroupConfig): its
// overrides, set with IncrementalAlterConfigs on the GROUP resource, over
// the broker's group defaults.

import grp "github.com/fakekafka/fakekafka/group"

// groupConfig is group id's effective configuration. Every group state
// machine reads its timeouts and share/streams settings from here.
func (c *Cluster) groupConfig(id string) grp.Config {
	_ = id // per-group overrides: not stored yet
	gc := grp.DefaultConfig()
	gc.ConsumerSessionTimeout = c.cfg.ConsumerGroupSessionTimeout
	gc.ConsumerHeartbeatInterval = c.cfg.ConsumerGroupHeartbeatInterval
	c.streamsDefaults(&gc)
	return gc
}
