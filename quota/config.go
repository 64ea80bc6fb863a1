// Package quota holds Kafka's client quotas as pure state: the quota
// configuration of user, client-id and ip entities with their defaults
// (AlterClientQuotas, DescribeClientQuotas), the precedence by which a
// connection's (user, client-id) finds its quota, and the sampled byte rate
// whose overshoot becomes a throttle time, as Kafka's ClientQuotaManager
// computes it. No sockets, goroutines or clocks: time is passed in.
package quota

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
)

// Entity types.
const (
	TypeUser     = "user"
	TypeClientID = "client-id"
	TypeIP       = "ip"
)

// Quota keys.
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
	ConnectionCreationRate = "connection_creation_rate"
)

// Part is one component of an entity: absent, a name, or the default
// (Kafka's <default>, a null name on the wire).
type Part struct {
	Present bool
	Default bool
	Name    string
}

// Named and Default build parts.
func Named(name string) Part { return Part{Present: true, Name: name} }

// Default is the <default> part.
func Default() Part { return Part{Present: true, Default: true} }

// Entity is a quota entity: user, client-id or both, or an ip alone.
type Entity struct {
	User, ClientID, IP Part
}

func (p Part) String() string {
	if p.Default {
		return "<default>"
	}
	return p.Name
}

func (e Entity) String() string {
	s := ""
	add := func(typ string, p Part) {
		if p.Present {
			if s != "" {
				s += ","
			}
			s += typ + "=" + p.String()
		}
	}
	add(TypeUser, e.User)
	add(TypeClientID, e.ClientID)
	add(TypeIP, e.IP)
	return s
}

// ErrInvalid wraps every reason Kafka refuses a quota change or filter
// with INVALID_REQUEST.
var ErrInvalid = errors.New("invalid quota request")

// invalidError is a refusal with Kafka's message, matching ErrInvalid.
type invalidError string

func (e invalidError) Error() string        { return string(e) }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(format string, args ...any) error {
	return invalidError(fmt.Sprintf(format, args...))
}

// ErrUnsupported is a DescribeClientQuotas filter on an entity type Kafka
// does not know, which it answers with UNSUPPORTED_VERSION.
var ErrUnsupported = errors.New("unsupported quota entity type")

type unsupportedError string

func (e unsupportedError) Error() string        { return string(e) }
func (e unsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Component is one (type, name) of a request's entity; Name nil is the
// default.
type Component struct {
	Type string
	Name *string
}

// ParseEntity builds an entity from a request's components as Kafka
// validates them: known types, ip alone. Kafka reads the components into a
// map, so a later component of a type replaces an earlier one.
func ParseEntity(cs []Component) (Entity, error) {
	var e Entity
	if len(cs) == 0 {
		return e, invalid("Invalid empty client quota entity")
	}
	for _, c := range cs {
		var p *Part
		switch c.Type {
		case TypeUser:
			p = &e.User
		case TypeClientID:
			p = &e.ClientID
		case TypeIP:
			p = &e.IP
		default:
			return e, invalid("unhandled client quota entity type: %s", c.Type)
		}
		*p = Default()
		if c.Name != nil {
			*p = Named(*c.Name)
		}
	}
	if e.IP.Present && (e.User.Present || e.ClientID.Present) {
		return e, invalid("Invalid quota entity combination, IP entity should not be combined with User or ClientId")
	}
	return e, nil
}

// Components are the entity's parts in the order Kafka answers them: it
// keeps an entity as a Java HashMap of type to name, whose iteration puts
// client-id before user (ip is always alone).
func (e Entity) Components() []Component {
	var out []Component
	add := func(typ string, p Part) {
		if !p.Present {
			return
		}
		c := Component{Type: typ}
		if !p.Default {
			name := p.Name
			c.Name = &name
		}
		out = append(out, c)
	}
	add(TypeClientID, e.ClientID)
	add(TypeUser, e.User)
	add(TypeIP, e.IP)
	return out
}

// CheckIP is Kafka's check of an ip entity's name (InetAddress.getByName):
// an address, or a host name that resolves, as resolves says. The
// <default> ip needs neither.
func CheckIP(e Entity, resolves func(host string) bool) error {
	if !e.IP.Present || e.IP.Default || e.IP.Name == "" || net.ParseIP(e.IP.Name) != nil || resolves(e.IP.Name) {
		return nil
	}
	return invalid("%s is not a valid IP or resolvable host.", e.IP.Name)
}

// keyKinds are the keys an entity may hold, and whether each is a whole
// number (Kafka's LONG) rather than a DOUBLE.
func keyKinds(e Entity) map[string]bool {
	if e.IP.Present {
		return map[string]bool{ConnectionCreationRate: true}
	}
	return map[string]bool{ProducerByteRate: true, ConsumerByteRate: true, RequestPercentage: false, ControllerMutationRate: false}
}

// Op is one change of an AlterClientQuotas entry.
type Op struct {
	Key    string
	Value  float64
	Remove bool
}

// Config is an immutable quota configuration.
type Config struct {
	m map[Entity]map[string]float64
}

// ValidateOps checks an entry's changes as Kafka's ClientQuotaControlManager
// does: each key once; a value to set must be a key of the entity's kind,
// greater than 0, and whole for byte rates. Removing an unknown key is
// allowed and changes nothing.
func ValidateOps(e Entity, ops []Op) error {
	kinds := keyKinds(e)
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.Key] {
			return invalid("Duplicate quota key %s not updating quota for this entity %s", op.Key, e)
		}
		seen[op.Key] = true
		if op.Remove {
			continue // Kafka removes a key it does not know without a word
		}
		whole, ok := kinds[op.Key]
		if !ok {
			return invalid("Invalid configuration key %s", op.Key)
		}
		if op.Value <= 0 {
			return invalid("Quota %s must be greater than 0", op.Key)
		}
		if math.IsNaN(op.Value) || math.IsInf(op.Value, 0) || (whole && op.Value != math.Trunc(op.Value)) {
			return invalid("Invalid value %s for configuration key %s: a whole number is needed", strconv.FormatFloat(op.Value, 'g', -1, 64), op.Key)
		}
	}
	return nil
}

// Alter returns the configuration with the (validated) changes applied;
// an entity left without keys disappears.
func (c *Config) Alter(e Entity, ops []Op) *Config {
	n := &Config{m: maps.Clone(c.m)}
	if n.m == nil {
		n.m = map[Entity]map[string]float64{}
	}
	vals := maps.Clone(n.m[e])
	if vals == nil {
		vals = map[string]float64{}
	}
	for _, op := range ops {
		if op.Remove {
			delete(vals, op.Key)
		} else {
			vals[op.Key] = op.Value
		}
	}
	if len(vals) == 0 {
		delete(n.m, e)
	} else {
		n.m[e] = vals
	}
	return n
}

// Empty says whether no quota is configured at all.
func (c *Config) Empty() bool { return c == nil || len(c.m) == 0 }

// Entry is a configured entity and its values.
type Entry struct {
	Entity Entity
	Values map[string]float64
}

// Match types of a DescribeClientQuotas component.
const (
	MatchExact   = 0
	MatchDefault = 1
	MatchAny     = 2
)

// FilterComponent is one component of a DescribeClientQuotas filter.
type FilterComponent struct {
	Type      string
	MatchType int8
	Match     *string
}

// Describe returns the entries the filter selects, sorted by entity: each
// component must match (EXACT a name, DEFAULT the default, ANY anything
// present); strict also refuses entities with other parts. A filter on an
// unknown entity type is ErrUnsupported, another bad filter ErrInvalid.
func (c *Config) Describe(filter []FilterComponent, strict bool) ([]Entry, error) {
	seen := map[string]bool{}
	for _, f := range filter {
		// In Kafka's order: an empty or repeated type is invalid, an
		// unknown one unsupported.
		switch {
		case f.Type == "":
			return nil, invalid("Invalid empty entity type.")
		case seen[f.Type]:
			return nil, invalid("Entity type %s cannot appear more than once in the filter.", f.Type)
		case f.Type != TypeUser && f.Type != TypeClientID && f.Type != TypeIP:
			return nil, unsupportedError("Unsupported entity type " + f.Type)
		}
		seen[f.Type] = true
		switch {
		case f.MatchType == MatchExact && f.Match == nil:
			return nil, invalid("an exact match needs a name")
		case f.MatchType != MatchExact && f.Match != nil:
			return nil, invalid("a default or any match takes no name")
		case f.MatchType < MatchExact || f.MatchType > MatchAny:
			return nil, invalid("unknown match type %d", f.MatchType)
		}
	}
	if seen[TypeIP] && (seen[TypeUser] || seen[TypeClientID]) {
		return nil, invalid("invalid entity filter component combination")
	}
	part := func(e Entity, typ string) Part {
		switch typ {
		case TypeUser:
			return e.User
		case TypeClientID:
			return e.ClientID
		}
		return e.IP
	}
	var out []Entry
	for e, vals := range c.m {
		ok := true
		for _, f := range filter {
			p := part(e, f.Type)
			switch f.MatchType {
			case MatchExact:
				ok = ok && p.Present && !p.Default && p.Name == *f.Match
			case MatchDefault:
				ok = ok && p.Present && p.Default
			case MatchAny:
				ok = ok && p.Present
			}
		}
		if strict {
			for _, typ := range []string{TypeUser, TypeClientID, TypeIP} {
				ok = ok && (seen[typ] || !part(e, typ).Present)
			}
		}
		if ok {
			out = append(out, Entry{e, maps.Clone(vals)})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		switch x, y := a.Entity.String(), b.Entity.String(); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return out, nil
}

// Key is whose usage a quota counts, as Kafka's metric tags: a quota on a
// user is shared by all its client ids (ClientID ""), one on a client id
// by all users of it (User ""), and a default applies to each user or
// client id separately.
type Key struct {
	User, ClientID string
}

// Resolve finds the quota of kind (a key such as ProducerByteRate) for a
// connection in Kafka's precedence order: user and client-id, user and
// default client-id, user, default user and client-id, default user and
// default client-id, default user, client-id, default client-id. ok is
// false when none applies (unlimited).
func (c *Config) Resolve(kind, user, clientID string) (k Key, bound float64, ok bool) {
	if c.Empty() {
		return Key{}, 0, false
	}
	u, d, cl, none := Named(user), Default(), Named(clientID), Part{}
	for _, cand := range []struct {
		e Entity
		k Key
	}{
		{Entity{User: u, ClientID: cl}, Key{user, clientID}},
		{Entity{User: u, ClientID: d}, Key{user, clientID}},
		{Entity{User: u, ClientID: none}, Key{user, ""}},
		{Entity{User: d, ClientID: cl}, Key{user, clientID}},
		{Entity{User: d, ClientID: d}, Key{user, clientID}},
		{Entity{User: d, ClientID: none}, Key{user, ""}},
		{Entity{User: none, ClientID: cl}, Key{"", clientID}},
		{Entity{User: none, ClientID: d}, Key{"", clientID}},
	} {
		if v, found := c.m[cand.e][kind]; found {
			return cand.k, v, true
		}
	}
	return Key{}, 0, false
}
