package schema

import (
	"math/big"
	"sort"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The per-kind rules of Confluent's JSON Schema compatibility check.

// compareLimit reports a numeric keyword added, removed, increased or
// decreased (KIND_ADDED, ...), at path attr.
func (c *jsonDiff) compareLimit(attr, kind string, o, u *big.Rat) {
	switch {
	case o == nil && u == nil:
	case o == nil:
		c.addAt(attr, kind+"_ADDED")
	case u == nil:
		c.addAt(attr, kind+"_REMOVED")
	case o.Cmp(u) < 0:
		c.addAt(attr, kind+"_INCREASED")
	case o.Cmp(u) > 0:
		c.addAt(attr, kind+"_DECREASED")
	}
}

func intRat(p *int) *big.Rat {
	if p == nil {
		return nil
	}
	return big.NewRat(int64(*p), 1)
}

func (c *jsonDiff) compareString(o, u *jsonschema.Schema) {
	c.compareLimit("maxLength", "MAX_LENGTH", intRat(o.MaxLength), intRat(u.MaxLength))
	c.compareLimit("minLength", "MIN_LENGTH", intRat(o.MinLength), intRat(u.MinLength))
	switch {
	case o.Pattern == nil && u.Pattern != nil:
		c.addAt("pattern", "PATTERN_ADDED")
	case o.Pattern != nil && u.Pattern == nil:
		c.addAt("pattern", "PATTERN_REMOVED")
	case o.Pattern != nil && o.Pattern.String() != u.Pattern.String():
		c.addAt("pattern", "PATTERN_CHANGED")
	}
}

func (c *jsonDiff) compareNumber(o, u jsView) {
	c.compareLimit("maximum", "MAXIMUM", o.s.Maximum, u.s.Maximum)
	c.compareLimit("minimum", "MINIMUM", o.s.Minimum, u.s.Minimum)
	c.compareLimit("exclusiveMaximum", "EXCLUSIVE_MAXIMUM", o.s.ExclusiveMaximum, u.s.ExclusiveMaximum)
	c.compareLimit("exclusiveMinimum", "EXCLUSIVE_MINIMUM", o.s.ExclusiveMinimum, u.s.ExclusiveMinimum)
	om, um := o.s.MultipleOf, u.s.MultipleOf
	switch {
	case om == nil && um == nil:
	case om == nil:
		c.addAt("multipleOf", "MULTIPLE_OF_ADDED")
	case um == nil:
		c.addAt("multipleOf", "MULTIPLE_OF_REMOVED")
	case om.Cmp(um) == 0:
	case divides(om, um):
		c.addAt("multipleOf", "MULTIPLE_OF_EXPANDED")
	case divides(um, om):
		c.addAt("multipleOf", "MULTIPLE_OF_REDUCED")
	default:
		c.addAt("multipleOf", "MULTIPLE_OF_CHANGED")
	}
	if o.integer != u.integer {
		if o.integer {
			c.add("TYPE_EXTENDED")
		} else {
			c.add("TYPE_NARROWED")
		}
	}
}

// divides reports whether b is a whole multiple of a.
func divides(a, b *big.Rat) bool {
	if a.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(b, a).IsInt()
}

func (c *jsonDiff) compareEnum(o, u *jsonschema.Schema) {
	ov, uv := enumSet(o), enumSet(u)
	if len(ov) == len(uv) && containsAll(uv, ov) {
		return
	}
	switch {
	case containsAll(uv, ov):
		c.addAt("enum", "ENUM_ARRAY_EXTENDED")
	case containsAll(ov, uv):
		c.addAt("enum", "ENUM_ARRAY_NARROWED")
	default:
		c.addAt("enum", "ENUM_ARRAY_CHANGED")
	}
}

func enumSet(s *jsonschema.Schema) map[string]bool {
	out := map[string]bool{}
	for _, v := range s.Enum.Values {
		out[canonicalValue(v)] = true
	}
	return out
}

func containsAll(set, of map[string]bool) bool {
	for k := range of {
		if !set[k] {
			return false
		}
	}
	return true
}

func (c *jsonDiff) compareCombined(o, u jsView) {
	if o.criterion != u.criterion {
		single := func(v jsView) bool { return len(v.subs) == 1 }
		if u.criterion == "anyOf" || (single(o) && single(u)) || (single(o) && u.criterion == "oneOf") ||
			(single(u) && o.criterion == "allOf") {
			c.add("COMBINED_TYPE_EXTENDED")
		} else {
			c.add("COMBINED_TYPE_CHANGED")
			return
		}
	}
	// Equal subschemas count once.
	osubs, usubs := c.distinct(o.subs), c.distinct(u.subs)
	on, un := len(osubs), len(usubs)
	switch {
	case on < un:
		if u.criterion == "allOf" {
			c.add("PRODUCT_TYPE_EXTENDED")
		} else {
			c.add("SUM_TYPE_EXTENDED")
		}
	case on > un:
		if o.criterion == "anyOf" || o.criterion == "oneOf" {
			c.add("SUM_TYPE_NARROWED")
		} else {
			c.add("PRODUCT_TYPE_NARROWED")
		}
	}
	// Every subschema of the smaller side must pair with a compatible one
	// of the other: a maximum bipartite matching of compatible pairs.
	edges := make([][][]jsonDifference, on)
	for i, os := range osubs {
		edges[i] = make([][]jsonDifference, un)
		c.enter(o.criterion + "/" + strconv.Itoa(i))
		for j, us := range usubs {
			if sub := c.sub(); sub.compareViewsTo(os, us) {
				edges[i][j] = append([]jsonDifference{}, sub.diffs...)
			}
		}
		c.leave()
	}
	match := bipartiteMatch(on, un, func(i, j int) bool { return edges[i][j] != nil })
	matched := 0
	for i, j := range match {
		if j >= 0 {
			matched++
			c.diffs = append(c.diffs, edges[i][j]...)
		}
	}
	if matched < min(on, un) {
		c.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")
	}
}

// bipartiteMatch is a maximum matching (Kuhn's augmenting paths): for each
// left vertex the right one it is matched with, or -1.
func bipartiteMatch(left, right int, edge func(i, j int) bool) []int {
	matchR := make([]int, right)
	for j := range matchR {
		matchR[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := 0; j < right; j++ {
			if !edge(i, j) || seen[j] {
				continue
			}
			seen[j] = true
			if matchR[j] < 0 || try(matchR[j], seen) {
				matchR[j] = i
				return true
			}
		}
		return false
	}
	for i := 0; i < left; i++ {
		try(i, make([]bool, right))
	}
	matchL := make([]int, left)
	for i := range matchL {
		matchL[i] = -1
	}
	for j, i := range matchR {
		if i >= 0 {
			matchL[i] = j
		}
	}
	return matchL
}

func sortedKeys[V any](ms ...map[string]V) []string {
	set := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isRequired(s *jsonschema.Schema, name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

func hasDefault(s *jsonschema.Schema) bool {
	s = deref(s)
	return s != nil && s.Default != nil
}

func isFalse(s *jsonschema.Schema) bool {
	s = deref(s)
	return s != nil && s.Bool != nil && !*s.Bool
}

func isEmptySchema(s *jsonschema.Schema) bool {
	return s != nil && isEmptyView(viewOf(s))
}

// additional is what "additionalProperties" (or additionalItems) says:
// whether more are allowed, and the schema they must match if one is given.
func additional(v any) (permits bool, schema *jsonschema.Schema) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case *jsonschema.Schema:
		if v.Bool != nil {
			return *v.Bool, nil
		}
		return true, v
	}
	return true, nil
}

// openObject: any other property is allowed, with any value.
func openObject(s *jsonschema.Schema) bool {
	permits, schema := additional(s.AdditionalProperties)
	if !permits || schema != nil || len(s.PatternProperties) > 0 {
		return false
	}
	return s.UnevaluatedProperties == nil || isEmptyView(viewOf(s.UnevaluatedProperties))
}

// partialSchema is the schema an undeclared property name must match in a
// partially open object (patternProperties, additionalProperties or
// unevaluatedProperties given as a schema); nil when there is none.
func partialSchema(s *jsonschema.Schema, name string) *jsonschema.Schema {
	for re, ps := range s.PatternProperties {
		if re.MatchString(name) {
			return ps
		}
	}
	permits, schema := additional(s.AdditionalProperties)
	if schema != nil {
		return schema
	}
	if permits && s.AdditionalProperties == nil && s.UnevaluatedProperties != nil {
		if u := s.UnevaluatedProperties; !isFalse(u) && !isEmptySchema(u) {
			return u
		}
	}
	return nil
}

func (c *jsonDiff) compareObject(o, u *jsonschema.Schema) {
	c.enter("required")
	for _, name := range sortedKeys(o.Properties) {
		if u.Properties[name] == nil {
			continue
		}
		oreq, ureq := isRequired(o, name), isRequired(u, name)
		switch {
		case oreq && !ureq:
			c.addAt(name, "REQUIRED_ATTRIBUTE_REMOVED")
		case !oreq && ureq && hasDefault(u.Properties[name]):
			c.addAt(name, "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED")
		case !oreq && ureq:
			c.addAt(name, "REQUIRED_ATTRIBUTE_ADDED")
		}
	}
	c.leave()

	c.enter("properties")
	for _, name := range sortedKeys(o.Properties, u.Properties) {
		c.enter(name)
		op, up := o.Properties[name], u.Properties[name]
		switch {
		case up == nil:
			c.propertyRemoved(op, u, name)
		case op == nil:
			c.propertyAdded(o, u, up, name)
		default:
			c.compare(op, up)
		}
		c.leave()
	}
	c.leave()

	c.enter("dependencies")
	odeps, osch := dependencies(o)
	udeps, usch := dependencies(u)
	for _, name := range sortedKeys(odeps, udeps) {
		od, oin := odeps[name]
		ud, uin := udeps[name]
		switch {
		case !uin:
			c.addAt(name, "DEPENDENCY_ARRAY_REMOVED")
		case !oin:
			c.addAt(name, "DEPENDENCY_ARRAY_ADDED")
		case len(od) == len(ud) && containsAll(ud, od):
		case containsAll(ud, od):
			c.addAt(name, "DEPENDENCY_ARRAY_EXTENDED")
		case containsAll(od, ud):
			c.addAt(name, "DEPENDENCY_ARRAY_NARROWED")
		default:
			c.addAt(name, "DEPENDENCY_ARRAY_CHANGED")
		}
	}
	for _, name := range sortedKeys(osch, usch) {
		c.enter(name)
		switch os, us := osch[name], usch[name]; {
		case us == nil:
			c.add("DEPENDENCY_SCHEMA_REMOVED")
		case os == nil:
			c.add("DEPENDENCY_SCHEMA_ADDED")
		default:
			c.compare(os, us)
		}
		c.leave()
	}
	c.leave()

	c.enter("additionalProperties")
	opermits, oschema := additional(o.AdditionalProperties)
	upermits, uschema := additional(u.AdditionalProperties)
	switch {
	case opermits != upermits && upermits:
		c.add("ADDITIONAL_PROPERTIES_ADDED")
	case opermits != upermits:
		c.add("ADDITIONAL_PROPERTIES_REMOVED")
	case oschema == nil && uschema != nil:
		c.add("ADDITIONAL_PROPERTIES_NARROWED")
	case oschema != nil && uschema == nil:
		c.add("ADDITIONAL_PROPERTIES_EXTENDED")
	default:
		c.compare(oschema, uschema)
	}
	c.leave()

	c.compareUnevaluated("unevaluatedProperties", "UNEVALUATED_PROPERTIES", o.UnevaluatedProperties, u.UnevaluatedProperties)
	c.compareLimit("maxProperties", "MAX_PROPERTIES", intRat(o.MaxProperties), intRat(u.MaxProperties))
	c.compareLimit("minProperties", "MIN_PROPERTIES", intRat(o.MinProperties), intRat(u.MinProperties))
}

func (c *jsonDiff) propertyRemoved(op, u *jsonschema.Schema, name string) {
	if openObject(u) {
		c.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
		return
	}
	if ps := partialSchema(u, name); ps != nil {
		sub := c.sub()
		sub.compare(op, ps)
		c.diffs = append(c.diffs, sub.diffs...)
		if sub.compatible() {
			c.add("PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
		} else {
			c.add("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
		}
		return
	}
	if isFalse(op) {
		c.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
	} else {
		c.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
	}
}

func (c *jsonDiff) propertyAdded(o, u, up *jsonschema.Schema, name string) {
	if openObject(o) {
		switch {
		case isEmptySchema(up):
			c.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
		case isRequired(u, name) && hasDefault(up):
			c.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL")
		case isRequired(u, name):
			c.add("REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
		default:
			c.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
		}
		return
	}
	if ps := partialSchema(o, name); ps != nil {
		sub := c.sub()
		sub.compare(ps, up)
		c.diffs = append(c.diffs, sub.diffs...)
		if sub.compatible() {
			c.add("PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
		} else {
			c.add("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
		}
	}
	switch {
	case isRequired(u, name) && hasDefault(up):
		c.add("REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL")
	case isRequired(u, name):
		c.add("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
	default:
		c.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
	}
}

// dependencies are "dependencies" (and draft 2019-09's dependentRequired
// and dependentSchemas): property names a property needs, or a schema.
func dependencies(s *jsonschema.Schema) (map[string]map[string]bool, map[string]*jsonschema.Schema) {
	names := map[string]map[string]bool{}
	schemas := map[string]*jsonschema.Schema{}
	addNames := func(k string, list []string) {
		set := map[string]bool{}
		for _, n := range list {
			set[n] = true
		}
		names[k] = set
	}
	for k, v := range s.Dependencies {
		switch v := v.(type) {
		case []string:
			addNames(k, v)
		case *jsonschema.Schema:
			schemas[k] = v
		}
	}
	for k, v := range s.DependentRequired {
		addNames(k, v)
	}
	for k, v := range s.DependentSchemas {
		schemas[k] = v
	}
	return names, schemas
}

func (c *jsonDiff) compareUnevaluated(attr, kind string, o, u *jsonschema.Schema) {
	if o == nil && u == nil {
		return
	}
	c.enter(attr)
	defer c.leave()
	switch {
	case o == nil && isFalse(u):
		c.add(kind + "_REMOVED")
	case o == nil:
		c.add(kind + "_NARROWED")
	case u == nil && isFalse(o):
		c.add(kind + "_ADDED")
	case u == nil:
		c.add(kind + "_EXTENDED")
	case isFalse(o) && !isFalse(u):
		c.add(kind + "_ADDED")
	case !isFalse(o) && isFalse(u):
		c.add(kind + "_REMOVED")
	case isEmptySchema(o) && !isEmptySchema(u):
		c.add(kind + "_NARROWED")
	case !isEmptySchema(o) && isEmptySchema(u):
		c.add(kind + "_EXTENDED")
	default:
		c.compare(o, u)
	}
}

// arrayItems is an array schema as Confluent's loader sees it: one schema
// for all items, or one per position (tuple) and what may follow them.
type arrayItems struct {
	all        *jsonschema.Schema
	tuple      []*jsonschema.Schema
	additional any // nil, bool or *Schema
}

func itemsOf(s *jsonschema.Schema) arrayItems {
	var a arrayItems
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		a.all = it
	case []*jsonschema.Schema:
		a.tuple = it
	}
	// Kept even without a tuple, as Confluent's loader keeps it.
	a.additional = s.AdditionalItems
	// 2020-12: "items" after "prefixItems", or a boolean "items", is what
	// additionalItems was.
	switch {
	case s.PrefixItems != nil:
		a.tuple = s.PrefixItems
		if s.Items2020 != nil {
			a.additional = s.Items2020
		}
	case s.Items2020 != nil && s.Items2020.Bool != nil:
		a.additional = s.Items2020
	case s.Items2020 != nil:
		a.all = s.Items2020
	}
	return a
}

func openArray(s *jsonschema.Schema, a arrayItems) bool {
	permits, schema := additional(a.additional)
	if !permits || schema != nil {
		return false
	}
	return s.UnevaluatedItems == nil || isEmptySchema(s.UnevaluatedItems)
}

func partialItems(s *jsonschema.Schema, a arrayItems) *jsonschema.Schema {
	permits, schema := additional(a.additional)
	if schema != nil {
		return schema
	}
	if permits && a.additional == nil && s.UnevaluatedItems != nil {
		if u := s.UnevaluatedItems; !isFalse(u) && !isEmptySchema(u) {
			return u
		}
	}
	return nil
}

func (c *jsonDiff) compareArray(o, u *jsonschema.Schema) {
	oi, ui := itemsOf(o), itemsOf(u)
	c.enter("items")
	c.compare(oi.all, ui.all)
	c.leave()

	n := min(len(oi.tuple), len(ui.tuple))
	for i := 0; i < n; i++ {
		c.enter("items/" + strconv.Itoa(i))
		c.compare(oi.tuple[i], ui.tuple[i])
		c.leave()
	}
	for i := n; i < len(oi.tuple); i++ {
		c.enter("items/" + strconv.Itoa(i))
		switch ps := partialItems(u, ui); {
		case openArray(u, ui):
			c.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
		case ps != nil:
			sub := c.sub()
			sub.compare(oi.tuple[i], ps)
			c.diffs = append(c.diffs, sub.diffs...)
			if sub.compatible() {
				c.add("ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
			} else {
				c.add("ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
			}
		case isFalse(oi.tuple[i]):
			c.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
		default:
			c.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")
		}
		c.leave()
	}
	for i := n; i < len(ui.tuple); i++ {
		c.enter("items/" + strconv.Itoa(i))
		switch ps := partialItems(o, oi); {
		case openArray(o, oi) && isEmptySchema(ui.tuple[i]):
			c.add("ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
		case openArray(o, oi):
			c.add("ITEM_ADDED_TO_OPEN_CONTENT_MODEL")
		case ps != nil:
			sub := c.sub()
			sub.compare(ps, ui.tuple[i])
			c.diffs = append(c.diffs, sub.diffs...)
			if sub.compatible() {
				c.add("ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
			} else {
				c.add("ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL")
			}
		default:
			c.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")
		}
		c.leave()
	}

	c.enter("additionalItems")
	opermits, oschema := additional(oi.additional)
	upermits, uschema := additional(ui.additional)
	switch {
	case opermits != upermits && opermits:
		c.add("ADDITIONAL_ITEMS_REMOVED")
	case opermits != upermits:
		c.add("ADDITIONAL_ITEMS_ADDED")
	case oschema == nil && uschema != nil:
		c.add("ADDITIONAL_ITEMS_NARROWED")
	case oschema != nil && uschema == nil:
		c.add("ADDITIONAL_ITEMS_EXTENDED")
	default:
		c.compare(oschema, uschema)
	}
	c.leave()

	c.compareUnevaluated("unevaluatedItems", "UNEVALUATED_ITEMS", o.UnevaluatedItems, u.UnevaluatedItems)
	c.compareLimit("maxItems", "MAX_ITEMS", intRat(o.MaxItems), intRat(u.MaxItems))
	c.compareLimit("minItems", "MIN_ITEMS", intRat(o.MinItems), intRat(u.MinItems))
	if o.UniqueItems != u.UniqueItems {
		if o.UniqueItems {
			c.addAt("uniqueItems", "UNIQUE_ITEMS_REMOVED")
		} else {
			c.addAt("uniqueItems", "UNIQUE_ITEMS_ADDED")
		}
	}
	c.compareLimit("maxContains", "MAX_CONTAINS", intRat(o.MaxContains), intRat(u.MaxContains))
	c.compareLimit("minContains", "MIN_CONTAINS", intRat(o.MinContains), intRat(u.MinContains))
}
