package schema

import (
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Confluent's Protobuf differences (its protobuf diff package), by the
// names its compatibility messages carry.
const (
	protoPackageChanged             = "PACKAGE_CHANGED"
	protoMessageAdded               = "MESSAGE_ADDED"
	protoMessageRemoved             = "MESSAGE_REMOVED"
	protoMessageMoved               = "MESSAGE_MOVED"
	protoEnumAdded                  = "ENUM_ADDED"
	protoEnumRemoved                = "ENUM_REMOVED"
	protoEnumConstAdded             = "ENUM_CONST_ADDED"
	protoEnumConstChanged           = "ENUM_CONST_CHANGED"
	protoEnumConstRemoved           = "ENUM_CONST_REMOVED"
	protoFieldAdded                 = "FIELD_ADDED"
	protoFieldRemoved               = "FIELD_REMOVED"
	protoFieldNameChanged           = "FIELD_NAME_CHANGED"
	protoFieldKindChanged           = "FIELD_KIND_CHANGED"
	protoFieldScalarKindChanged     = "FIELD_SCALAR_KIND_CHANGED"
	protoFieldNamedTypeChanged      = "FIELD_NAMED_TYPE_CHANGED"
	protoFieldNumericLabelChanged   = "FIELD_NUMERIC_LABEL_CHANGED"
	protoFieldStringOrBytesLabel    = "FIELD_STRING_OR_BYTES_LABEL_CHANGED"
	protoRequiredFieldAdded         = "REQUIRED_FIELD_ADDED"
	protoRequiredFieldRemoved       = "REQUIRED_FIELD_REMOVED"
	protoOneofAdded                 = "ONEOF_ADDED"
	protoOneofRemoved               = "ONEOF_REMOVED"
	protoOneofFieldAdded            = "ONEOF_FIELD_ADDED"
	protoOneofFieldRemoved          = "ONEOF_FIELD_REMOVED"
	protoOneofFieldMovedToTopLevel  = "ONEOF_FIELD_MOVED_TO_TOP_LEVEL"
	protoMultipleFieldsMovedToOneof = "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
	protoFieldMovedToExistingOneof  = "FIELD_MOVED_TO_EXISTING_ONEOF"
)

// protoCompatibleChanges are the differences a reader of the newer schema
// copes with (Confluent's SchemaDiff.COMPATIBLE_CHANGES); every other one
// makes the change incompatible.
var protoCompatibleChanges = map[string]bool{
	protoMessageAdded: true, protoMessageMoved: true, protoEnumAdded: true, protoEnumRemoved: true,
	protoEnumConstAdded: true, protoEnumConstChanged: true, protoEnumConstRemoved: true,
	protoFieldAdded: true, protoFieldRemoved: true, protoFieldNameChanged: true,
	protoFieldStringOrBytesLabel: true, protoOneofAdded: true, protoOneofRemoved: true,
	protoOneofFieldAdded: true, protoOneofFieldMovedToTopLevel: true,
}

// protoDifference is one difference at a path "#/Message/tag".
type protoDifference struct {
	kind string
	path string
}

// String is Confluent's message for the difference, with its two %s
// verbs (see FormatMessages).
func (d protoDifference) String() string {
	p := d.path
	var desc string
	switch d.kind {
	case protoPackageChanged:
		desc = "The package at '" + p + "' in the %s schema does not match the package in the %s schema"
	case protoMessageRemoved:
		desc = "The %s schema is missing a MESSAGE type at path '" + p + "' in the %s schema"
	case protoFieldKindChanged:
		desc = "The type of a field at path '" + p + "' in the %s schema does not match the %s schema"
	case protoFieldScalarKindChanged:
		desc = "The kind of a SCALAR field at path '" + p + "' in the %s schema does not match its kind in the %s schema"
	case protoFieldNamedTypeChanged:
		desc = "The type of a MESSAGE field at path '" + p + "' in the %s schema does not match its type in the %s schema"
	case protoFieldNumericLabelChanged:
		desc = "The label for a NUMERIC field at path '" + p + "' in the %s schema does not match its label in the %s schema"
	case protoRequiredFieldAdded:
		desc = "A required field  at path '" + p + "' in the %s schema is missing in the %s schema"
	case protoRequiredFieldRemoved:
		desc = "The %s schema is missing a required field at path: '" + p + "' in the %s schema"
	case protoOneofFieldRemoved:
		desc = "The %s schema is missing a oneof field at path '" + p + "' in the %s schema"
	case protoOneofFieldMovedToTopLevel:
		desc = "The oneof field at path '" + p + "' in the %s schema was moved out of its oneof to a top-level field in the %s schema"
	case protoMultipleFieldsMovedToOneof:
		desc = "Multiple fields in the oneof at path '" + p + "' in the %s schema are outside a oneof in the %s schema"
	case protoFieldMovedToExistingOneof:
		desc = "A field in the oneof at path '" + p + "' in the %s schema is outside an existing oneof in the %s schema"
	}
	return `{errorType:"` + d.kind + `", description:"` + desc + `"}`
}

// protoDiff walks an original (older) and an update (newer) file.
type protoDiff struct {
	path  []string
	diffs []protoDifference
	// comparing holds the original messages being compared, so recursive
	// message types end.
	comparing map[protoreflect.FullName]bool
}

func (c *protoDiff) add(kind string) {
	c.diffs = append(c.diffs, protoDifference{kind, "#/" + strings.Join(c.path, "/")})
}

func (c *protoDiff) enter(p string) { c.path = append(c.path, p) }
func (c *protoDiff) leave()         { c.path = c.path[:len(c.path)-1] }

func (c *protoDiff) compatible() bool {
	for _, d := range c.diffs {
		if !protoCompatibleChanges[d.kind] {
			return false
		}
	}
	return true
}

// protoCompare lists every difference between original and update.
func protoCompare(original, update protoreflect.FileDescriptor) []protoDifference {
	c := &protoDiff{comparing: map[protoreflect.FullName]bool{}}
	if original.Package() != update.Package() {
		c.add(protoPackageChanged)
	}
	c.compareTypes(original.Messages(), original.Enums(), update.Messages(), update.Enums())
	return c.diffs
}

func (c *protoDiff) compareTypes(om protoreflect.MessageDescriptors, oe protoreflect.EnumDescriptors,
	um protoreflect.MessageDescriptors, ue protoreflect.EnumDescriptors) {
	type indexed struct {
		m     protoreflect.MessageDescriptor
		index int
	}
	messages := func(ms protoreflect.MessageDescriptors) map[protoreflect.Name]indexed {
		out := map[protoreflect.Name]indexed{}
		n := 0
		for i := 0; i < ms.Len(); i++ {
			if m := ms.Get(i); !m.IsMapEntry() {
				out[m.Name()] = indexed{m, n}
				n++
			}
		}
		return out
	}
	oms, ums := messages(om), messages(um)
	for _, name := range unionNames(keysOf(oms), keysOf(ums)) {
		c.enter(string(name))
		o, inOrig := oms[name]
		u, inUpd := ums[name]
		switch {
		case !inUpd:
			c.add(protoMessageRemoved)
		case !inOrig:
			c.add(protoMessageAdded)
		default:
			c.compareMessages(o.m, u.m)
			if o.index != u.index {
				// Serialisers name a message by its index in the schema of
				// the id they write with, so moving one is compatible.
				c.add(protoMessageMoved)
			}
		}
		c.leave()
	}
	enums := func(es protoreflect.EnumDescriptors) map[protoreflect.Name]protoreflect.EnumDescriptor {
		out := map[protoreflect.Name]protoreflect.EnumDescriptor{}
		for i := 0; i < es.Len(); i++ {
			out[es.Get(i).Name()] = es.Get(i)
		}
		return out
	}
	oes, ues := enums(oe), enums(ue)
	for _, name := range unionNames(keysOf(oes), keysOf(ues)) {
		c.enter(string(name))
		o, u := oes[name], ues[name]
		switch {
		case u == nil:
			c.add(protoEnumRemoved)
		case o == nil:
			c.add(protoEnumAdded)
		default:
			c.compareEnums(o, u)
		}
		c.leave()
	}
}

func keysOf[V any](m map[protoreflect.Name]V) []protoreflect.Name {
	out := make([]protoreflect.Name, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func unionNames(a, b []protoreflect.Name) []protoreflect.Name {
	set := map[protoreflect.Name]bool{}
	for _, n := range append(append([]protoreflect.Name(nil), a...), b...) {
		set[n] = true
	}
	out := make([]protoreflect.Name, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (c *protoDiff) compareEnums(o, u protoreflect.EnumDescriptor) {
	byNumber := func(e protoreflect.EnumDescriptor) map[protoreflect.EnumNumber]protoreflect.Name {
		out := map[protoreflect.EnumNumber]protoreflect.Name{}
		for i := 0; i < e.Values().Len(); i++ {
			v := e.Values().Get(i)
			out[v.Number()] = v.Name()
		}
		return out
	}
	ov, uv := byNumber(o), byNumber(u)
	var nums []protoreflect.EnumNumber
	for n := range ov {
		nums = append(nums, n)
	}
	for n := range uv {
		if _, ok := ov[n]; !ok {
			nums = append(nums, n)
		}
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	for _, n := range nums {
		c.enter(strconv.Itoa(int(n)))
		on, inO := ov[n]
		un, inU := uv[n]
		switch {
		case !inU:
			c.add(protoEnumConstRemoved)
		case !inO:
			c.add(protoEnumConstAdded)
		case on != un:
			c.add(protoEnumConstChanged)
		}
		c.leave()
	}
}

// realOneof is the oneof a field belongs to, ignoring the synthetic ones
// of proto3 optional fields (Confluent's parser has none).
func realOneof(f protoreflect.FieldDescriptor) string {
	if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return string(o.Name())
	}
	return ""
}

func (c *protoDiff) compareMessages(o, u protoreflect.MessageDescriptor) {
	if c.comparing[o.FullName()] {
		return
	}
	c.comparing[o.FullName()] = true
	defer delete(c.comparing, o.FullName())

	fields := func(m protoreflect.MessageDescriptor) (map[protoreflect.FieldNumber]protoreflect.FieldDescriptor, map[string]bool) {
		byNum := map[protoreflect.FieldNumber]protoreflect.FieldDescriptor{}
		oneofs := map[string]bool{}
		for i := 0; i < m.Fields().Len(); i++ {
			f := m.Fields().Get(i)
			byNum[f.Number()] = f
		}
		for i := 0; i < m.Oneofs().Len(); i++ {
			if of := m.Oneofs().Get(i); !of.IsSynthetic() {
				oneofs[string(of.Name())] = true
			}
		}
		return byNum, oneofs
	}
	oFields, oOneofs := fields(o)
	uFields, uOneofs := fields(u)

	// A oneof removed by name with none of its members left anywhere is a
	// deletion, which is compatible.
	deleted := map[string]bool{}
	for name := range oOneofs {
		if uOneofs[name] {
			continue
		}
		survives := false
		for n, f := range oFields {
			if realOneof(f) == name && uFields[n] != nil {
				survives = true
			}
		}
		if !survives {
			deleted[name] = true
		}
	}

	// Fields that were independent and are now in one oneof can no longer
	// all be set: old data with several of them set is lost.
	for i := 0; i < u.Oneofs().Len(); i++ {
		of := u.Oneofs().Get(i)
		if of.IsSynthetic() {
			continue
		}
		c.enter(string(of.Name()))
		groups := map[string]bool{}
		movedIn := 0
		for j := 0; j < of.Fields().Len(); j++ {
			n := of.Fields().Get(j).Number()
			if of := oFields[n]; of != nil {
				if name := realOneof(of); name != "" {
					groups["oneof:"+name] = true
				} else {
					groups["field:"+strconv.Itoa(int(n))] = true
					movedIn++
				}
			}
		}
		if len(groups) > 1 {
			if movedIn > 1 {
				c.add(protoMultipleFieldsMovedToOneof)
			} else {
				c.add(protoFieldMovedToExistingOneof)
			}
		}
		c.leave()
	}

	var oneofNames []string
	for n := range oOneofs {
		oneofNames = append(oneofNames, n)
	}
	for n := range uOneofs {
		if !oOneofs[n] {
			oneofNames = append(oneofNames, n)
		}
	}
	sort.Strings(oneofNames)
	for _, n := range oneofNames {
		c.enter(n)
		if !uOneofs[n] {
			c.add(protoOneofRemoved)
		} else if !oOneofs[n] {
			c.add(protoOneofAdded)
		}
		c.leave()
	}

	var nums []protoreflect.FieldNumber
	for n := range oFields {
		nums = append(nums, n)
	}
	for n := range uFields {
		if oFields[n] == nil {
			nums = append(nums, n)
		}
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	for _, n := range nums {
		of, uf := oFields[n], uFields[n]
		tag := strconv.Itoa(int(n))
		switch {
		case uf == nil:
			if name := realOneof(of); name != "" {
				if !deleted[name] {
					c.enter(name)
					c.enter(tag)
					c.add(protoOneofFieldRemoved)
					c.leave()
					c.leave()
				}
			} else {
				c.enter(tag)
				if of.Cardinality() == protoreflect.Required {
					c.add(protoRequiredFieldRemoved)
				} else {
					c.add(protoFieldRemoved)
				}
				c.leave()
			}
		case of == nil:
			if name := realOneof(uf); name != "" {
				c.enter(name)
				c.enter(tag)
				c.add(protoOneofFieldAdded)
				c.leave()
				c.leave()
			} else {
				c.enter(tag)
				if uf.Cardinality() == protoreflect.Required {
					c.add(protoRequiredFieldAdded)
				} else {
					c.add(protoFieldAdded)
				}
				c.leave()
			}
		default:
			if realOneof(of) != "" && realOneof(uf) == "" {
				c.enter(tag)
				c.add(protoOneofFieldMovedToTopLevel)
				c.leave()
			}
			depth := 1
			if name := realOneof(uf); name != "" {
				c.enter(name)
				depth++
			}
			c.enter(tag)
			c.compareFields(of, uf)
			for ; depth > 0; depth-- {
				c.leave()
			}
		}
	}
	c.compareTypes(o.Messages(), o.Enums(), u.Messages(), u.Enums())
}

// wireLabel is the label Confluent's parser gives a field: "" when none is
// written (proto3 singular fields, oneof members, map fields).
func wireLabel(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap():
		return ""
	case f.Cardinality() == protoreflect.Repeated:
		return "repeated"
	case f.Cardinality() == protoreflect.Required:
		return "required"
	case realOneof(f) != "":
		return ""
	case f.Syntax() == protoreflect.Proto3:
		if f.HasOptionalKeyword() {
			return "optional"
		}
		return ""
	}
	return "optional"
}

func (c *protoDiff) compareFields(o, u protoreflect.FieldDescriptor) {
	if o.Name() != u.Name() {
		c.add(protoFieldNameChanged)
	}
	c.compareLabelsAndTypes(wireLabel(o), wireLabel(u), o, u)
}

// protoKind groups field types as Confluent does: enums are scalars.
func protoKind(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap():
		return "MAP"
	case f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind:
		return "MESSAGE"
	}
	return "SCALAR"
}

// protoScalarKind groups scalars whose wire encodings read each other
// (protobuf's "updating a message type" rules).
func protoScalarKind(k protoreflect.Kind) string {
	switch k {
	case protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind,
		protoreflect.Uint64Kind, protoreflect.BoolKind:
		return "GENERAL_NUMBER"
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return "SIGNED_NUMBER"
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "STRING_OR_BYTES"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return "FIXED32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return "FIXED64"
	case protoreflect.FloatKind:
		return "FLOAT"
	case protoreflect.DoubleKind:
		return "DOUBLE"
	}
	return k.String()
}

func (c *protoDiff) compareLabelsAndTypes(oLabel, uLabel string, o, u protoreflect.FieldDescriptor) {
	ok, uk := protoKind(o), protoKind(u)
	if ok != uk {
		c.add(protoFieldKindChanged)
		return
	}
	switch ok {
	case "SCALAR":
		os, us := protoScalarKind(o.Kind()), protoScalarKind(u.Kind())
		if os != us {
			c.add(protoFieldScalarKindChanged)
			return
		}
		if oLabel != "" && uLabel != "" && oLabel != uLabel {
			if os == "STRING_OR_BYTES" {
				c.add(protoFieldStringOrBytesLabel)
			} else {
				c.add(protoFieldNumericLabelChanged)
			}
		}
	case "MESSAGE":
		c.compareMessageTypes(o.Message(), u.Message())
	case "MAP":
		c.compareLabelsAndTypes("", "", o.MapKey(), u.MapKey())
		c.compareLabelsAndTypes("", "", o.MapValue(), u.MapValue())
	}
}

// localName is a message's name within its package.
func localName(m protoreflect.MessageDescriptor) string {
	pkg := string(m.ParentFile().Package())
	name := string(m.FullName())
	if pkg != "" && strings.HasPrefix(name, pkg+".") {
		return name[len(pkg)+1:]
	}
	return name
}

// compareMessageTypes compares the message types of a field: another name
// is another type; the same name is compared field by field, and any
// incompatible difference inside also changes the field's type.
func (c *protoDiff) compareMessageTypes(o, u protoreflect.MessageDescriptor) {
	on, un := localName(o), localName(u)
	if on != un {
		c.add(protoFieldNamedTypeChanged)
		return
	}
	sub := &protoDiff{path: strings.Split(on, "."), comparing: c.comparing}
	sub.compareMessages(o, u)
	c.diffs = append(c.diffs, sub.diffs...)
	if !sub.compatible() {
		c.add(protoFieldNamedTypeChanged)
	}
}
