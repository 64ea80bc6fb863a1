package control

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDashboardScriptsParse checks every dashboard script with node's
// parser, so a broken script fails here in seconds rather than only in the
// browser tests of compat/dashboard (a merge once left app.js one
// parenthesis short). Skipped where node is not installed.
func TestDashboardScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	files, err := filepath.Glob(filepath.Join("dashboard", "*.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboard scripts: %v", err)
	}
	for _, f := range files {
		if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
}
