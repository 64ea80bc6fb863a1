package server

// Config values as Kafka layers them: a broker config is its per-broker
// dynamic value, else its cluster-wide dynamic default, else the static
// value (what server.properties would set: the cluster's Config), else
// Kafka's default; a topic or group config is the resource's own value,
// else the broker config that supplies its default. DescribeConfigs lists
// the synonyms, highest first, with their sources.

import (
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/configs"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clusterLevel is the broker id of the cluster-wide level, which no broker
// overrides: the settings fakekafka acts on live there.
const clusterLevel int32 = -1

// value is broker config name as broker id sees it (clusterLevel: no
// per-broker overrides), by its own key only; false when null.
func (bs *brokerSettings) value(id int32, name string) (string, bool) {
	if v, ok := bs.perBroker[id][name]; ok {
		return v, true
	}
	if v, ok := bs.dynamic[name]; ok {
		return v, true
	}
	if v, ok := bs.static[name]; ok {
		return v, true
	}
	if d, ok := configs.Broker.Lookup(name); ok && d.Default != nil {
		return *d.Default, true
	}
	return "", false
}

// defaultFor is the broker's value of the topic or group config d: its
// broker synonym's (the first set of a fallback chain, converted to the
// topic config's unit), else d's own default; false when null.
func (bs *brokerSettings) defaultFor(id int32, d *configs.Def) (string, bool) {
	for _, f := range d.BrokerChain {
		if v, ok := bs.value(id, f.Name); ok {
			if f.Factor == 1 {
				return v, true
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return strconv.FormatInt(n*f.Factor, 10), true
		}
	}
	if len(d.BrokerChain) > 0 {
		return "", false
	}
	if d.BrokerSynonym != "" {
		v, ok := bs.value(id, d.BrokerSynonym)
		if ok {
			if bd, known := configs.Broker.Lookup(d.BrokerSynonym); known && bd.Type != d.Type && d.Type == configs.String && bd.Type == configs.List {
				v, _, _ = strings.Cut(v, ",") // a list's first entry (streams.assignor.name)
			}
		}
		return v, ok
	}
	if d.Default != nil {
		return *d.Default, true
	}
	return "", false
}

// brokerSynonyms is Kafka's synonym list of broker config name as broker
// id sees it: the values set for it or its synonyms at each level, highest
// first, from the first entry for name itself on.
func (bs *brokerSettings) brokerSynonyms(id int32, name string) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	names := []string{name}
	sensitive := true // a name Kafka does not know may be a password
	if d, ok := configs.Broker.Lookup(name); ok {
		names, sensitive = d.BrokerSynonyms(), d.Sensitive()
	}
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	add := func(m map[string]string, src kmsg.ConfigSource) {
		for _, n := range names {
			if v, ok := m[n]; ok {
				out = append(out, synonymOf(n, v, src, sensitive))
			}
		}
	}
	if id != clusterLevel {
		add(bs.perBroker[id], kmsg.ConfigSourceDynamicBrokerConfig)
	}
	add(bs.dynamic, kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	add(bs.static, kmsg.ConfigSourceStaticBrokerConfig)
	for _, n := range names {
		if d, ok := configs.Broker.Lookup(n); ok && d.Default != nil {
			out = append(out, synonymOf(n, *d.Default, kmsg.ConfigSourceDefaultConfig, sensitive))
		}
	}
	for len(out) > 0 && out[0].Name != name {
		out = out[1:]
	}
	return out
}

func synonymOf(name, value string, src kmsg.ConfigSource, sensitive bool) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name, s.Source = name, src
	if !sensitive {
		s.Value = &value
	}
	return s
}

// configEntry is one described config, before version-specific encoding.
type configEntry struct {
	name      string
	value     *string
	source    kmsg.ConfigSource
	readOnly  bool
	typ       kmsg.ConfigType
	doc       *string
	synonyms  []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	sensitive bool
}

// entry completes e from its synonyms: the source is the first one's,
// DEFAULT_CONFIG without any.
func (e configEntry) withSource() configEntry {
	e.source = kmsg.ConfigSourceDefaultConfig
	if len(e.synonyms) > 0 {
		e.source = e.synonyms[0].Source
	}
	return e
}

// describedValue renders a value as Kafka describes it: parsed and
// printed back (TRUE → true), null when sensitive or null.
func describedValue(d *configs.Def, v string, ok bool) *string {
	if !ok || d != nil && d.Sensitive() {
		return nil
	}
	if d != nil {
		v = d.Canonical(v)
	}
	return &v
}

func docOf(d *configs.Def) *string {
	if d == nil {
		return nil
	}
	doc := d.Doc
	return &doc
}

func typeOf(d *configs.Def) kmsg.ConfigType {
	if d == nil {
		return kmsg.ConfigTypeUnknown
	}
	return kmsg.ConfigType(d.Type)
}
