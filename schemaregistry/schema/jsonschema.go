package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonParses numbers the parses: each compiles its schema at its own URL,
// mem:///<n>/<schema>.json, so the locations of two versions' subschemas
// differ. A relative $ref without an $id resolves to mem:///<n>/<name>.
var jsonParses atomic.Uint64

const jsonSchemaFile = "%3Cschema%3E.json"

// jsonSchema is a JSON Schema compiled with its references.
type jsonSchema struct {
	root *jsonschema.Schema
	docs map[string]any // decoded documents by URL: the schema's and its references'

	canonical  string
	normalized string
}

func parseJSON(text string, deps map[string]string) (Parsed, error) {
	canonical, err := compactJSON(text, false)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON schema: %v", err)
	}
	normalized, _ := compactJSON(text, true)
	dir := "mem:///" + strconv.FormatUint(jsonParses.Add(1), 10) + "/"
	jsonSchemaURL := dir + jsonSchemaFile
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("invalid JSON schema: %v", err)
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, errors.New("invalid JSON schema: a schema is a JSON object or a boolean")
	}
	c := jsonschema.NewCompiler()
	// Confluent's default when a schema names no $schema.
	c.DefaultDraft(jsonschema.Draft7)
	docs := map[string]any{jsonSchemaURL: doc}
	c.UseLoader(&jsonRefLoader{dir: dir, deps: deps, loaded: docs})
	c.UseRegexpEngine(lenientRegexp)
	if err := c.AddResource(jsonSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("invalid JSON schema: %v", err)
	}
	root, err := c.Compile(jsonSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON schema: %s", jsonErrorText(err, dir))
	}
	return &jsonSchema{root: root, docs: docs, canonical: canonical, normalized: normalized}, nil
}

func jsonErrorText(err error, dir string) string {
	msg := strings.ReplaceAll(err.Error(), dir+jsonSchemaFile, "schema")
	msg = strings.ReplaceAll(msg, dir, "")
	return strings.ReplaceAll(msg, "\n", "; ")
}

func (s *jsonSchema) Type() Type         { return JSON }
func (s *jsonSchema) Canonical() string  { return s.canonical }
func (s *jsonSchema) Normalized() string { return s.normalized }

// Backward lists Confluent's incompatible differences from older to s
// (its STRICT policy, the registry's default).
func (s *jsonSchema) Backward(older Parsed) []string {
	o, ok := older.(*jsonSchema)
	if !ok {
		return []string{differentSchemaType}
	}
	var msgs []string
	for _, d := range jsonCompare(o, s) {
		if !jsonCompatibleChanges[d.kind] {
			msgs = append(msgs, d.String())
		}
	}
	return msgs
}

// jsonRefLoader finds a $ref'd document among the references: by the whole
// URL, or by a reference name the URL ends with (a name is usually the
// file name the schema's $ref uses, resolved against the schema's $id).
// Nothing is fetched from the network.
type jsonRefLoader struct {
	dir    string
	deps   map[string]string
	loaded map[string]any
}

func (l *jsonRefLoader) Load(u string) (any, error) {
	name := ""
	if _, ok := l.deps[u]; ok {
		name = u
	} else {
		path := strings.TrimPrefix(u, l.dir)
		if p, err := url.PathUnescape(path); err == nil {
			path = p
		}
		if _, ok := l.deps[path]; ok {
			name = path
		} else {
			// The longest name the URL ends with, so "a/b.json" beats "b.json".
			for n := range l.deps {
				if (strings.HasSuffix(u, "/"+n) || u == n) && len(n) > len(name) {
					name = n
				}
			}
		}
	}
	if name == "" {
		return nil, fmt.Errorf("no schema reference named %q", strings.TrimPrefix(u, l.dir))
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(l.deps[name]))
	if err != nil {
		return nil, fmt.Errorf("schema reference %q: %v", name, err)
	}
	l.loaded[u] = doc
	return doc, nil
}

// rawAt is the decoded JSON at a schema location "url#/json/pointer".
func (s *jsonSchema) rawAt(location string) (any, bool) {
	u, frag, _ := strings.Cut(location, "#")
	doc, ok := s.docs[u]
	if !ok {
		return nil, false
	}
	if frag == "" {
		return doc, true
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch d := doc.(type) {
		case map[string]any:
			if doc, ok = d[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(d) {
				return nil, false
			}
			doc = d[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// lenientRegexp compiles a pattern with Go's engine; one Go cannot compile
// (ECMA-262 lookarounds, backreferences) is kept as text and matches
// nothing, since the registry never validates data with it.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	if re, err := regexp.Compile(s); err == nil {
		return re, nil
	}
	return textRegexp(s), nil
}

type textRegexp string

func (r textRegexp) String() string          { return string(r) }
func (r textRegexp) MatchString(string) bool { return false }

// compactJSON re-serialises a JSON text without insignificant whitespace,
// keeping member order (Confluent's canonical form, Jackson's compact
// output) or sorting members by name (its normalised form). Numbers keep
// their literal text.
func compactJSON(text string, sortKeys bool) (string, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", errors.New("unexpected data after the schema")
	}
	// Decode again keeping member order.
	dec = json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	node, err := readOrdered(dec)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	writeOrdered(&b, node, sortKeys)
	return b.String(), nil
}

// orderedObject is a JSON object with its members in document order; a
// repeated name keeps its first position and last value, as Jackson does.
type orderedObject struct {
	keys   []string
	values map[string]any
}

func readOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := &orderedObject{values: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := readOrdered(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := obj.values[k]; !dup {
					obj.keys = append(obj.keys, k)
				}
				obj.values[k] = v
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := readOrdered(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
	}
	return tok, nil
}

func writeOrdered(b *bytes.Buffer, v any, sortKeys bool) {
	switch v := v.(type) {
	case *orderedObject:
		keys := v.keys
		if sortKeys {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			writeOrdered(b, v.values[k], sortKeys)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeOrdered(b, e, sortKeys)
		}
		b.WriteByte(']')
	case string:
		writeJSONString(b, v)
	case json.Number:
		b.WriteString(string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
}

// writeJSONString escapes as Jackson does: quotes, backslashes and
// control characters only.
func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
