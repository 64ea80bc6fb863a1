package server_test

import (
	"os"
	"strings"
	"testing"
)

// requireExampleInDocs fails t unless doc shows the code between
// "// example:NAME:start" and "// example:NAME:end" of file as a Go code
// block, as it is: a page's example is the test that runs it.
func requireExampleInDocs(t *testing.T, file, name, doc string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	startMark, endMark := "// example:"+name+":start\n", "// example:"+name+":end"
	start, end := strings.Index(s, startMark), strings.Index(s, endMark)
	if start < 0 || end < start {
		t.Fatalf("%s has no %q ... %q markers", file, startMark, endMark)
	}
	example := strings.TrimSpace(s[start+len(startMark) : end])
	if !strings.Contains(string(page), "```go\n"+example+"\n```") {
		t.Errorf("%s does not show %s's example as it is:\n%s", doc, file, example)
	}
}
