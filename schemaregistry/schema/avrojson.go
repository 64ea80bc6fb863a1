package schema

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// An Avro schema's JSON kept in its written order: Confluent's canonical
// text is Avro Java's Schema.toString, which writes properties in the
// order they were read, so the text is printed from this tree rather than
// from hamba's parsed schema (whose properties are an unordered map).

// avroWriteJSON writes v compactly, escaping as Jackson does (no HTML escapes).
func avroWriteJSON(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(v.String())
	case string:
		writeJacksonString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			avroWriteJSON(b, e)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJacksonString(b, e)
		}
		b.WriteByte(']')
	case *orderedObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJacksonString(b, k)
			b.WriteByte(':')
			avroWriteJSON(b, v.values[k])
		}
		b.WriteByte('}')
	}
}

var avroPrimitives = []string{"null", "boolean", "int", "long", "float", "double", "bytes", "string"}

// Keys Avro Java reads itself; every other key of a schema or a field is
// a property, printed after them.
var (
	avroSchemaReserved = []string{"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases", "default"}
	avroFieldReserved  = []string{"default", "doc", "name", "order", "type", "aliases"}
)

// avroPrinter prints a schema as Avro Java's Schema.toString(known,
// false) does; normalize applies first what Confluent's
// AvroSchemaUtils.toNormalizedString changes (properties and aliases
// sorted, an empty doc of a named type dropped).
type avroPrinter struct {
	b         bytes.Buffer
	names     map[string]bool // full names defined so far (and the references)
	normalize bool
	// defs are the named types defined inside the references: Avro Java
	// writes one out where the schema first uses it (only a reference's
	// own type counts as known).
	defs map[string]avroDef
}

// avroDef is a named type's definition and its enclosing namespace.
type avroDef struct {
	obj *orderedObject
	ns  string
}

// collectAvroDefs finds every named type defined in tree.
func collectAvroDefs(tree any, ns string, defs map[string]avroDef) {
	switch v := tree.(type) {
	case []any:
		for _, e := range v {
			collectAvroDefs(e, ns, defs)
		}
	case *orderedObject:
		t, _ := v.get("type")
		typ, ok := t.(string)
		if !ok {
			collectAvroDefs(t, ns, defs)
			return
		}
		switch typ {
		case "record", "error", "enum", "fixed":
			full := avroFullName(v, ns)
			defs[full] = avroDef{v, ns}
			space, _ := avroSplitName(full)
			fields, _ := v.get("fields")
			fs, _ := fields.([]any)
			for _, f := range fs {
				if fo, ok := f.(*orderedObject); ok {
					ft, _ := fo.get("type")
					collectAvroDefs(ft, space, defs)
				}
			}
		case "array":
			items, _ := v.get("items")
			collectAvroDefs(items, ns, defs)
		case "map":
			values, _ := v.get("values")
			collectAvroDefs(values, ns, defs)
		}
	}
}

func avroSplitName(full string) (space, short string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// qualified is a name as written where the enclosing namespace is ns.
func avroQualified(full, ns string) string {
	space, short := avroSplitName(full)
	if space == "" || space == ns {
		return short
	}
	return full
}

// fullName resolves a named type's name within the enclosing namespace.
func avroFullName(o *orderedObject, ns string) string {
	name, _ := o.str("name")
	if strings.Contains(name, ".") {
		return name
	}
	space := ns
	if n, ok := o.str("namespace"); ok {
		space = n
	}
	if space == "" {
		return name
	}
	return space + "." + name
}

func (p *avroPrinter) schema(v any, ns string) {
	switch v := v.(type) {
	case string:
		if slices.Contains(avroPrimitives, v) {
			writeJacksonString(&p.b, v)
			return
		}
		p.ref(v, ns)
	case []any:
		p.b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				p.b.WriteByte(',')
			}
			p.schema(e, ns)
		}
		p.b.WriteByte(']')
	case *orderedObject:
		p.object(v, ns)
	default:
		avroWriteJSON(&p.b, v)
	}
}

// ref prints a reference to a named type defined before.
func (p *avroPrinter) ref(name, ns string) {
	full := name
	if !strings.Contains(name, ".") && ns != "" && (p.names[ns+"."+name] || p.defs[ns+"."+name].obj != nil) {
		full = ns + "." + name
	}
	if def := p.defs[full]; !p.names[full] && def.obj != nil {
		typ, _ := def.obj.str("type")
		p.namedAs(def.obj, typ, full, ns)
		return
	}
	writeJacksonString(&p.b, avroQualified(full, ns))
}

func (p *avroPrinter) object(o *orderedObject, ns string) {
	t, _ := o.get("type")
	typ, isStr := t.(string)
	if !isStr {
		p.schema(t, ns) // {"type": {...}} or {"type": [...]}
		return
	}
	switch typ {
	case "record", "error", "enum", "fixed":
		p.named(o, typ, ns)
	case "array", "map":
		inner := "items"
		if typ == "map" {
			inner = "values"
		}
		p.b.WriteString(`{"type":`)
		writeJacksonString(&p.b, typ)
		p.b.WriteString(`,"` + inner + `":`)
		in, _ := o.get(inner)
		p.schema(in, ns)
		p.props(o, avroSchemaReserved)
		p.b.WriteByte('}')
	default:
		if !slices.Contains(avroPrimitives, typ) {
			p.ref(typ, ns)
			return
		}
		if len(p.propKeys(o, avroSchemaReserved)) == 0 {
			writeJacksonString(&p.b, typ)
			return
		}
		p.b.WriteString(`{"type":`)
		writeJacksonString(&p.b, typ)
		p.props(o, avroSchemaReserved)
		p.b.WriteByte('}')
	}
}

func (p *avroPrinter) named(o *orderedObject, typ, ns string) {
	p.namedAs(o, typ, avroFullName(o, ns), ns)
}

// namedAs prints the named type full defined by o where the enclosing
// namespace is ns.
func (p *avroPrinter) namedAs(o *orderedObject, typ, full, ns string) {
	if p.names[full] {
		writeJacksonString(&p.b, avroQualified(full, ns))
		return
	}
	p.names[full] = true
	space, short := avroSplitName(full)
	p.b.WriteString(`{"type":`)
	writeJacksonString(&p.b, typ)
	p.b.WriteString(`,"name":`)
	writeJacksonString(&p.b, short)
	if space != ns {
		p.b.WriteString(`,"namespace":`)
		writeJacksonString(&p.b, space)
	}
	if doc, ok := o.get("doc"); ok && !(p.normalize && doc == "") {
		p.b.WriteString(`,"doc":`)
		avroWriteJSON(&p.b, doc)
	}
	switch typ {
	case "record", "error":
		p.b.WriteString(`,"fields":[`)
		fields, _ := o.get("fields")
		fs, _ := fields.([]any)
		for i, f := range fs {
			if i > 0 {
				p.b.WriteByte(',')
			}
			if fo, ok := f.(*orderedObject); ok {
				p.field(fo, space)
			}
		}
		p.b.WriteByte(']')
	case "enum":
		p.b.WriteString(`,"symbols":`)
		syms, _ := o.get("symbols")
		avroWriteJSON(&p.b, syms)
		if d, ok := o.get("default"); ok {
			p.b.WriteString(`,"default":`)
			avroWriteJSON(&p.b, d)
		}
	case "fixed":
		p.b.WriteString(`,"size":`)
		size, _ := o.get("size")
		avroWriteJSON(&p.b, size)
	}
	p.props(o, avroSchemaReserved)
	p.aliases(o, space, true)
	p.b.WriteByte('}')
}

func (p *avroPrinter) field(f *orderedObject, ns string) {
	p.b.WriteString(`{"name":`)
	name, _ := f.get("name")
	avroWriteJSON(&p.b, name)
	p.b.WriteString(`,"type":`)
	t, _ := f.get("type")
	p.schema(t, ns)
	if doc, ok := f.get("doc"); ok {
		p.b.WriteString(`,"doc":`)
		avroWriteJSON(&p.b, doc)
	}
	if d, ok := f.get("default"); ok {
		p.b.WriteString(`,"default":`)
		avroWriteJSON(&p.b, d)
	}
	if order, ok := f.str("order"); ok && strings.ToLower(order) != "ascending" {
		p.b.WriteString(`,"order":`)
		writeJacksonString(&p.b, strings.ToLower(order))
	}
	p.aliases(f, "", false)
	p.props(f, avroFieldReserved)
	p.b.WriteByte('}')
}

// aliases prints o's aliases: a named type's as Avro Java keeps them
// (full names, written relative to the type's namespace space), a
// field's as they are.
func (p *avroPrinter) aliases(o *orderedObject, space string, named bool) {
	a, ok := o.get("aliases")
	list, _ := a.([]any)
	if !ok || len(list) == 0 {
		return
	}
	var names []string
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			continue
		}
		if named && !strings.Contains(s, ".") && space != "" {
			s = space + "." + s
		}
		if !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	if p.normalize {
		slices.Sort(names)
	}
	if named {
		for i, n := range names {
			names[i] = avroQualified(n, space)
		}
	}
	p.b.WriteString(`,"aliases":`)
	avroWriteJSON(&p.b, names)
}

// propKeys are o's properties in print order: as read, or, normalising,
// logicalType (and a decimal's precision and scale) first, then sorted.
func (p *avroPrinter) propKeys(o *orderedObject, reserved []string) []string {
	var keys []string
	for _, k := range o.keys {
		if !slices.Contains(reserved, k) {
			keys = append(keys, k)
		}
	}
	if !p.normalize {
		return keys
	}
	rank := func(k string) int {
		switch k {
		case "logicalType":
			return 0
		case "precision":
			return 1
		case "scale":
			return 2
		}
		return 3
	}
	_, logical := o.get("logicalType")
	slices.SortFunc(keys, func(a, b string) int {
		if logical {
			if ra, rb := rank(a), rank(b); ra != rb {
				return ra - rb
			}
		}
		return strings.Compare(a, b)
	})
	return keys
}

func (p *avroPrinter) props(o *orderedObject, reserved []string) {
	for _, k := range p.propKeys(o, reserved) {
		p.b.WriteByte(',')
		writeJacksonString(&p.b, k)
		p.b.WriteByte(':')
		avroWriteJSON(&p.b, o.values[k])
	}
}
