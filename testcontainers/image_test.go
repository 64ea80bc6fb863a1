package fakekafka

import (
	"context"
	"strings"
	"testing"
)

func TestImageVersions(t *testing.T) {
	for v, want := range map[string]string{
		"v1.2.0":                                    "v1.2.0",
		"v1.2.0-rc.1":                               "v1.2.0-rc.1",
		"v0.0.0-20261203175201-9a4133a1b2c3":        "9a4133a1b2c3",
		"v1.2.1-0.20261203175201-9a4133a1b2c3":      "9a4133a1b2c3",
		"v1.2.1-rc.1.0.20261203175201-9a4133a1b2c3": "9a4133a1b2c3",
	} {
		if got := moduleQuery(v); got != want {
			t.Errorf("moduleQuery(%q) = %q, want %q", v, got, want)
		}
	}
	if got := imageTag("v2.0.0+incompatible"); got != "v2.0.0_incompatible" {
		t.Errorf("imageTag = %q", got)
	}
	if got := imageTag("v" + strings.Repeat("1", 200)); len(got) != 128 {
		t.Errorf("imageTag is %d characters long", len(got))
	}
}

// In its own tests the module has no version: Run with no image says so
// before it touches Docker.
func TestModuleVersionInOwnTests(t *testing.T) {
	if v, err := ModuleVersion(); err == nil {
		t.Fatalf("ModuleVersion() = %q in the module's own tests", v)
	}
	if _, err := Image(context.Background(), "", nil); err == nil || !strings.Contains(err.Error(), "give Run an image") {
		t.Fatalf("Image with no version: %v", err)
	}
	if _, err := Image(context.Background(), "latest", nil); err == nil {
		t.Fatal("Image(latest): no error")
	}
}
