package schemaregistry

import (
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/fakekafka/fakekafka/schemaregistry/schema"
)

// parseCache keeps parsed schemas by their type, text and the texts of
// their references: every producer's serialiser registers or looks up
// the same schemas, and each registration compares with the subject's
// versions, so the same texts are parsed again and again.
type parseCache struct {
	mu sync.Mutex
	m  map[string]schema.Parsed
}

// parseCacheSize bounds the cache; when full it starts again.
const parseCacheSize = 4096

func parseKey(t schema.Type, text string, deps map[string]string) string {
	var b strings.Builder
	b.WriteString(string(t))
	b.WriteByte(0)
	b.WriteString(text)
	names := make([]string, 0, len(deps))
	for n := range deps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteByte(0)
		b.WriteString(n)
		b.WriteByte(1)
		b.WriteString(deps[n])
	}
	return b.String()
}

// parse is schema.Parse through the cache (errors are not kept).
func (c *parseCache) parse(t schema.Type, text string, deps map[string]string) (schema.Parsed, error) {
	key := parseKey(t, text, deps)
	c.mu.Lock()
	p, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := schema.Parse(t, text, deps)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= parseCacheSize {
		c.m = map[string]schema.Parsed{}
	}
	c.m[key] = p
	c.mu.Unlock()
	return p, nil
}

// parseVersion parses a stored version with its references.
func (r *Registry) parseVersion(st *State, v SubjectVersion) (schema.Parsed, error) {
	deps, _, err := st.resolveReferences(v.References)
	if err != nil {
		return nil, err
	}
	return r.parsed.parse(typeOrAvro(v.SchemaType), v.Schema, deps)
}

// formatter is what a schema type may offer for ?format= (Confluent's
// ParsedSchema.formattedString): Avro's "resolved", Protobuf's
// "serialized" and the like.
type formatter interface {
	Formatted(format string) (string, bool)
}

// formatted is the version's schema text as ?format= asks; a format its
// type does not know is ignored, as Confluent ignores it.
func (r *Registry) formatted(req *http.Request, st *State, v SubjectVersion) string {
	format := req.URL.Query().Get("format")
	if format == "" {
		return v.Schema
	}
	p, err := r.parseVersion(st, v)
	if err != nil {
		return v.Schema
	}
	if f, ok := p.(formatter); ok {
		if text, ok := f.Formatted(format); ok {
			return text
		}
	}
	return v.Schema
}
