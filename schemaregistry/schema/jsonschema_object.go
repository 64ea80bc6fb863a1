package schema

import "github.com/santhosh-tekuri/jsonschema/v6"

// Confluent's rules for objects: required properties, properties added to
// or removed from an open, closed or partly open object ("content
// model"), dependencies, additionalProperties, the property counts.

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
		c.merge(sub)
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
		c.merge(sub)
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
