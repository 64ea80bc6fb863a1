package coordinator

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDirection keeps the coordinator packages' imports one way:
// the runtime knows no coordinator, and no coordinator knows the server.
func TestDependencyDirection(t *testing.T) {
	const mod = "github.com/fakekafka/fakekafka/"
	for pkg, banned := range map[string][]string{
		"coordinator": {"server", "group", "transaction", "control"},
		"group":       {"server", "transaction", "control"},
		"transaction": {"server", "group", "control"},
	} {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Skipf("go list: %v", err) // no go tool: nothing to check with
		}
		deps := strings.Fields(string(out))
		for _, b := range banned {
			for _, d := range deps {
				if d == mod+b || strings.HasPrefix(d, mod+b+"/") {
					t.Errorf("%s imports %s", pkg, d)
				}
			}
		}
	}
}
