package server

// DescribeConfigs, versions 0-4.
//
// Every answer follows Kafka 4.4's ConfigHelper, config by config, over
// Kafka's own catalogue (package configs, generated from its jars): names,
// values as Kafka prints them, sources, read-only, sensitive, types (v3+),
// documentation (v3+, with IncludeDocumentation) and synonyms (v1+, with
// IncludeSynonyms), highest precedence first.
//
// TOPIC resources list every topic config: the topic's own value
// (DYNAMIC_TOPIC_CONFIG), else the broker's value of the config that
// supplies its default, with that config's synonyms and sources. A bad
// topic name gets INVALID_TOPIC_EXCEPTION, an unknown topic
// UNKNOWN_TOPIC_OR_PARTITION.
//
// BROKER resources: the receiving broker's id lists every broker config
// (read-only unless Kafka can change it dynamically; passwords and names
// Kafka does not know are sensitive, with a null value); "" lists the
// cluster-wide defaults changed at runtime. Another id gets INVALID_REQUEST,
// as from a Kafka broker.
//
// GROUP resources list every group config: the group's own value
// (GROUP_CONFIG), else the broker's group default. BROKER_LOGGER resources
// list the receiving broker's logger levels (broker_loggers.go).
//
// ConfigNames filters (null or empty means all; names not listed are left
// out).

import (
	"maps"
	"slices"
	"strconv"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/configs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicEntries describes every config of a topic whose explicit configs
// are explicit, as broker id sees them.
func (c *Cluster) topicEntries(id int32, explicit map[string]string) []configEntry {
	bs := c.brokerSettings()
	var out []configEntry
	defs := configs.Topic.Described()
	for _, k := range slices.Sorted(maps.Keys(explicit)) {
		if d, ok := configs.Topic.Lookup(k); ok && d.Internal {
			defs = append(defs, d) // set, so in Kafka's originals: listed
		}
	}
	for _, d := range defs {
		e := configEntry{name: d.Name, typ: typeOf(d), doc: docOf(d), sensitive: d.Sensitive()}
		if d.BrokerSynonym != "" {
			e.synonyms = bs.brokerSynonyms(id, d.BrokerSynonym)
		}
		if v, ok := explicit[d.Name]; ok {
			e.value = describedValue(d, v, true)
			e.synonyms = append([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{synonymOf(d.Name, d.Canonical(v), kmsg.ConfigSourceDynamicTopicConfig, d.Sensitive())}, e.synonyms...)
		} else {
			v, ok := bs.defaultFor(id, d)
			e.value = describedValue(d, v, ok)
		}
		out = append(out, e.withSource())
	}
	// Names Kafka does not know (fakekafka's own) are listed as Kafka lists
	// a topic's unknown properties.
	for _, k := range slices.Sorted(maps.Keys(explicit)) {
		if _, ok := configs.Topic.Lookup(k); !ok {
			v := explicit[k]
			out = append(out, configEntry{name: k, value: &v, source: kmsg.ConfigSourceDynamicTopicConfig,
				synonyms: []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{synonymOf(k, v, kmsg.ConfigSourceDynamicTopicConfig, false)}})
		}
	}
	return out
}

// topicConfigEntries describes t as the cluster-wide level sees it.
func (c *Cluster) topicConfigEntries(t *topic) []configEntry {
	return c.topicEntries(clusterLevel, t.cfg().configs)
}

// brokerEntries describes broker resource name to broker id: every broker
// config when name is id, the runtime-changed defaults for "".
func (c *Cluster) brokerEntries(id int32, name string) ([]configEntry, *configErr) {
	bs := c.brokerSettings()
	if name == "" {
		var out []configEntry
		for _, k := range slices.Sorted(maps.Keys(bs.dynamic)) {
			d := brokerDef(k)
			v := bs.dynamic[k]
			e := configEntry{name: k, value: &v, typ: typeOf(d), doc: docOf(d), readOnly: d == nil || d.Static, sensitive: d == nil || d.Sensitive()}
			if e.sensitive {
				e.value = nil
			}
			for _, s := range bs.brokerSynonyms(id, k) {
				if s.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig {
					e.synonyms = append(e.synonyms, s)
				}
			}
			out = append(out, e.withSource())
		}
		return out, nil
	}
	n, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return nil, refuse(kerr.InvalidRequest, "Broker id must be an integer, but it is: %s", name)
	}
	if id != clusterLevel && int32(n) != id || c.broker(int32(n)) == nil {
		return nil, refuse(kerr.InvalidRequest, "Unexpected broker id, expected %d or empty string, but received %s", id, name)
	}
	id = int32(n)
	own := map[string]string{"broker.id": name, "node.id": name}
	value := func(k string) (string, bool) {
		if v, ok := own[k]; ok {
			return v, true
		}
		return bs.value(id, k)
	}
	var out []configEntry
	add := func(k string, d *configs.Def) {
		e := configEntry{name: k, typ: typeOf(d), doc: docOf(d), readOnly: d == nil || d.Static, sensitive: d == nil || d.Sensitive()}
		v, ok := value(k)
		if !e.sensitive {
			e.value = describedValue(d, v, ok)
			if ok && d == nil {
				e.value = &v
			}
		}
		e.synonyms = bs.brokerSynonyms(id, k)
		if o, ok := own[k]; ok {
			e.synonyms = append([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{synonymOf(k, o, kmsg.ConfigSourceStaticBrokerConfig, false)}, e.synonyms...)
		}
		out = append(out, e.withSource())
	}
	for _, d := range configs.Broker.Described() {
		add(d.Name, d)
	}
	// What is set but not described otherwise (names Kafka does not know,
	// internal configs): in Kafka's originals, so listed too.
	extra := map[string]bool{}
	for _, m := range []map[string]string{bs.static, bs.dynamic, bs.perBroker[id]} {
		for k := range m {
			if d, ok := configs.Broker.Lookup(k); !ok || d.Internal {
				extra[k] = true
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		add(k, brokerDef(k))
	}
	return out, nil
}

// groupEntries describes every group config of group id to broker.
func (c *Cluster) groupEntries(broker int32, id string) []configEntry {
	bs := c.brokerSettings()
	explicit := c.groupExplicit(id)
	var out []configEntry
	for _, d := range configs.Group.Described() {
		e := configEntry{name: d.Name, typ: typeOf(d), doc: docOf(d), sensitive: d.Sensitive()}
		if d.BrokerSynonym != "" {
			e.synonyms = bs.brokerSynonyms(broker, d.BrokerSynonym)
		} else if d.Default != nil {
			e.synonyms = append(e.synonyms, synonymOf(d.Name, d.Canonical(*d.Default), kmsg.ConfigSourceDefaultConfig, d.Sensitive()))
		}
		if v, ok := explicit[d.Name]; ok {
			e.value = describedValue(d, v, true)
			e.synonyms = append([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{synonymOf(d.Name, d.Canonical(v), kmsg.ConfigSourceGroupConfig, d.Sensitive())}, e.synonyms...)
		} else {
			v, ok := bs.defaultFor(broker, d)
			e.value = describedValue(d, v, ok)
		}
		out = append(out, e.withSource())
	}
	return out
}

func (cn *conn) handleDescribeConfigs(req *kmsg.DescribeConfigsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ErrorMessage = noMessage(req.Version, 0)
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		entries, e := c.describeResource(cn, rr.ResourceType, rr.ResourceName)
		if e != nil {
			sr.ErrorCode = e.err.Code
			if e.msg != nil {
				sr.ErrorMessage = e.msg
			}
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		for _, e := range entries {
			if len(rr.ConfigNames) > 0 && !slices.Contains(rr.ConfigNames, e.name) {
				continue
			}
			sc := kmsg.NewDescribeConfigsResponseResourceConfig()
			sc.Name, sc.Value, sc.ReadOnly, sc.IsSensitive = e.name, e.value, e.readOnly, e.sensitive
			sc.Source = e.source
			// v0 has no source, only whether the value is a default.
			sc.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig
			sc.ConfigType = e.typ
			if req.IncludeSynonyms {
				sc.ConfigSynonyms = e.synonyms
			}
			if sc.ConfigSynonyms == nil {
				sc.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{}
			}
			if req.IncludeDocumentation {
				sc.Documentation = e.doc
			}
			sr.Configs = append(sr.Configs, sc)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

// describeResource is one resource's entries, or why not.
func (c *Cluster) describeResource(cn *conn, typ kmsg.ConfigResourceType, name string) ([]configEntry, *configErr) {
	if denied := cn.configDenied(typ, name, authorizer.OpDescribeConfigs); denied != nil {
		return nil, refuse(denied, "Authorization failed.")
	}
	id := cn.b.id
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if e := topicNameError(name); e != nil {
			return nil, e
		}
		t := c.topic(name)
		if t == nil {
			return nil, &configErr{err: kerr.UnknownTopicOrPartition}
		}
		return c.topicEntries(id, t.cfg().configs), nil
	case kmsg.ConfigResourceTypeBroker:
		return c.brokerEntries(id, name)
	case configResourceTypeGroup:
		if name == "" {
			return nil, refuse(kerr.InvalidRequest, "Group name must not be empty")
		}
		return c.groupEntries(id, name), nil
	case kmsg.ConfigResourceTypeBrokerLogger:
		n, e := loggerResource(name, id, true)
		if e != nil {
			return nil, e
		}
		return c.loggerEntries(n), nil
	}
	return nil, refuse(kerr.InvalidRequest, "%s", msgInvalidRequest) // Kafka: the error's own message
}

// topicNameError is the configs APIs' answer to an illegal topic name.
func topicNameError(name string) *configErr {
	if err := legalTopicName(name); err != nil {
		return refuse(kerr.InvalidTopicException, "%v", err)
	}
	return nil
}
