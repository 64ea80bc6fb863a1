package main

import (
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/server"
)

// ctl schemas fault: add prints the rule (status from the error code),
// list shows its hits, rm and clear remove; bad flags are usage errors and
// refusals the API's message.
func TestCtlSchemaFaults(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1, SchemaRegistry: &server.SchemaRegistryConfig{}})
	ctl := ctlFor(t, c)
	out := mustCtl(t, ctl, "schemas", "fault", "add", "--method", "POST", "--path", "/subjects/*/versions", "--error-code", "50001", "--count", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "ID METHOD PATH STATUS ERROR_CODE COUNT DELAY HITS REMAINING" {
		t.Fatalf("fault add:\n%s", out)
	}
	row := strings.Fields(lines[1])
	id := row[0]
	if got := strings.Join(row[1:], " "); got != "POST /subjects/*/versions 500 50001 2 0ms 0 2" {
		t.Errorf("fault add row %q", got)
	}
	mustCtl(t, ctl, "schemas", "fault", "add", "--path", "/schemas/ids/*", "--delay", "1500ms")
	out = mustCtl(t, ctl, "schemas", "faults")
	if !strings.Contains(out, "/schemas/ids/*") || !strings.Contains(out, "1500ms") || !strings.Contains(out, "unlimited") {
		t.Errorf("faults:\n%s", out)
	}
	if out := mustCtl(t, ctl, "schemas", "fault", "rm", id); !strings.Contains(out, "/subjects/*/versions") {
		t.Errorf("fault rm:\n%s", out)
	}
	if code, _, errs := ctl("schemas", "fault", "rm", id); code != 1 || !strings.Contains(errs, "unknown schema registry fault") {
		t.Errorf("rm twice: exit %d, %q", code, errs)
	}
	if out := mustCtl(t, ctl, "schemas", "fault", "clear"); !strings.Contains(out, "/schemas/ids/*") {
		t.Errorf("fault clear:\n%s", out)
	}
	if n := len(c.SchemaRegistryFaults()); n != 0 {
		t.Errorf("%d rules left", n)
	}
	if code, _, errs := ctl("schemas", "fault", "add", "--status", "200"); code != 1 || !strings.Contains(errs, "not an HTTP error status") {
		t.Errorf("status 200: exit %d, %q", code, errs)
	}
	if code, _, errs := ctl("schemas", "fault", "add", "--count", "x"); code != 2 || !strings.Contains(errs, "count") {
		t.Errorf("bad --count: exit %d, %q", code, errs)
	}
	if code, _, errs := ctl("schemas", "frobnicate"); code != 2 || !strings.Contains(errs, "unknown schemas verb") {
		t.Errorf("unknown verb: exit %d, %q", code, errs)
	}
}

// ctl schemas on a cluster without a registry says so (exit 1).
func TestCtlSchemasWhenOff(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 1})
	ctl := ctlFor(t, c)
	if code, _, errs := ctl("schemas"); code != 1 || !strings.Contains(errs, "schema registry is off") {
		t.Errorf("exit %d, %q", code, errs)
	}
}
