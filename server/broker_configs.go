package server

// Broker configs changed at runtime: the cluster-wide defaults (the ""
// BROKER resource, DYNAMIC_DEFAULT_BROKER_CONFIG) and each broker's own
// (its id, DYNAMIC_BROKER_CONFIG), checked as Kafka's DynamicBrokerConfig
// checks them. fakekafka acts on the cluster-wide level (a broker's own
// values are stored and described); the settings it reads on hot paths are
// resolved once per change into brokerSettings.

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/configs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerSettings are the broker configs in force. It is never modified.
type brokerSettings struct {
	dynamic   map[string]string           // cluster-wide defaults changed at runtime
	perBroker map[int32]map[string]string // each broker's own, changed at runtime
	static    map[string]string           // what the cluster started with (config_static.go)

	// Resolved at the cluster-wide level for the hot paths.
	minISR          int
	unclean         bool
	lagTimeMax      time.Duration
	flushMessages   int64
	messageMaxBytes int32
}

func (c *Cluster) brokerSettings() *brokerSettings { return c.brokerCfg.Load() }

// resolveBrokerSettings lays validated dynamic configs over Config.
func (c *Cluster) resolveBrokerSettings(dynamic map[string]string, perBroker map[int32]map[string]string) *brokerSettings {
	bs := &brokerSettings{
		dynamic:         dynamic,
		perBroker:       perBroker,
		static:          c.staticBroker,
		minISR:          c.cfg.MinInsyncReplicas,
		unclean:         c.cfg.UncleanLeaderElection,
		lagTimeMax:      c.cfg.ReplicaLagTimeMax,
		flushMessages:   c.cfg.FlushMessages,
		messageMaxBytes: c.cfg.MessageMaxBytes,
	}
	// A value set by name (dynamically, or in Config.BrokerConfigs) wins
	// over the typed field.
	named := func(k string) (string, bool) {
		if v, ok := dynamic[k]; ok {
			return strings.TrimSpace(v), true
		}
		v, ok := c.cfg.BrokerConfigs[k]
		return strings.TrimSpace(v), ok
	}
	if v, ok := named("min.insync.replicas"); ok {
		bs.minISR, _ = strconv.Atoi(v)
	}
	if v, ok := named("unclean.leader.election.enable"); ok {
		bs.unclean = strings.EqualFold(v, "true")
	}
	if v, ok := named("replica.lag.time.max.ms"); ok {
		bs.lagTimeMax = millis(v)
	}
	if v, ok := named("log.flush.interval.messages"); ok {
		bs.flushMessages, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := named("message.max.bytes"); ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		bs.messageMaxBytes = int32(n)
	}
	return bs
}

// alterBroker changes a BROKER resource: "" or the receiving broker's id.
func (c *Cluster) alterBroker(r *alterRequest) *configErr {
	level := clusterLevel
	if r.name != "" {
		id, err := strconv.ParseInt(r.name, 10, 32)
		if err != nil {
			return refuse(kerr.InvalidRequest, "Node id must be an integer, but it is: %s", r.name)
		}
		switch {
		case r.broker != clusterLevel && int32(id) != r.broker:
			return refuse(kerr.InvalidRequest, "Unexpected broker id, expected %d, but received %s", r.broker, r.name)
		case c.broker(int32(id)) == nil:
			return refuse(kerr.InvalidRequest, "Unexpected broker id %s", r.name)
		}
		level = int32(id)
	}
	for _, o := range r.ops {
		if !r.replace && o.op > kmsg.IncrementalAlterConfigOpSubtract {
			return refuse(kerr.InvalidRequest, "Unknown operations type %d", o.op)
		}
	}
	c.configMu.Lock()
	defer c.configMu.Unlock()
	bs := c.brokerSettings()
	cur := bs.dynamic
	if level != clusterLevel {
		cur = bs.perBroker[level]
	}
	effective := func(k string) (string, bool) { return bs.value(level, k) }
	next, e := r.edit(cloneConfigs(cur), effective, brokerDef)
	if e != nil {
		return e
	}
	if msg := validateBrokerConfigs(next, level != clusterLevel); msg != "" {
		return refuse(kerr.InvalidRequest, "%s", msg)
	}
	if msg := validateCordonedLogDirs(next, level); msg != "" { // log_dir_cordon.go
		return refuse(kerr.InvalidRequest, "%s", msg)
	}
	if r.validateOnly {
		return nil
	}
	dynamic, perBroker := bs.dynamic, bs.perBroker
	if level == clusterLevel {
		dynamic = next
	} else {
		perBroker = maps.Clone(perBroker)
		if perBroker == nil {
			perBroker = map[int32]map[string]string{}
		}
		perBroker[level] = next
		if len(next) == 0 {
			delete(perBroker, level)
		}
	}
	c.setBrokerConfigs(dynamic, perBroker)
	return nil
}

// validateBrokerConfigs checks a broker resource's new dynamic configs as
// DynamicBrokerConfig.validateConfigs does; "" when they pass. Names Kafka
// does not know pass, as in Kafka.
func validateBrokerConfigs(cfg map[string]string, perBroker bool) string {
	var static, perBrokerOnly []string
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if d, ok := configs.Broker.Lookup(k); ok && d.Mode == configs.ReadOnly {
			static = append(static, k)
		}
	}
	if len(static) > 0 {
		return "Cannot update these configs dynamically: [" + strings.Join(static, ", ") + "]"
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		d, ok := configs.Broker.Lookup(k)
		if !ok {
			continue
		}
		if err := d.Check(cfg[k]); err != nil {
			return err.Error()
		}
		if d.Mode == configs.PerBroker {
			perBrokerOnly = append(perBrokerOnly, k)
		}
	}
	if v, ok := cfg["log.cleaner.threads"]; ok && strings.TrimSpace(v) == "0" {
		// Kafka's cleaner divides its buffer by the thread count while it
		// checks the change, and answers the ArithmeticException.
		return "/ by zero"
	}
	if !perBroker && len(perBrokerOnly) > 0 {
		return "Cannot update these configs at default cluster level, broker id must be specified: [" + strings.Join(perBrokerOnly, ", ") + "]"
	}
	return ""
}

// setBrokerConfigs makes dynamic and perBroker the broker configs changed
// at runtime, then re-resolves every topic (those without their own value
// follow) and every group's configs. Callers hold c.configMu.
func (c *Cluster) setBrokerConfigs(dynamic map[string]string, perBroker map[int32]map[string]string) {
	// Under topicsMu a topic being created either is in the snapshot or
	// resolves against the new settings.
	c.topicsMu.Lock()
	bs := c.resolveBrokerSettings(dynamic, perBroker)
	c.brokerCfg.Store(bs)
	ts := c.topics.Load()
	c.topicsMu.Unlock()
	for _, t := range ts.byName {
		c.applyTopicSettings(t, t.cfg().configs)
		c.applyReplicationConfig(t)
	}
	c.groupCfgs.Store(resolveGroupConfigs(bs, c.groupCfgs.Load().explicit))
	c.saveMeta()
	c.log.Info("broker configs changed", "configs", dynamic, "per_broker", perBroker)
}
