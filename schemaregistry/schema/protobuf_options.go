package schema

import (
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile/ast"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Options as Confluent's parser (Square Wire) models them: a name, whether
// it is parenthesised (a custom option), and a value of one kind. A dotted
// name "(a).b.c = 1" is an option "a" whose value is the option "b.c = 1".

type optKind int

const (
	optString optKind = iota
	optBool
	optNumber
	optEnum
	optMap    // a message literal { ... }
	optList   // [ ... ] inside a message literal
	optNested // the rest of a dotted option name
)

type optVal struct {
	kind    optKind
	text    string // string value (unescaped) or the literal as written
	entries []optEntry
	list    []optVal
	nested  *protoOption
}

type optEntry struct {
	key string
	val optVal
}

type protoOption struct {
	name  string
	paren bool
	val   optVal
}

func (p *protoPrinter) convertOptions(nodes []*ast.OptionNode) []protoOption {
	out := make([]protoOption, 0, len(nodes))
	for _, o := range nodes {
		parts := o.Name.Parts
		last := parts[len(parts)-1]
		opt := protoOption{name: string(last.Name.AsIdentifier()), paren: last.IsExtension(), val: p.optionValue(o.Val)}
		for i := len(parts) - 2; i >= 0; i-- {
			inner := opt
			opt = protoOption{name: string(parts[i].Name.AsIdentifier()), paren: parts[i].IsExtension(),
				val: optVal{kind: optNested, nested: &inner}}
		}
		out = append(out, opt)
	}
	return out
}

func (p *protoPrinter) raw(n ast.Node) string {
	return p.file.NodeInfo(n).RawText()
}

func (p *protoPrinter) optionValue(v ast.ValueNode) optVal {
	switch v := v.(type) {
	case ast.StringValueNode:
		return optVal{kind: optString, text: v.AsString()}
	case ast.IdentValueNode:
		id := string(v.AsIdentifier())
		if id == "true" || id == "false" {
			return optVal{kind: optBool, text: id}
		}
		return optVal{kind: optEnum, text: id}
	case *ast.UintLiteralNode, *ast.FloatLiteralNode, *ast.SpecialFloatLiteralNode:
		return optVal{kind: optNumber, text: p.raw(v)}
	case *ast.NegativeIntLiteralNode:
		return optVal{kind: optNumber, text: "-" + p.raw(v.Uint)}
	case *ast.SignedFloatLiteralNode:
		return optVal{kind: optNumber, text: string(v.Sign.Rune) + p.raw(v.Float)}
	case *ast.ArrayLiteralNode:
		out := optVal{kind: optList}
		for _, e := range v.Elements {
			out.list = append(out.list, p.optionValue(e))
		}
		return out
	case *ast.MessageLiteralNode:
		out := optVal{kind: optMap}
		for _, e := range v.Elements {
			key, val := e.Name.Value(), p.optionValue(e.Val)
			found := false
			for i := range out.entries {
				if out.entries[i].key != key {
					continue
				}
				// A repeated key collects its values in a list.
				found = true
				if out.entries[i].val.kind != optList {
					out.entries[i].val = optVal{kind: optList, list: []optVal{out.entries[i].val}}
				}
				out.entries[i].val.list = append(out.entries[i].val.list, val)
			}
			if !found {
				out.entries = append(out.entries, optEntry{key, val})
			}
		}
		return out
	}
	return optVal{kind: optEnum, text: p.raw(v)}
}

// escapeProtoString escapes a string value as Confluent prints it.
func escapeProtoString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\a':
			b.WriteString(`\a`)
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
		case '\v':
			b.WriteString(`\v`)
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '"':
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (p *protoPrinter) optionText(o protoOption) string {
	var b strings.Builder
	if o.paren {
		b.WriteString("(" + o.name + ")")
	} else {
		b.WriteString(o.name)
	}
	switch o.val.kind {
	case optString:
		b.WriteString(" = \"" + escapeProtoString(o.val.text) + "\"")
	case optBool, optEnum:
		b.WriteString(" = " + o.val.text)
	case optNumber:
		b.WriteString(" = " + p.formatNumber(o.val.text))
	case optNested:
		b.WriteString("." + p.optionText(*o.val.nested))
	case optMap:
		b.WriteString(" = {\n")
		p.formatOptionMap(&b, o.val.entries)
		b.WriteByte('}')
	case optList:
		b.WriteString(" = " + p.valueList(o.val.list))
	}
	return b.String()
}

func (p *protoPrinter) optionStatement(o protoOption) string {
	return "option " + p.optionText(o) + ";\n"
}

// appendOptionList prints the bracketed options of a field or enum value.
func (p *protoPrinter) appendOptionList(opts []protoOption) string {
	if len(opts) == 1 {
		return "[" + p.optionText(opts[0]) + "]"
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, o := range opts {
		sep := ","
		if i == len(opts)-1 {
			sep = ""
		}
		appendIndented(&b, p.optionText(o)+sep)
	}
	b.WriteByte(']')
	return b.String()
}

func (p *protoPrinter) appendOptions(nodes []protoOption) string { return p.appendOptionList(nodes) }

func (p *protoPrinter) valueList(list []optVal) string {
	if len(list) == 1 {
		return "[" + p.formatValue(list[0]) + "]"
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, v := range list {
		sep := ","
		if i == len(list)-1 {
			sep = ""
		}
		appendIndented(&b, p.formatValue(v)+sep)
	}
	b.WriteByte(']')
	return b.String()
}

func (p *protoPrinter) formatValue(v optVal) string {
	switch v.kind {
	case optString:
		return "\"" + escapeProtoString(v.text) + "\""
	case optMap:
		var b strings.Builder
		b.WriteString("{\n")
		p.formatOptionMap(&b, v.entries)
		b.WriteByte('}')
		return b.String()
	case optList:
		if p.norm && len(v.list) == 1 {
			return p.formatValue(v.list[0])
		}
		var b strings.Builder
		b.WriteString("[\n")
		for i, e := range v.list {
			sep := ","
			if i == len(v.list)-1 {
				sep = ""
			}
			appendIndented(&b, p.formatValue(e)+sep)
		}
		b.WriteByte(']')
		return b.String()
	case optNumber:
		return p.formatNumber(v.text)
	case optNested:
		return p.optionText(*v.nested)
	}
	return v.text
}

func (p *protoPrinter) formatOptionMap(b *strings.Builder, entries []optEntry) {
	if p.norm {
		var kept []optEntry
		seen := map[string]bool{}
		for _, e := range entries {
			if e.val.kind == optList && len(e.val.list) == 0 {
				continue
			}
			if strings.HasPrefix(e.key, "[") && strings.HasSuffix(e.key, "]") {
				if r := p.resolveExtension(e.key[1 : len(e.key)-1]); r != "" {
					e.key = "[" + r + "]"
				}
			}
			if !seen[e.key] {
				seen[e.key] = true
				kept = append(kept, e)
			}
		}
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].key < kept[j].key })
		entries = kept
	}
	for i, e := range entries {
		sep := ","
		if i == len(entries)-1 {
			sep = ""
		}
		appendIndented(b, e.key+": "+p.formatValue(e.val)+sep)
	}
}

// formatNumber prints a number literal; normalising prints it as Java's
// default DecimalFormat does without grouping (at most three decimals).
func (p *protoPrinter) formatNumber(text string) string {
	if !p.norm {
		return text
	}
	if i, err := strconv.ParseInt(text, 0, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if u, err := strconv.ParseUint(text, 0, 64); err == nil {
		return strconv.FormatUint(u, 10)
	}
	f, err := strconv.ParseFloat(strings.TrimRight(text, "fFdD"), 64)
	if err != nil || f != f || f > 1e308 || f < -1e308 {
		return text
	}
	r := new(big.Float).SetFloat64(f).Text('f', 3)
	if strings.Contains(r, ".") {
		r = strings.TrimRight(strings.TrimRight(r, "0"), ".")
	}
	return r
}

func (p *protoPrinter) resolveExtension(name string) string {
	return resolveScoped(name, p.fullScope(), func(n string) bool {
		_, ok := p.syms.extensions[protoreflect.FullName(n)]
		return ok
	})
}

// filterOptions is Confluent's normal form of a list of options: custom
// option names resolved to their extension's full name (a dotted name then
// becomes a message literal), sorted by name, and the uses of one
// non-repeated custom option merged into one.
func (p *protoPrinter) filterOptions(opts []protoOption) []protoOption {
	if !p.norm || len(opts) == 0 {
		return opts
	}
	out := make([]protoOption, 0, len(opts))
	for _, o := range opts {
		if o.paren {
			if r := p.resolveExtension(o.name); r != "" {
				o.name = r
				o = transformOption(o)
			}
		}
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	var merged []protoOption
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].name == out[i].name {
			j++
		}
		ext := p.syms.extensions[protoreflect.FullName(out[i].name)]
		if ext != nil && !ext.IsList() {
			acc := out[i]
			for _, o := range out[i+1 : j] {
				acc = mergeOption(ext, acc, o)
			}
			merged = append(merged, acc)
		} else {
			merged = append(merged, out[i:j]...)
		}
		i = j
	}
	return merged
}

// transformOption turns "(a).b.c = v" into "(a) = { b: { c: v } }".
func transformOption(o protoOption) protoOption {
	if o.val.kind != optNested {
		return o
	}
	return protoOption{name: o.name, paren: o.paren, val: nestedToMap(*o.val.nested)}
}

func nestedToMap(n protoOption) optVal {
	v := n.val
	if v.kind == optNested {
		v = nestedToMap(*v.nested)
	}
	return optVal{kind: optMap, entries: []optEntry{{n.name, v}}}
}

func mergeOption(field protoreflect.FieldDescriptor, existing, replacement protoOption) protoOption {
	replacement = transformOption(replacement)
	if existing.val.kind == optMap && replacement.val.kind == optMap {
		return protoOption{name: replacement.name, paren: replacement.paren,
			val: optVal{kind: optMap, entries: mergeOptionMaps(field.Message(), existing.val.entries, replacement.val.entries)}}
	}
	return replacement
}

func mergeOptionMaps(msg protoreflect.MessageDescriptor, a, b []optEntry) []optEntry {
	out := append([]optEntry(nil), a...)
	for _, e := range b {
		var fd protoreflect.FieldDescriptor
		if msg != nil {
			fd = msg.Fields().ByName(protoreflect.Name(e.key))
		}
		found := false
		for i := range out {
			if out[i].key == e.key {
				out[i].val = mergeOptionValues(fd, out[i].val, e.val)
				found = true
				break
			}
		}
		if !found {
			out = append(out, e)
		}
	}
	return out
}

func mergeOptionValues(fd protoreflect.FieldDescriptor, v1, v2 optVal) optVal {
	singular := fd != nil && !fd.IsList()
	if singular && v1.kind == optMap && v2.kind == optMap && fd.Message() != nil {
		return optVal{kind: optMap, entries: mergeOptionMaps(fd.Message(), v1.entries, v2.entries)}
	}
	if singular {
		return v2
	}
	var list []optVal
	seen := map[string]bool{}
	add := func(v optVal) {
		vs := []optVal{v}
		if v.kind == optList {
			vs = v.list
		}
		for _, x := range vs {
			k := (&protoPrinter{}).formatValue(x)
			if !seen[k] {
				seen[k] = true
				list = append(list, x)
			}
		}
	}
	add(v1)
	add(v2)
	return optVal{kind: optList, list: list}
}

// options converts and normalises the options of one declaration.
func (p *protoPrinter) options(nodes []*ast.OptionNode) []protoOption {
	return p.filterOptions(p.convertOptions(nodes))
}
