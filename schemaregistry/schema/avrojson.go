package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// An Avro schema's JSON kept in its written order: Confluent's canonical
// text is Avro Java's Schema.toString, which writes properties in the
// order they were read, so the text is printed from this tree rather than
// from hamba's parsed schema (whose properties are an unordered map).

type avroObject struct {
	keys []string
	vals map[string]any
}

func (o *avroObject) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *avroObject) str(k string) (string, bool) {
	s, ok := o.vals[k].(string)
	return s, ok
}

// avroDecode decodes JSON into nil, bool, json.Number, string, []any
// and *avroObject (a repeated key keeps its first place and its last
// value, as Jackson does).
func avroDecode(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	v, err := avroDecodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the schema")
	}
	return v, nil
}

func avroDecodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &avroObject{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := avroDecodeValue(d)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := avroDecodeValue(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

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
		avroWriteString(b, v)
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
			avroWriteString(b, e)
		}
		b.WriteByte(']')
	case *avroObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			avroWriteString(b, k)
			b.WriteByte(':')
			avroWriteJSON(b, v.vals[k])
		}
		b.WriteByte('}')
	}
}

// avroWriteString quotes s as Jackson does: the short escapes for
// quote, backslash, \b \f \n \r \t, \u00XX for other control characters,
// everything else (HTML characters, U+2028) as it is.
func avroWriteString(b *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
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
func avroFullName(o *avroObject, ns string) string {
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
			avroWriteString(&p.b, v)
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
	case *avroObject:
		p.object(v, ns)
	default:
		avroWriteJSON(&p.b, v)
	}
}

// ref prints a reference to a named type defined before.
func (p *avroPrinter) ref(name, ns string) {
	full := name
	if !strings.Contains(name, ".") && ns != "" && p.names[ns+"."+name] {
		full = ns + "." + name
	}
	avroWriteString(&p.b, avroQualified(full, ns))
}

func (p *avroPrinter) object(o *avroObject, ns string) {
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
		avroWriteString(&p.b, typ)
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
			avroWriteString(&p.b, typ)
			return
		}
		p.b.WriteString(`{"type":`)
		avroWriteString(&p.b, typ)
		p.props(o, avroSchemaReserved)
		p.b.WriteByte('}')
	}
}

func (p *avroPrinter) named(o *avroObject, typ, ns string) {
	full := avroFullName(o, ns)
	if p.names[full] {
		avroWriteString(&p.b, avroQualified(full, ns))
		return
	}
	p.names[full] = true
	space, short := avroSplitName(full)
	p.b.WriteString(`{"type":`)
	avroWriteString(&p.b, typ)
	p.b.WriteString(`,"name":`)
	avroWriteString(&p.b, short)
	if space != ns {
		p.b.WriteString(`,"namespace":`)
		avroWriteString(&p.b, space)
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
			if fo, ok := f.(*avroObject); ok {
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

func (p *avroPrinter) field(f *avroObject, ns string) {
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
		avroWriteString(&p.b, strings.ToLower(order))
	}
	p.aliases(f, "", false)
	p.props(f, avroFieldReserved)
	p.b.WriteByte('}')
}

// aliases prints o's aliases: a named type's as Avro Java keeps them
// (full names, written relative to the type's namespace space), a
// field's as they are.
func (p *avroPrinter) aliases(o *avroObject, space string, named bool) {
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
func (p *avroPrinter) propKeys(o *avroObject, reserved []string) []string {
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

func (p *avroPrinter) props(o *avroObject, reserved []string) {
	for _, k := range p.propKeys(o, reserved) {
		p.b.WriteByte(',')
		avroWriteString(&p.b, k)
		p.b.WriteByte(':')
		avroWriteJSON(&p.b, o.vals[k])
	}
}
