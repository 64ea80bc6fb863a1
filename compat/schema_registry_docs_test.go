package compat

import (
	"os"
	"strings"
	"testing"
)

// TestSchemaRegistryExamplesInDocs: docs/schema-registry.md shows each
// client's example as the test runs it: the lines between the file's
// markers ("example:NAME:start" and "example:NAME:end" in the language's
// comment), less their common indentation.
func TestSchemaRegistryExamplesInDocs(t *testing.T) {
	page, err := os.ReadFile("../docs/schema-registry.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []struct{ file, name, comment, fence string }{
		{"schema_registry_avro_test.go", "sr-go-avro", "//", "go"},
		{"matrix/clients/python/schema_registry.py", "sr-python", "#", "python"},
		{"matrix/clients/js/schema_registry.js", "sr-js", "//", "js"},
		{"matrix/clients/java-registry/src/main/java/fakekafka/registry/SchemaRegistry.java", "sr-java", "//", "java"},
	} {
		src, err := os.ReadFile(ex.file)
		if err != nil {
			t.Fatal(err)
		}
		example, ok := exampleLines(string(src), ex.comment+" example:"+ex.name)
		if !ok {
			t.Fatalf("%s has no %q ... %q markers", ex.file, ex.comment+" example:"+ex.name+":start", ex.comment+" example:"+ex.name+":end")
		}
		if !strings.Contains(string(page), "```"+ex.fence+"\n"+example+"\n```") {
			t.Errorf("docs/schema-registry.md does not show %s's example as it is:\n%s", ex.file, example)
		}
	}
}

// exampleLines is the text between the lines marker+":start" and
// marker+":end", less the indentation all its lines share, trimmed.
func exampleLines(src, marker string) (string, bool) {
	var lines []string
	in, done := false, false
	for _, l := range strings.Split(src, "\n") {
		switch strings.TrimSpace(l) {
		case marker + ":start":
			in = true
			continue
		case marker + ":end":
			if in {
				done = true
			}
			in = false
		}
		if in {
			lines = append(lines, l)
		}
	}
	if !done {
		return "", false
	}
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " \t")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		} else if strings.TrimSpace(l) == "" {
			lines[i] = ""
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n")), true
}
