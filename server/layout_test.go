package server

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's dependency direction (docs/layout.md): the packages
// below server never import it (nor control), server never imports
// control, the coordinator runtime imports no coordinator and the
// coordinators not each other, and api uses only the standard library. A package that does not exist yet (coordinator/,
// group/, storage/) is checked as soon as it does.

const modulePath = "github.com/fakekafka/fakekafka"

// belowServer are the packages (with those under them) that server uses and
// that must not use server back.
var belowServer = []string{"api", "configs", "fetchsession", "coordinator", "group", "transaction", "share", "storage", "certs", "principal", "internal", "replication", "protocol", "schemaregistry"}

// apart are packages that must not import each other's named packages:
// the runtime knows no coordinator, and the coordinators know each other
// only through the runtime.
var apart = map[string][]string{
	"coordinator": {"group", "transaction", "share"},
	"group":       {"transaction"},
	"transaction": {"group", "share"},
	"share":       {"group", "transaction"},
	// The registry knows nothing of brokers: its Store is server's.
	"schemaregistry": {"coordinator", "replication", "group", "transaction", "share", "storage", "protocol"},
	// schema parsing knows nothing of the registry that stores schemas
	"schemaregistry/schema": {"schemaregistry"},
}

type listedPackage struct {
	ImportPath string
	Deps       []string
	Error      *struct{ Err string }
}

func TestLayoutImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list packages with")
	}
	// Every package of the core module and of the api module (required by
	// the core, so listed through it with or without the workspace).
	cmd := exec.Command("go", "list", "-e", "-json", "./...", modulePath+"/api/...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var pkgs []listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.ImportPath] = true
		for _, v := range layoutViolations(p.ImportPath, p.Deps) {
			t.Error(v)
		}
	}
	for _, must := range []string{modulePath + "/server", modulePath + "/api", modulePath + "/control"} {
		if !seen[must] {
			t.Errorf("go list did not report %s: the check looked at the wrong packages", must)
		}
	}
}

// layoutViolations says which of the layout's rules package path breaks,
// given every package it imports directly or not.
func layoutViolations(path string, deps []string) []string {
	var out []string
	rel, ok := strings.CutPrefix(path, modulePath+"/")
	if !ok {
		return nil
	}
	under := func(dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
	for _, d := range deps {
		drel, ours := strings.CutPrefix(d, modulePath+"/")
		switch {
		case under("api") && !isStandard(d) && !(ours && (drel == "api" || strings.HasPrefix(drel, "api/"))):
			out = append(out, path+" imports "+d+": api uses only the standard library")
		case !ours:
		case drel == "server" || strings.HasPrefix(drel, "server/"):
			for _, dir := range belowServer {
				if under(dir) {
					out = append(out, path+" imports "+d+": nothing under "+dir+"/ may import server")
				}
			}
		case drel == "control" || strings.HasPrefix(drel, "control/"):
			if under("server") {
				out = append(out, path+" imports "+d+": server must not import control")
			}
			for _, dir := range belowServer {
				if under(dir) {
					out = append(out, path+" imports "+d+": nothing under "+dir+"/ may import control")
				}
			}
		default:
			for dir, banned := range apart {
				for _, b := range banned {
					if under(dir) && (drel == b || strings.HasPrefix(drel, b+"/")) {
						out = append(out, path+" imports "+d+": "+dir+"/ must not import "+b)
					}
				}
			}
		}
	}
	return out
}

// isStandard tells standard-library import paths by their first element,
// which has no dot.
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestLayoutViolationsCatchBreaks(t *testing.T) {
	for _, c := range []struct {
		path string
		deps []string
		bad  bool
	}{
		{modulePath + "/api", []string{"encoding/json", "time"}, false},
		{modulePath + "/api", []string{"github.com/twmb/franz-go/pkg/kmsg"}, true},
		{modulePath + "/api", []string{modulePath + "/transaction"}, true},
		{modulePath + "/group", []string{modulePath + "/coordinator", modulePath + "/api"}, false},
		{modulePath + "/group", []string{modulePath + "/server"}, true},
		{modulePath + "/group", []string{modulePath + "/transaction"}, true},
		{modulePath + "/coordinator", []string{modulePath + "/group"}, true},
		{modulePath + "/coordinator", []string{modulePath + "/replication", modulePath + "/clock"}, false},
		{modulePath + "/transaction", []string{modulePath + "/group"}, true},
		{modulePath + "/transaction", []string{modulePath + "/coordinator"}, false},
		{modulePath + "/group", []string{modulePath + "/control"}, true},
		{modulePath + "/storage/segments", []string{modulePath + "/server"}, true},
		{modulePath + "/transaction", []string{modulePath + "/server"}, true},
		{modulePath + "/server", []string{modulePath + "/control"}, true},
		{modulePath + "/server", []string{modulePath + "/api", modulePath + "/group"}, false},
		{modulePath + "/control", []string{modulePath + "/server"}, false},
		{modulePath + "/cmd/fakekafka", []string{modulePath + "/server", modulePath + "/control"}, false},
		{modulePath + "/schemaregistry", []string{modulePath + "/schemaregistry/schema", "github.com/hamba/avro/v2"}, false},
		{modulePath + "/schemaregistry", []string{modulePath + "/server"}, true},
		{modulePath + "/schemaregistry", []string{modulePath + "/control"}, true},
		{modulePath + "/schemaregistry", []string{modulePath + "/coordinator"}, true},
		{modulePath + "/schemaregistry/schema", []string{modulePath + "/server"}, true},
		{modulePath + "/schemaregistry/schema", []string{modulePath + "/control"}, true},
		{modulePath + "/schemaregistry/schema", []string{modulePath + "/schemaregistry"}, true},
		{modulePath + "/server", []string{modulePath + "/schemaregistry"}, false},
	} {
		if got := layoutViolations(c.path, c.deps); (len(got) > 0) != c.bad {
			t.Errorf("%s with %v: violations %q, want some: %v", c.path, c.deps, got, c.bad)
		}
	}
}

// The testcontainers module depends on api, never on the core module.
func TestLayoutTestcontainersNeedsOnlyAPI(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testcontainers", "go.mod"))
	if err != nil {
		t.Skip("no testcontainers module here:", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == modulePath {
			t.Errorf("testcontainers/go.mod requires %s: it must need only %s/api", modulePath, modulePath)
		}
	}
}
