package server

// Group configs (Kafka's GroupConfig, set with IncrementalAlterConfigs or
// AlterConfigs on the GROUP resource): each group's explicit configs, kept
// in the cluster's metadata (meta.json with --data-dir), so they survive a
// coordinator failover and a restart; and each group's effective
// group.Config, resolved once on every change so that the group state
// machines read it without a lookup by config name.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/configs"
	grp "github.com/fakekafka/fakekafka/group"
)

// groupConfigs is every group's explicit configs and effective Config. It
// is replaced whole on every change and never modified.
type groupConfigs struct {
	explicit map[string]map[string]string
	resolved map[string]*grp.Config
	defaults grp.Config // the broker's group defaults
}

// groupConfigValue is group config name's value for a group with explicit
// configs ex: its own, else the broker's (cluster-wide level).
func groupConfigValue(bs *brokerSettings, ex map[string]string, name string) (string, bool) {
	if v, ok := ex[name]; ok {
		return v, true
	}
	d, _ := configs.Group.Lookup(name)
	return bs.defaultFor(clusterLevel, d)
}

// groupBounds are the broker configs that bound a group config, as
// GroupConfig.validate checks them: min and max ("" for none).
var groupBounds = []struct{ name, min, max string }{
	{"consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	{"consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
	{"consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"},
	{"share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
	{"share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
	{"share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
	{"share.delivery.count.limit", "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"},
	{"share.partition.max.record.locks", "group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"},
	{"share.assignment.interval.ms", "group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"},
	{"streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
	{"streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
	{"streams.num.standby.replicas", "", "group.streams.max.standby.replicas"},
	{"streams.assignment.interval.ms", "group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms"},
	{"streams.task.offset.interval.ms", "group.streams.min.task.offset.interval.ms", ""},
	{"streams.num.warmup.replicas", "", "group.streams.max.warmup.replicas"},
}

// sessionOverHeartbeat are the session timeouts that must exceed their
// heartbeat intervals.
var sessionOverHeartbeat = [][2]string{
	{"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"},
	{"share.session.timeout.ms", "share.heartbeat.interval.ms"},
	{"streams.session.timeout.ms", "streams.heartbeat.interval.ms"},
}

func (bs *brokerSettings) intValue(name string) int64 {
	v, _ := bs.value(clusterLevel, name)
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n
}

// validateGroupConfigs checks a group's whole new set of explicit configs
// as Kafka 4.4's GroupConfig.validate does, with its messages.
func validateGroupConfigs(bs *brokerSettings, cfg map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if _, ok := configs.Group.Lookup(k); !ok {
			return fmt.Errorf("Unknown group config name: %s", k)
		}
	}
	if v, ok := cfg["streams.rack.aware.assignment.tags"]; ok {
		tags := configs.SplitList(v)
		if len(tags) != len(uniq(tags)) {
			return fmt.Errorf("streams.rack.aware.assignment.tags must not contain duplicate tag keys.")
		}
	}
	for _, d := range configs.Group.Defs() {
		if v, ok := cfg[d.Name]; ok {
			if err := d.Check(v); err != nil {
				return err
			}
		}
	}
	num := func(k string) int64 { n, _ := strconv.ParseInt(strings.TrimSpace(cfg[k]), 10, 64); return n }
	for _, b := range groupBounds {
		if _, ok := cfg[b.name]; !ok {
			continue
		}
		n := num(b.name)
		switch {
		case b.min != "" && b.max != "":
			lo, hi := bs.intValue(b.min), bs.intValue(b.max)
			if n < lo || n > hi {
				return fmt.Errorf("%s must be in the range %d to %d inclusive.", b.name, lo, hi)
			}
		case b.max != "":
			if hi := bs.intValue(b.max); n > hi {
				return fmt.Errorf("%s must be less than or equal to %d", b.name, hi)
			}
		default:
			if lo := bs.intValue(b.min); n < lo {
				return fmt.Errorf("%s must be greater than or equal to %d", b.name, lo)
			}
		}
	}
	if v, ok := cfg["streams.assignor.name"]; ok {
		names, _ := bs.value(clusterLevel, "group.streams.assignors")
		if !slices.Contains(configs.SplitList(names), strings.TrimSpace(v)) {
			return fmt.Errorf("streams.assignor.name '%s' is not a registered task assignor. Registered assignors are: %s.", strings.TrimSpace(v), strings.Join(configs.SplitList(names), ", "))
		}
	}
	for _, p := range sessionOverHeartbeat {
		_, s := cfg[p[0]]
		_, h := cfg[p[1]]
		if !s && !h {
			continue
		}
		sv, _ := groupConfigValue(bs, cfg, p[0])
		hv, _ := groupConfigValue(bs, cfg, p[1])
		sn, _ := strconv.ParseInt(strings.TrimSpace(sv), 10, 64)
		hn, _ := strconv.ParseInt(strings.TrimSpace(hv), 10, 64)
		if sn <= hn {
			return fmt.Errorf("%s must be greater than %s", p[0], p[1])
		}
	}
	if v := strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"]); strings.HasPrefix(v, "__") {
		return fmt.Errorf("errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'")
	}
	return nil
}

// autoOffsetReset is share.auto.offset.reset with its strategy in lower
// case (Kafka reads it case-insensitively): latest, earliest or
// by_duration:<the ISO-8601 duration as given>.
func autoOffsetReset(v string) string {
	if len(v) > len("by_duration:") && strings.EqualFold(v[:len("by_duration:")], "by_duration:") {
		return "by_duration:" + v[len("by_duration:"):]
	}
	return strings.ToLower(v)
}

func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// resolveGroupConfig is a group's effective Config: ex over the broker's
// group defaults, each of the group's own bounded values capped into the
// broker's bounds as Kafka evaluates it (a bound may have changed since it
// was set).
func resolveGroupConfig(bs *brokerSettings, ex map[string]string) grp.Config {
	str := func(name string) string { v, _ := groupConfigValue(bs, ex, name); return strings.TrimSpace(v) }
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(str(name), 10, 64)
		if _, own := ex[name]; !own {
			return n // the broker's default, as Config sets it
		}
		for _, b := range groupBounds {
			if b.name != name {
				continue
			}
			if b.min != "" {
				n = max(n, bs.intValue(b.min))
			}
			if b.max != "" {
				n = min(n, bs.intValue(b.max))
			}
		}
		return n
	}
	ms := func(name string) time.Duration { return time.Duration(num(name)) * time.Millisecond }
	return grp.Config{
		ConsumerSessionTimeout:       ms("consumer.session.timeout.ms"),
		ConsumerHeartbeatInterval:    ms("consumer.heartbeat.interval.ms"),
		ShareSessionTimeout:          ms("share.session.timeout.ms"),
		ShareHeartbeatInterval:       ms("share.heartbeat.interval.ms"),
		ShareRecordLockDuration:      ms("share.record.lock.duration.ms"),
		ShareDeliveryCountLimit:      int32(num("share.delivery.count.limit")),
		ShareAutoOffsetReset:         autoOffsetReset(str("share.auto.offset.reset")),
		ShareIsolationLevel:          str("share.isolation.level"),
		ShareRenewAcknowledge:        strings.EqualFold(str("share.renew.acknowledge.enable"), "true"),
		SharePartitionMaxRecords:     int32(num("share.partition.max.record.locks")),
		StreamsSessionTimeout:        ms("streams.session.timeout.ms"),
		StreamsHeartbeatInterval:     ms("streams.heartbeat.interval.ms"),
		StreamsNumStandbyReplicas:    int32(num("streams.num.standby.replicas")),
		StreamsNumWarmupReplicas:     int32(num("streams.num.warmup.replicas")),
		StreamsAcceptableRecoveryLag: num("streams.acceptable.recovery.lag"),
		StreamsInitialRebalanceDelay: ms("streams.initial.rebalance.delay.ms"),
	}
}

// resolveGroupConfigs resolves every group's Config over bs.
func resolveGroupConfigs(bs *brokerSettings, explicit map[string]map[string]string) *groupConfigs {
	gs := &groupConfigs{explicit: explicit, resolved: make(map[string]*grp.Config, len(explicit)), defaults: resolveGroupConfig(bs, nil)}
	for id, ex := range explicit {
		gc := resolveGroupConfig(bs, ex)
		gs.resolved[id] = &gc
	}
	return gs
}

// setGroupConfigs makes cfg group id's explicit configs (none: the group
// has no configs left). Callers hold c.configMu and validated cfg.
func (c *Cluster) setGroupConfigs(id string, cfg map[string]string) {
	cur := c.groupCfgs.Load()
	explicit := maps.Clone(cur.explicit)
	if explicit == nil {
		explicit = map[string]map[string]string{}
	}
	if len(cfg) == 0 {
		delete(explicit, id)
	} else {
		explicit[id] = cfg
	}
	c.groupCfgs.Store(resolveGroupConfigs(c.brokerSettings(), explicit))
	c.emit(EventGroupConfigChanged, func(e *Event) { e.Group, e.Configs = id, maps.Clone(cfg) })
	c.saveMeta()
	c.log.Info("group configs changed", "group", id, "configs", cfg)
}

// groupExplicit is group id's explicit configs (shared: do not modify).
func (c *Cluster) groupExplicit(id string) map[string]string { return c.groupCfgs.Load().explicit[id] }

// AlterGroupConfig changes group's configs as IncrementalAlterConfigs on
// the GROUP resource does: set adds or replaces values (validated against
// the broker's bounds), delete reverts them to the broker's defaults.
func (c *Cluster) AlterGroupConfig(group string, set map[string]string, delete []string) error {
	return c.alterByAPI(configResourceTypeGroup, group, set, delete)
}

// GroupConfigs are group's explicit group configs.
func (c *Cluster) GroupConfigs(group string) map[string]string {
	return maps.Clone(c.groupExplicit(group))
}
