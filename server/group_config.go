package server

// A group's effective group-level configs (Kafka's GroupConfig): its
// overrides, set with IncrementalAlterConfigs on the GROUP resource, over
// the broker's group defaults (group_configs.go resolves them on every
// change).

import grp "github.com/fakekafka/fakekafka/group"

// groupConfig is group id's effective configuration. Every group state
// machine reads its timeouts and share/streams settings from here.
func (c *Cluster) groupConfig(id string) grp.Config {
	gs := c.groupCfgs.Load()
	if gc, ok := gs.resolved[id]; ok {
		return *gc
	}
	return gs.defaults
}
