package compat

import (
	"os"
	"strings"
	"testing"
)

// TestSchemaRegistryExamplesInDocs: docs/schema-registry.md shows each
// client's example as the test runs it, between the file's markers
// ("example:NAME:start" and "example:NAME:end" in the language's comment).
func TestSchemaRegistryExamplesInDocs(t *testing.T) {
	page, err := os.ReadFile("../docs/schema-registry.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []struct{ file, name, comment, fence string }{
		{"schema_registry_avro_test.go", "sr-go-avro", "//", "go"},
		{"matrix/clients/python/schema_registry.py", "sr-python", "#", "python"},
		{"matrix/clients/js/schema_registry.js", "sr-js", "//", "js"},
	} {
		src, err := os.ReadFile(ex.file)
		if err != nil {
			t.Fatal(err)
		}
		s := string(src)
		startMark, endMark := ex.comment+" example:"+ex.name+":start\n", ex.comment+" example:"+ex.name+":end"
		start, end := strings.Index(s, startMark), strings.Index(s, endMark)
		if start < 0 || end < start {
			t.Fatalf("%s has no %q ... %q markers", ex.file, startMark, endMark)
		}
		example := strings.TrimSpace(s[start+len(startMark) : end])
		if !strings.Contains(string(page), "```"+ex.fence+"\n"+example+"\n```") {
			t.Errorf("docs/schema-registry.md does not show %s's example as it is:\n%s", ex.file, example)
		}
	}
}
