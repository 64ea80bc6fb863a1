package server

// AlterConfigs, versions 0-2, and IncrementalAlterConfigs, versions 0-1.
//
// AlterConfigs replaces the whole set of explicit configs of a resource
// (what it does not name reverts to the default); IncrementalAlterConfigs
// edits it: SET, DELETE (back to the default; deleting a config that is not
// set, or not known, is no error), and APPEND / SUBTRACT for LIST configs
// (cleanup.policy), which start from the current value, explicit or
// default. Either way the new set is checked whole as Kafka 4.4 checks it
// (config_validate.go) and with ValidateOnly nothing changes.
//
// TOPIC resources take every topic config of Kafka's catalogue (package
// configs); those fakekafka acts on take effect at once (log_config.go,
// topic.go): raising min.insync.replicas refuses the next acks=all produce
// with NOT_ENOUGH_REPLICAS, lowering it lets a frozen HW move. BROKER
// resources are the cluster-wide default ("", DYNAMIC_DEFAULT_BROKER_CONFIG)
// or the broker the request was sent to (its id, DYNAMIC_BROKER_CONFIG);
// only configs Kafka can change dynamically are accepted, names Kafka does
// not know are stored as Kafka stores them. GROUP resources take Kafka's
// group configs within the broker's bounds (group_configs.go).
// BROKER_LOGGER resources set log levels (broker_loggers.go), with
// IncrementalAlterConfigs only.
//
// Whole-request checks: a resource named twice gets INVALID_REQUEST (once),
// a config named twice in one resource or a null value other than DELETE's
// INVALID_REQUEST, as Kafka's ConfigAdminManager answers them.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/configs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configResourceTypeGroup is ConfigResource.Type GROUP (KIP-848).
const configResourceTypeGroup = kmsg.ConfigResourceTypeGroupConfig

// alterOp is one requested change of one config.
type alterOp struct {
	name  string
	value *string
	op    kmsg.IncrementalAlterConfigOp
}

// alterRequest is one resource of an alter request.
type alterRequest struct {
	broker       int32 // the broker the request came to
	typ          kmsg.ConfigResourceType
	name         string
	ops          []alterOp
	replace      bool // AlterConfigs: ops are the whole new set
	validateOnly bool
	// goAPI allows fakekafka's own topic configs (Cluster.AlterTopicConfig).
	goAPI bool
}

// configErr is a refusal: a Kafka error and its message (nil: none).
type configErr struct {
	err *kerr.Error
	msg *string
}

func refuse(err *kerr.Error, format string, args ...any) *configErr {
	msg := fmt.Sprintf(format, args...)
	return &configErr{err, &msg}
}

// preprocess is ConfigAdminManager's check of one resource before it is
// applied: no config twice, no null value but DELETE's.
func (r *alterRequest) preprocess() *configErr {
	seen := map[string]bool{}
	var nulls []string
	for _, o := range r.ops {
		if seen[o.name] {
			return refuse(kerr.InvalidRequest, "Error due to duplicate config keys")
		}
		seen[o.name] = true
		if o.value == nil && (r.replace || o.op != kmsg.IncrementalAlterConfigOpDelete) {
			nulls = append(nulls, o.name)
		}
	}
	if len(nulls) > 0 {
		return refuse(kerr.InvalidRequest, "Null value not supported for : %s", strings.Join(nulls, ", "))
	}
	return nil
}

// edit applies r's operations to cur (a copy it may modify). effective is
// a config's value in force; def its type, nil if unknown.
func (r *alterRequest) edit(cur map[string]string, effective func(string) (string, bool), def func(string) *configs.Def) (map[string]string, *configErr) {
	if r.replace {
		next := map[string]string{}
		for _, o := range r.ops {
			next[o.name] = *o.value
		}
		return next, nil
	}
	for _, o := range r.ops {
		switch o.op {
		case kmsg.IncrementalAlterConfigOpSet:
			cur[o.name] = *o.value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(cur, o.name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if d := def(o.name); d == nil || d.Type != configs.List {
				return nil, refuse(kerr.InvalidConfig, "Can't %s to key %s because its type is not LIST.", o.op, o.name)
			}
			v, _ := effective(o.name)
			cur[o.name] = editList(v, *o.value, o.op == kmsg.IncrementalAlterConfigOpAppend)
		default:
			return nil, &configErr{err: kerr.UnknownServerError} // as Kafka's controller fails it
		}
	}
	return cur, nil
}

// editList appends the values missing from list, or removes those present.
func editList(list, values string, add bool) string {
	items := configs.SplitList(list)
	for _, v := range configs.SplitList(values) {
		if add && !slices.Contains(items, v) {
			items = append(items, v)
		} else if !add {
			items = slices.DeleteFunc(items, func(x string) bool { return x == v })
		}
	}
	return strings.Join(items, ",")
}

// alterConfigs applies one resource's change, or with validateOnly checks
// it.
func (c *Cluster) alterConfigs(r *alterRequest) *configErr {
	if e := r.preprocess(); e != nil {
		return e
	}
	switch r.typ {
	case kmsg.ConfigResourceTypeBrokerLogger:
		if r.replace {
			return refuse(kerr.InvalidRequest, "Unknown resource type %d", r.typ)
		}
		return c.alterLoggers(r)
	case kmsg.ConfigResourceTypeBroker:
		return c.alterBroker(r)
	}
	for _, o := range r.ops {
		if !r.replace && o.op > kmsg.IncrementalAlterConfigOpSubtract {
			return &configErr{err: kerr.UnknownServerError}
		}
	}
	c.configMu.Lock()
	defer c.configMu.Unlock()
	switch r.typ {
	case kmsg.ConfigResourceTypeTopic:
		if r.name == "" {
			return refuse(kerr.InvalidRequest, "Default topic resources are not allowed.")
		}
		if e := topicNameError(r.name); e != nil {
			return e
		}
		t := c.topic(r.name)
		if t == nil {
			return refuse(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", r.name)
		}
		bs := c.brokerSettings()
		cur := t.cfg().configs
		effective := func(k string) (string, bool) {
			if v, ok := cur[k]; ok {
				return v, true
			}
			if d, ok := configs.Topic.Lookup(k); ok {
				return bs.defaultFor(r.broker, d)
			}
			return "", false
		}
		next, e := r.edit(cloneConfigs(cur), effective, topicDef)
		if e != nil {
			return e
		}
		if e := validateTopicConfigs(next, r.goAPI); e != nil {
			return e
		}
		if !r.validateOnly {
			c.setTopicConfigs(t, next)
		}
	case configResourceTypeGroup:
		if r.name == "" {
			return refuse(kerr.InvalidRequest, "Default group resources are not allowed.")
		}
		bs := c.brokerSettings()
		cur := c.groupExplicit(r.name)
		effective := func(k string) (string, bool) { return groupConfigValue(bs, cur, k) }
		next, e := r.edit(cloneConfigs(cur), effective, groupDef)
		if e != nil {
			return e
		}
		if err := validateGroupConfigs(bs, next); err != nil {
			return refuse(kerr.InvalidConfig, "%v", err)
		}
		if !r.validateOnly {
			c.setGroupConfigs(r.name, next)
		}
	default:
		return refuse(kerr.InvalidRequest, "Unknown resource type %d", r.typ)
	}
	return nil
}

func topicDef(name string) *configs.Def { d, _ := configs.Topic.Lookup(name); return d }
func groupDef(name string) *configs.Def { d, _ := configs.Group.Lookup(name); return d }
func brokerDef(name string) *configs.Def {
	d, _ := configs.Broker.Lookup(name)
	return d
}

// cloneConfigs copies m, never returning nil.
func cloneConfigs(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}

// setTopicConfigs makes configs t's explicit configs: the settings are
// swapped and every partition takes the new replication settings under its
// lock, waking whatever the change unblocks. Callers hold c.configMu and
// validated configs.
func (c *Cluster) setTopicConfigs(t *topic, configs map[string]string) {
	c.applyTopicSettings(t, configs)
	c.emit(EventTopicConfigChanged, func(e *Event) { e.Topic, e.Configs = t.name, maps.Clone(configs) })
	c.applyReplicationConfig(t)
	c.saveMeta()
	c.log.Info("topic configs changed", "topic", t.name, "configs", configs)
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

type configResource struct {
	typ  kmsg.ConfigResourceType
	name string
}

// alterResources alters each resource named once, in request order, and
// answers every distinct resource; one named twice fails whole with
// INVALID_REQUEST.
func alterResources(keys []configResource, alter func(i int) *configErr, answer func(i int, e *configErr)) {
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
		e := refuse(kerr.InvalidRequest, "Each resource must appear at most once.")
		if count[k] == 1 {
			e = alter(i)
		}
		answer(i, e)
	}
}

func (cn *conn) handleAlterConfigs(req *kmsg.AlterConfigsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	keys := make([]configResource, len(req.Resources))
	for i, rr := range req.Resources {
		keys[i] = configResource{rr.ResourceType, rr.ResourceName}
	}
	alterResources(keys, func(i int) *configErr {
		rr := &req.Resources[i]
		if denied := cn.configDenied(rr.ResourceType, rr.ResourceName, authorizer.OpAlterConfigs); denied != nil {
			return refuse(denied, "Authorization failed.")
		}
		r := &alterRequest{broker: cn.b.id, typ: rr.ResourceType, name: rr.ResourceName, replace: true, validateOnly: req.ValidateOnly}
		for _, cfg := range rr.Configs {
			r.ops = append(r.ops, alterOp{name: cfg.Name, value: cfg.Value, op: kmsg.IncrementalAlterConfigOpSet})
		}
		return c.alterConfigs(r)
	}, func(i int, e *configErr) {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = keys[i].typ, keys[i].name
		if e != nil {
			sr.ErrorCode, sr.ErrorMessage = e.err.Code, e.msg
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
	alterResources(keys, func(i int) *configErr {
		rr := &req.Resources[i]
		if denied := cn.configDenied(rr.ResourceType, rr.ResourceName, authorizer.OpAlterConfigs); denied != nil {
			return refuse(denied, "Authorization failed.")
		}
		r := &alterRequest{broker: cn.b.id, typ: rr.ResourceType, name: rr.ResourceName, validateOnly: req.ValidateOnly}
		for _, cfg := range rr.Configs {
			r.ops = append(r.ops, alterOp{name: cfg.Name, value: cfg.Value, op: cfg.Op})
		}
		return c.alterConfigs(r)
	}, func(i int, e *configErr) {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = keys[i].typ, keys[i].name
		if e != nil {
			sr.ErrorCode, sr.ErrorMessage = e.err.Code, e.msg
		}
		resp.Resources = append(resp.Resources, sr)
	})
	return resp, nil
}

// AlterTopicConfig changes topic's explicit configs as
// IncrementalAlterConfigs does: set adds or replaces values, delete reverts
// configs to the broker default. Every partition takes the change at once.
// Besides Kafka's topic configs it takes fakekafka's own
// replica.lag.time.max.ms per topic.
func (c *Cluster) AlterTopicConfig(topic string, set map[string]string, delete []string) error {
	return c.alterByAPI(kmsg.ConfigResourceTypeTopic, topic, set, delete)
}

// AlterBrokerConfig changes the cluster-wide broker configs as
// IncrementalAlterConfigs on the default broker resource does: set
// overrides Config, delete reverts to it. Topics that do not set a config
// themselves follow at once (min.insync.replicas,
// unclean.leader.election.enable, replica.lag.time.max.ms,
// log.flush.interval.messages, message.max.bytes, the log.* defaults of the
// topic configs fakekafka acts on).
func (c *Cluster) AlterBrokerConfig(set map[string]string, delete []string) error {
	return c.alterByAPI(kmsg.ConfigResourceTypeBroker, "", set, delete)
}

func (c *Cluster) alterByAPI(typ kmsg.ConfigResourceType, name string, set map[string]string, delete []string) error {
	r := &alterRequest{broker: clusterLevel, typ: typ, name: name, goAPI: true}
	for _, k := range delete {
		r.ops = append(r.ops, alterOp{name: k, op: kmsg.IncrementalAlterConfigOpDelete})
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		v := set[k]
		r.ops = append(r.ops, alterOp{name: k, value: &v, op: kmsg.IncrementalAlterConfigOpSet})
	}
	e := c.alterConfigs(r)
	if e == nil {
		return nil
	}
	msg := ""
	if e.msg != nil {
		msg = *e.msg
	}
	return kafkaError(e.err, msg)
}
