package schemaregistry

import (
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
