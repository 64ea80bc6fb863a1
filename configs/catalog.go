// Package configs is Apache Kafka's catalogue of broker, topic and group
// configs — names, types, defaults, validators, importance, dynamic update
// modes, documentation and synonyms — generated from Kafka's own jars
// (catalog_gen.go, scripts/gen-configs.sh), with the checks Kafka applies to
// a value. It is pure data and functions: the server decides what a config
// does.
package configs

import (
	"slices"
	"sort"
)

// Type is a config's type, numbered as DescribeConfigs' ConfigType.
type Type int8

// Kafka's ConfigDef types.
const (
	Boolean  Type = 1
	String   Type = 2
	Int      Type = 3
	Short    Type = 4
	Long     Type = 5
	Double   Type = 6
	List     Type = 7
	Class    Type = 8
	Password Type = 9
)

func (t Type) String() string {
	switch t {
	case Boolean:
		return "BOOLEAN"
	case String:
		return "STRING"
	case Int:
		return "INT"
	case Short:
		return "SHORT"
	case Long:
		return "LONG"
	case Double:
		return "DOUBLE"
	case List:
		return "LIST"
	case Class:
		return "CLASS"
	case Password:
		return "PASSWORD"
	}
	return "UNKNOWN"
}

// Dynamic update modes of broker configs (DynamicBrokerConfig).
const (
	ReadOnly    = "read-only"
	PerBroker   = "per-broker"
	ClusterWide = "cluster-wide"
)

// Def is one config as Kafka defines it.
type Def struct {
	Name       string
	Type       Type
	Default    *string // nil: Kafka's default is null (or there is none)
	Importance string  // HIGH, MEDIUM or LOW
	// Mode is a broker config's dynamic update mode: read-only, per-broker
	// or cluster-wide.
	Mode string
	// Internal configs are accepted but not described.
	Internal bool
	// Static broker configs are not in DynamicBrokerConfig's dynamic set
	// (DescribeConfigs says read-only).
	Static bool
	// Synonyms of a broker config, highest precedence first, itself
	// included (log.retention.ms, log.retention.minutes,
	// log.retention.hours); nil when it is its only synonym.
	Synonyms []string
	// BrokerSynonym of a topic or group config is the broker config that
	// supplies its default (retention.ms ← log.retention.ms).
	BrokerSynonym string
	// BrokerChain of a topic config whose broker default has fallbacks
	// (retention.ms ← log.retention.ms, log.retention.minutes,
	// log.retention.hours): the first one set supplies it, times Factor.
	BrokerChain []Fallback
	Valid       *Validator
	Doc         string
}

// Fallback is one broker config of a topic config's BrokerChain.
type Fallback struct {
	Name   string
	Factor int64
}

// Sensitive configs (passwords) are described with a null value.
func (d *Def) Sensitive() bool { return d.Type == Password }

// BrokerSynonyms are the broker configs that set d, highest first.
func (d *Def) BrokerSynonyms() []string {
	if d.Synonyms != nil {
		return d.Synonyms
	}
	return []string{d.Name}
}

// ValidKind says which of Kafka's validators a Validator is.
type ValidKind int8

// Kafka's ConfigDef validators.
const (
	Range           ValidKind = iota + 1 // ConfigDef.Range: Min and/or Max
	OneOf                                // ValidString
	OneOfIgnoreCase                      // CaseInsensitiveValidString
	ListOf                               // ValidList: Strings (any if empty), EmptyAllowed, NullAllowed
	NonEmpty                             // NonEmptyString
	NonNull                              // NonNullValidator
	All                                  // CompositeValidator: each of Of
	Opaque                               // a validator of its own class: opaque.go
)

// Validator is a config's ConfigDef validator, as data.
type Validator struct {
	Kind         ValidKind
	Min, Max     string // Range bounds as Kafka prints them ("" = none)
	Strings      []string
	EmptyAllowed bool
	NullAllowed  bool
	Of           []*Validator
	Class        string // Opaque: the validator's Java class
	Text         string // Kafka's toString of the validator
}

func ptr(s string) *string { return &s }

// Catalog is one resource type's configs, sorted by name.
type Catalog struct {
	defs   []Def
	byName map[string]*Def
}

func newCatalog(defs []Def) *Catalog {
	c := &Catalog{defs: defs, byName: make(map[string]*Def, len(defs))}
	sort.Slice(c.defs, func(i, j int) bool { return c.defs[i].Name < c.defs[j].Name })
	for i := range c.defs {
		c.byName[c.defs[i].Name] = &c.defs[i]
	}
	return c
}

// The catalogues of Kafka's broker, topic and group configs.
var (
	Broker = newCatalog(brokerDefs)
	Topic  = newCatalog(topicDefs)
	Group  = newCatalog(groupDefs)
)

// Lookup finds a config by name.
func (c *Catalog) Lookup(name string) (*Def, bool) {
	d, ok := c.byName[name]
	return d, ok
}

// Defs are every config, internal ones included, sorted by name. The slice
// is shared: do not modify it.
func (c *Catalog) Defs() []Def { return c.defs }

// Described are the configs DescribeConfigs lists, sorted by name.
func (c *Catalog) Described() []*Def {
	out := make([]*Def, 0, len(c.defs))
	for i := range c.defs {
		if !c.defs[i].Internal {
			out = append(out, &c.defs[i])
		}
	}
	return out
}

// Names are every config's name, sorted.
func (c *Catalog) Names() []string {
	out := make([]string, len(c.defs))
	for i := range c.defs {
		out[i] = c.defs[i].Name
	}
	return slices.Clip(out)
}
