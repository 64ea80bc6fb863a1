package main

import (
	"strings"
	"testing"
)

func TestCtlUsers(t *testing.T) {
	c, ctl := ctlEnv(t)
	if out := mustCtl(t, ctl, "users"); strings.TrimSpace(out) != "USER  PLAIN  SCRAM" {
		t.Fatalf("no users: %q", out)
	}
	out := mustCtl(t, ctl, "user", "add", "alice", "pw")
	if !strings.Contains(out, "alice  true   SCRAM-SHA-256 (4096 iterations), SCRAM-SHA-512 (4096 iterations)") {
		t.Fatalf("after add: %q", out)
	}
	if us := c.SASLUsers(); len(us) != 1 || us[0].Name != "alice" {
		t.Fatalf("cluster users %+v", us)
	}
	mustCtl(t, ctl, "user", "rm", "alice")
	if len(c.SASLUsers()) != 0 {
		t.Fatal("alice was not removed")
	}
	if code, _, errs := ctl("user", "rm", "alice"); code != 1 || !strings.Contains(errs, "unknown SASL user") {
		t.Fatalf("rm unknown: exit %d %q", code, errs)
	}
	if code, _, _ := ctl("user", "add", "bob"); code != 2 {
		t.Fatalf("add without a password: exit %d, want 2", code)
	}
}
