package server

// AlterConfigs, versions 0-2, and IncrementalAlterConfigs, versions 0-1.
//
// AlterConfigs replaces the whole set of explicit configs of a resource
// (what it does not name reverts to the default); IncrementalAlterConfigs
// edits it: SET, DELETE (back to the default), and APPEND / SUBTRACT for
// list configs (cleanup.policy), which start from the current value,
// explicit or default. Either way the new set is validated whole, and with
// ValidateOnly nothing changes. A new topic config takes effect at once:
// every partition gets the new replication settings, so raising
// min.insync.replicas refuses the next acks=all produce with
// NOT_ENOUGH_REPLICAS, and lowering it lets a frozen HW move and completes
// parked produces.
//
// Topic resources (type 2) take the configs of topicConfigs. Broker
// resources (type 4), "" for the cluster-wide default or any broker's id
// (fakekafka keeps one set of broker configs for the whole cluster), take
// min.insync.replicas, unclean.leader.election.enable,
// replica.lag.time.max.ms, log.flush.interval.messages and
// message.max.bytes; they apply to every topic that does not set its own.
//
// Per resource: an unknown or read-only config, a bad value, or APPEND /
// SUBTRACT on a config that is not a list get INVALID_CONFIG with a message;
// an unknown topic UNKNOWN_TOPIC_OR_PARTITION; a resource named twice, a
// config named twice in a resource, a null value other than DELETE's, an
// unknown operation, an unknown broker id or another resource type
// INVALID_REQUEST.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerSettings are the broker configs in force: Config, overridden by
// what was changed at runtime. It is never modified.
type brokerSettings struct {
	dynamic         map[string]string // changed at runtime
	minISR          int
	unclean         bool
	lagTimeMax      time.Duration
	flushMessages   int64
	messageMaxBytes int32
}

func (c *Cluster) brokerSettings() *brokerSettings { return c.brokerCfg.Load() }

// resolveBrokerSettings lays validated dynamic configs over Config.
func (c *Cluster) resolveBrokerSettings(dynamic map[string]string) *brokerSettings {
	bs := &brokerSettings{
		dynamic:         dynamic,
		minISR:          c.cfg.MinInsyncReplicas,
		unclean:         c.cfg.UncleanLeaderElection,
		lagTimeMax:      c.cfg.ReplicaLagTimeMax,
		flushMessages:   c.cfg.FlushMessages,
		messageMaxBytes: c.cfg.MessageMaxBytes,
	}
	if v, ok := dynamic["min.insync.replicas"]; ok {
		bs.minISR, _ = strconv.Atoi(v)
	}
	if v, ok := dynamic["unclean.leader.election.enable"]; ok {
		bs.unclean = v == "true"
	}
	if v, ok := dynamic["replica.lag.time.max.ms"]; ok {
		bs.lagTimeMax = millis(v)
	}
	if v, ok := dynamic["log.flush.interval.messages"]; ok {
		bs.flushMessages, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := dynamic["message.max.bytes"]; ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		bs.messageMaxBytes = int32(n)
	}
	return bs
}

// validateBrokerConfigs checks that every key can change at runtime and
// every value is valid.
func validateBrokerConfigs(cfg map[string]string) error {
	for k, v := range cfg {
		def, ok := brokerConfigDefs[k]
		switch {
		case !ok:
			return fmt.Errorf("unknown broker config %q", k)
		case def.check == nil:
			return fmt.Errorf("broker config %s cannot be changed at runtime", k)
		}
		if err := def.check(v); err != nil {
			return fmt.Errorf("invalid value for %s: %v", k, err)
		}
	}
	return nil
}

// setTopicConfigs validates configs and makes them t's explicit configs:
// the settings are swapped and every partition takes the new replication
// settings under its lock, waking whatever the change unblocks. Callers
// hold c.configMu.
func (c *Cluster) setTopicConfigs(t *topic, configs map[string]string) error {
	if err := validateTopicConfigs(configs); err != nil {
		return err
	}
	c.applyTopicSettings(t, configs)
	c.emit(EventTopicConfigChanged, func(e *Event) { e.Topic, e.Configs = t.name, maps.Clone(configs) })
	c.applyReplicationConfig(t)
	c.saveMeta()
	c.log.Info("topic configs changed", "topic", t.name, "configs", configs)
	return nil
}

func (c *Cluster) applyReplicationConfig(t *topic) {
	rc := c.sharedReplicationConfig(t.cfg().configs)
	now := c.now()
	for _, p := range t.partitions() {
		p.mu.Lock()
		p.mutate(func() {
			p.st.SetConfigShared(rc, now)
			if p.st.Leader() < 0 && rc.UncleanLeaderElection {
				// Enabling unclean election elects leaderless partitions
				// right away, as the KRaft controller does (KIP-704).
				p.extras().ev.cause = "unclean.leader.election.enable"
				c.elect(p)
			}
		})
		p.mu.Unlock()
	}
}

// setBrokerConfigs validates dynamic and makes it the set of broker
// configs changed at runtime, then re-resolves every topic, so those
// without their own value follow. Callers hold c.configMu.
func (c *Cluster) setBrokerConfigs(dynamic map[string]string) error {
	if err := validateBrokerConfigs(dynamic); err != nil {
		return err
	}
	// Under topicsMu a topic being created either is in the snapshot or
	// resolves against the new settings.
	c.topicsMu.Lock()
	c.brokerCfg.Store(c.resolveBrokerSettings(dynamic))
	ts := c.topics.Load()
	c.topicsMu.Unlock()
	for _, t := range ts.byName {
		c.applyTopicSettings(t, t.cfg().configs)
		c.applyReplicationConfig(t)
	}
	c.saveMeta()
	c.log.Info("broker configs changed", "configs", dynamic)
	return nil
}

// configEdit turns a resource's current explicit configs (a copy the edit
// may modify) into the new set. effective gives a config's value in force,
// explicit or default; known says whether a key belongs to the resource.
type configEdit func(cur map[string]string, effective func(string) string, known func(string) bool) (map[string]string, *kerr.Error, string)

// alterConfigs applies edit to one resource, or with validateOnly only
// checks it.
func (c *Cluster) alterConfigs(typ kmsg.ConfigResourceType, name string, validateOnly bool, edit configEdit) (*kerr.Error, string) {
	c.configMu.Lock()
	defer c.configMu.Unlock()
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		t := c.topic(name)
		if t == nil {
			return kerr.UnknownTopicOrPartition, fmt.Sprintf("topic %q does not exist", name)
		}
		cur := t.cfg().configs
		effective := func(k string) string {
			if v, ok := cur[k]; ok {
				return v
			}
			return c.brokerConfig(c.brokerSettings(), topicConfigDefs[k].broker).value
		}
		known := func(k string) bool { _, ok := topicConfigs[k]; return ok }
		next, kerrv, msg := edit(cloneConfigs(cur), effective, known)
		if kerrv != nil {
			return kerrv, msg
		}
		if err := validateTopicConfigs(next); err != nil {
			return kerr.InvalidConfig, err.Error()
		}
		if !validateOnly {
			c.setTopicConfigs(t, next)
		}
	case kmsg.ConfigResourceTypeBroker:
		if kerrv, msg := c.checkBrokerResource(name); kerrv != nil {
			return kerrv, msg
		}
		bs := c.brokerSettings()
		effective := func(k string) string { return c.brokerConfig(bs, k).value }
		known := func(k string) bool { return brokerConfigDefs[k].check != nil }
		next, kerrv, msg := edit(cloneConfigs(bs.dynamic), effective, known)
		if kerrv != nil {
			return kerrv, msg
		}
		if err := validateBrokerConfigs(next); err != nil {
			return kerr.InvalidConfig, err.Error()
		}
		if !validateOnly {
			c.setBrokerConfigs(next)
		}
	default:
		return kerr.InvalidRequest, "fakekafka alters topic and broker configs only, not resource type " + typ.String()
	}
	return nil, ""
}

// cloneConfigs copies m, never returning nil.
func cloneConfigs(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}

// incrementalEdit is IncrementalAlterConfigs' edit of one resource.
func incrementalEdit(ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, isList func(string) bool) configEdit {
	return func(cur map[string]string, effective func(string) string, known func(string) bool) (map[string]string, *kerr.Error, string) {
		seen := map[string]bool{}
		for _, op := range ops {
			if seen[op.Name] {
				return nil, kerr.InvalidRequest, fmt.Sprintf("config %s is named more than once", op.Name)
			}
			seen[op.Name] = true
			if op.Value == nil && op.Op != kmsg.IncrementalAlterConfigOpDelete {
				return nil, kerr.InvalidRequest, fmt.Sprintf("null value not supported for %s", op.Name)
			}
			if !known(op.Name) {
				return nil, kerr.InvalidConfig, fmt.Sprintf("config %s is unknown or cannot be changed", op.Name)
			}
			switch op.Op {
			case kmsg.IncrementalAlterConfigOpSet:
				cur[op.Name] = *op.Value
			case kmsg.IncrementalAlterConfigOpDelete:
				delete(cur, op.Name)
			case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
				if !isList(op.Name) {
					return nil, kerr.InvalidConfig, fmt.Sprintf("cannot %s config %s: it is not a list", strings.ToLower(op.Op.String()), op.Name)
				}
				cur[op.Name] = editList(effective(op.Name), *op.Value, op.Op == kmsg.IncrementalAlterConfigOpAppend)
			default:
				return nil, kerr.InvalidRequest, fmt.Sprintf("unknown operation %d for %s", op.Op, op.Name)
			}
		}
		return cur, nil, ""
	}
}

// editList appends the comma-separated values missing from list, or
// removes those present.
func editList(list, values string, add bool) string {
	var items []string
	if list != "" {
		items = strings.Split(list, ",")
	}
	for _, v := range strings.Split(values, ",") {
		if add && !slices.Contains(items, v) {
			items = append(items, v)
		} else if !add {
			items = slices.DeleteFunc(items, func(x string) bool { return x == v })
		}
	}
	return strings.Join(items, ",")
}

// replaceEdit is AlterConfigs' edit: the request's configs, nothing else.
func replaceEdit(configs []kmsg.AlterConfigsRequestResourceConfig) configEdit {
	return func(map[string]string, func(string) string, func(string) bool) (map[string]string, *kerr.Error, string) {
		next := map[string]string{}
		for _, cfg := range configs {
			if _, dup := next[cfg.Name]; dup {
				return nil, kerr.InvalidRequest, fmt.Sprintf("config %s is named more than once", cfg.Name)
			}
			if cfg.Value == nil {
				return nil, kerr.InvalidRequest, fmt.Sprintf("null value not supported for %s", cfg.Name)
			}
			next[cfg.Name] = *cfg.Value
		}
		return next, nil, ""
	}
}

// isListConfig says which configs APPEND and SUBTRACT work on.
func isListConfig(typ kmsg.ConfigResourceType) func(string) bool {
	return func(name string) bool {
		if typ == kmsg.ConfigResourceTypeTopic {
			return topicConfigDefs[name].typ == kmsg.ConfigTypeList
		}
		return brokerConfigDefs[name].typ == kmsg.ConfigTypeList
	}
}

type configResource struct {
	typ  kmsg.ConfigResourceType
	name string
}

// alterResources alters each resource named once, in request order, and
// answers every distinct resource; one named twice fails whole with
// INVALID_REQUEST, as in Kafka.
func alterResources(keys []configResource, alter func(i int) (*kerr.Error, string), answer func(i int, err *kerr.Error, msg string)) {
	count := map[configResource]int{}
	for _, k := range keys {
		count[k]++
	}
	reported := map[configResource]bool{}
	for i, k := range keys {
		if reported[k] {
			continue
		}
		reported[k] = true
		err, msg := kerr.InvalidRequest, "duplicate resource"
		if count[k] == 1 {
			err, msg = alter(i)
		}
		answer(i, err, msg)
	}
}

func (cn *conn) handleAlterConfigs(req *kmsg.AlterConfigsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	keys := make([]configResource, len(req.Resources))
	for i, rr := range req.Resources {
		keys[i] = configResource{rr.ResourceType, rr.ResourceName}
	}
	alterResources(keys, func(i int) (*kerr.Error, string) {
		rr := &req.Resources[i]
		if denied := cn.configDenied(rr.ResourceType, rr.ResourceName, authorizer.OpAlterConfigs); denied != nil {
			return denied, "Authorization failed."
		}
		return c.alterConfigs(rr.ResourceType, rr.ResourceName, req.ValidateOnly, replaceEdit(rr.Configs))
	}, func(i int, err *kerr.Error, msg string) {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = keys[i].typ, keys[i].name
		if err != nil {
			sr.ErrorCode, sr.ErrorMessage = err.Code, &msg
		}
		resp.Resources = append(resp.Resources, sr)
	})
	return resp, nil
}

func (cn *conn) handleIncrementalAlterConfigs(req *kmsg.IncrementalAlterConfigsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	keys := make([]configResource, len(req.Resources))
	for i, rr := range req.Resources {
		keys[i] = configResource{rr.ResourceType, rr.ResourceName}
	}
	alterResources(keys, func(i int) (*kerr.Error, string) {
		rr := &req.Resources[i]
		if denied := cn.configDenied(rr.ResourceType, rr.ResourceName, authorizer.OpAlterConfigs); denied != nil {
			return denied, "Authorization failed."
		}
		return c.alterConfigs(rr.ResourceType, rr.ResourceName, req.ValidateOnly, incrementalEdit(rr.Configs, isListConfig(rr.ResourceType)))
	}, func(i int, err *kerr.Error, msg string) {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = keys[i].typ, keys[i].name
		if err != nil {
			sr.ErrorCode, sr.ErrorMessage = err.Code, &msg
		}
		resp.Resources = append(resp.Resources, sr)
	})
	return resp, nil
}

// AlterTopicConfig changes topic's explicit configs as
// IncrementalAlterConfigs does: set adds or replaces values, delete reverts
// configs to the broker default. Every partition takes the change at once.
func (c *Cluster) AlterTopicConfig(topic string, set map[string]string, delete []string) error {
	return c.alterByAPI(kmsg.ConfigResourceTypeTopic, topic, set, delete)
}

// AlterBrokerConfig changes the cluster-wide broker configs
// (min.insync.replicas, unclean.leader.election.enable,
// replica.lag.time.max.ms, log.flush.interval.messages, message.max.bytes)
// as IncrementalAlterConfigs on the default broker resource does: set
// overrides Config, delete reverts to it. Topics that do not set a config
// themselves follow at once.
func (c *Cluster) AlterBrokerConfig(set map[string]string, delete []string) error {
	return c.alterByAPI(kmsg.ConfigResourceTypeBroker, "", set, delete)
}

func (c *Cluster) alterByAPI(typ kmsg.ConfigResourceType, name string, set map[string]string, delete []string) error {
	var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
	for _, k := range delete {
		op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		op.Name, op.Op = k, kmsg.IncrementalAlterConfigOpDelete
		ops = append(ops, op)
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		op.Name, op.Op, op.Value = k, kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(set[k])
		ops = append(ops, op)
	}
	return kafkaError(c.alterConfigs(typ, name, false, incrementalEdit(ops, isListConfig(typ))))
}
