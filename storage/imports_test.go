package storage

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// storage is below server in the layout: it may use protocol and
// replication, never server or anything that imports it.
func TestImportsStayBelowServer(t *testing.T) {
	names, _ := filepath.Glob("*.go")
	allowed := map[string]bool{
		"github.com/fakekafka/fakekafka/protocol":    true,
		"github.com/fakekafka/fakekafka/replication": true,
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/fakekafka/") && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
