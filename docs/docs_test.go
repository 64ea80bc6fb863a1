// Package docs holds the pages that the README links to, and this test of
// them: every relative link and #anchor in README.md and docs/*.md resolves,
// and every Go block a page quotes from a test file equals that code.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// pages are the Markdown files checked, relative to the repository root.
func pages(t *testing.T) []string {
	t.Helper()
	ps, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range ps {
		out = append(out, filepath.Join("docs", p))
	}
	return out
}

// read reads a file named relative to the repository root.
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// slug is GitHub's anchor for a heading: lower case, formatting and
// punctuation dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var heading = regexp.MustCompile(`^#{1,6} (.+)$`)

// prose returns the page's lines with those of fenced code blocks (and
// the fences) emptied, so that line i+1 of the page is element i.
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			lines[i] = ""
			continue
		}
		if fence {
			lines[i] = ""
		}
	}
	return lines
}

// anchors returns the anchors of a page's headings; a repeated heading
// gets -1, -2, ... as on GitHub.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range prose(text) {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

var (
	codeSpan = regexp.MustCompile("`[^`]*`")
	link     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Retention, compaction and the data dir": "retention-compaction-and-the-data-dir",
		"Go (`package server`)":                  "go-package-server",
		"`fakekafka ctl`":                        "fakekafka-ctl",
		"Side by side: kfake, librdkafka's mock cluster, a null broker": "side-by-side-kfake-librdkafkas-mock-cluster-a-null-broker",
		"The acks=all produce path (session 4)":                         "the-acksall-produce-path-session-4",
		"Cookbook: the classic failure scenarios":                       "cookbook-the-classic-failure-scenarios",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLinks: every relative link in README.md and docs/*.md names a file
// or directory that exists, and every #anchor a heading of its page.
func TestLinks(t *testing.T) {
	texts := map[string]string{}
	for _, p := range pages(t) {
		texts[p] = read(t, p)
	}
	anchorsOf := map[string]map[string]bool{}
	for p, text := range texts {
		anchorsOf[p] = anchors(text)
	}
	for _, p := range pages(t) {
		for i, l := range prose(texts[p]) {
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := p
				if file != "" {
					dest = filepath.Join(filepath.Dir(p), file)
					if _, err := os.Stat(filepath.Join("..", dest)); err != nil {
						t.Errorf("%s:%d: link %s: %v", p, i+1, target, err)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				as, ok := anchorsOf[dest]
				if !ok {
					if !strings.HasSuffix(dest, ".md") {
						t.Errorf("%s:%d: link %s: an anchor in a file that is not Markdown", p, i+1, target)
						continue
					}
					as = anchors(read(t, dest))
					anchorsOf[dest] = as
				}
				if !as[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading with anchor #%s", p, i+1, target, dest, anchor)
				}
			}
		}
	}
}

// quote marks a Go block that is a copy of code in a test file: the whole
// file, or with #Name the declaration of Name with its doc comment.
var quote = regexp.MustCompile(`^<!-- quote: (\S+) -->$`)

// TestQuotedCode: a Go block after <!-- quote: FILE --> or
// <!-- quote: FILE#Func --> is that file (the package clause may be left
// out) or function, byte for byte, so the
// pages cannot drift from code the test suite runs. The README must quote
// its main example.
func TestQuotedCode(t *testing.T) {
	quoted := map[string]bool{}
	for _, p := range pages(t) {
		lines := strings.Split(read(t, p), "\n")
		for i, l := range lines {
			m := quote.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			quoted[p+" "+m[1]] = true
			if i+1 >= len(lines) || lines[i+1] != "```go" {
				t.Errorf("%s:%d: %s is not followed by a ```go block", p, i+1, l)
				continue
			}
			end := i + 2
			for end < len(lines) && lines[end] != "```" {
				end++
			}
			got := strings.Join(lines[i+2:end], "\n")
			want, err := source(m[1])
			if err != nil {
				t.Errorf("%s:%d: %v", p, i+1, err)
				continue
			}
			if !strings.HasPrefix(got, "package ") {
				// A page may leave out the package clause.
				if _, rest, ok := strings.Cut(want, "\n"); ok && strings.HasPrefix(want, "package ") {
					want = strings.TrimLeft(rest, "\n")
				}
			}
			if got != want {
				t.Errorf("%s:%d: the block differs from %s; copy it again. It is:\n%s", p, i+1, m[1], want)
			}
		}
	}
	if !quoted["README.md server/example_readme_test.go"] {
		t.Error("README.md no longer quotes server/example_readme_test.go")
	}
}

// source returns what a quote names: a file without its final newline, or
// one declaration with its doc comment.
func source(name string) (string, error) {
	file, decl, _ := strings.Cut(name, "#")
	b, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		return "", err
	}
	if decl == "" {
		return strings.TrimSuffix(string(b), "\n"), nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, b, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != decl {
			continue
		}
		start := fd.Pos()
		if fd.Doc != nil {
			start = fd.Doc.Pos()
		}
		return string(b[fset.Position(start).Offset:fset.Position(fd.End()).Offset]), nil
	}
	return "", os.ErrNotExist
}
