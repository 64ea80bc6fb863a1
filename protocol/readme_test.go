package protocol

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the API table in ../docs/compatibility.md from Supported")

// docPath is the page with the table (it was in the README).
const docPath = "../docs/compatibility.md"

const (
	tableStart = "<!-- api-table:start (generated from protocol.Supported by: go test ./protocol -run TestReadmeAPITable -update-readme) -->"
	tableEnd   = "<!-- api-table:end -->"
)

// apiTable renders Supported as the table of docs/compatibility.md.
func apiTable() string {
	var b strings.Builder
	b.WriteString("| key | API | versions |\n|---:|---|---|\n")
	for _, r := range Supported {
		fmt.Fprintf(&b, "| %d | %s | %d–%d |\n", r.Key, r.Name(), r.Min, r.Max)
	}
	return b.String()
}

// TestReadmeAPITable fails when docs/compatibility.md's table of supported APIs does
// not match the protocol table.
func TestReadmeAPITable(t *testing.T) {
	readme, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i, j := strings.Index(s, tableStart), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/compatibility.md lacks the markers %q and %q", tableStart, tableEnd)
	}
	want := s[:i+len(tableStart)] + "\n" + apiTable() + s[j:]
	if want == s {
		return
	}
	if *updateReadme {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("docs/compatibility.md's API table is stale: run go test ./protocol -run TestReadmeAPITable -update-readme")
}
