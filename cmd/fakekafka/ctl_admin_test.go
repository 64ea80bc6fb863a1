package main

import (
	"strings"
	"testing"
)

func TestCtlReassign(t *testing.T) {
	c, ctl := ctlEnv(t)
	out := mustCtl(t, ctl, "reassign", "t", "0", "1,2")
	if !strings.Contains(out, "1:leader") || strings.Contains(out, "3:") {
		t.Fatalf("shrink to [1 2]:\n%s", out)
	}
	mustCtl(t, ctl, "pause", "t", "0", "3") // ahead of the replica
	out = mustCtl(t, ctl, "reassign", "t", "0", "1", "2", "3")
	if !strings.Contains(out, "paused out-of-sync adding") {
		t.Fatalf("pending reassignment:\n%s", out)
	}
	out = mustCtl(t, ctl, "reassignments")
	if !strings.Contains(out, "REMOVING") || !strings.Contains(out, "t      0          1,2,3     3") {
		t.Fatalf("reassignments:\n%s", out)
	}
	out = mustCtl(t, ctl, "reassign", "t", "0", "--cancel")
	if strings.Contains(out, "3:") {
		t.Fatalf("cancelled:\n%s", out)
	}
	if ps, _ := c.Partition("t", 0); len(ps.Replicas) != 2 {
		t.Fatalf("replicas after cancel: %+v", ps.Replicas)
	}
	out = mustCtl(t, ctl, "create-partitions", "t", "3", "3,1", "2,3")
	if !strings.Contains(out, "t      2          2       0      2,3") {
		t.Fatalf("create-partitions:\n%s", out)
	}
	if ps, _ := c.Partition("t", 1); len(ps.Replicas) != 2 || ps.Replicas[0].Broker != 3 {
		t.Fatalf("partition 1: %+v", ps)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"reassign", "t", "0"}, 2, "target brokers, or --cancel"},
		{[]string{"reassign", "t", "0", "1", "--cancel"}, 2, "--cancel takes no brokers"},
		{[]string{"reassign", "t", "0", "x"}, 2, `broker id "x"`},
		{[]string{"reassign", "t", "0", "--cancel"}, 1, "NO_REASSIGNMENT_IN_PROGRESS"},
		{[]string{"reassign", "t", "0", "9"}, 1, "unknown broker 9 (HTTP 404)"},
		{[]string{"create-partitions", "t", "2"}, 1, "INVALID_PARTITIONS"},
		{[]string{"create-partitions", "t", "x"}, 2, "not a number"},
		{[]string{"create-partitions", "nope", "4"}, 1, "unknown topic"},
	} {
		code, _, errs := ctl(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("ctl %v: exit %d %q, want %d mentioning %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}
