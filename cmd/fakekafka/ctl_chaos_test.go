package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fakekafka/fakekafka/chaos"
)

// ctl chaos report prints the share-group counts and findings of the
// report's JSON.
func TestCtlChaosPrintsShareFindings(t *testing.T) {
	rep := chaos.Report{Share: []chaos.ShareViolation{
		{Rule: "accepted_redelivered", Group: "sg", TP: chaos.TP{Topic: "q", Partition: 0}, Offset: 0, Detail: "delivered again (count 2 to m) after it was acknowledged"},
		{Rule: "lock_not_released", Group: "sg", TP: chaos.TP{Topic: "q", Partition: 1}, Offset: 4, Detail: "held by m", Allowed: true, Why: "after a power loss"},
	}}
	body, err := json.Marshal(struct {
		Seed       uint64            `json:"seed"`
		Deliveries int               `json:"share_deliveries"`
		Acks       int               `json:"share_acks"`
		Violations []chaos.Violation `json:"violations"`
		chaos.Report
	}{7, 8, 6, rep.Violations(), rep})
	if err != nil {
		t.Fatal(err)
	}
	var sum chaosSummary
	if err := json.Unmarshal(body, &sum); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	(&ctl{out: &out}).printChaos(sum)
	for _, want := range []string{
		"seed 7, stopped, 0 actions run, 1 violations\n",
		"share groups: 8 deliveries, 6 acknowledgements, 2 findings\n",
		"share accepted_redelivered: group sg q/0 offset 0: delivered again (count 2 to m) after it was acknowledged\n",
		"share lock_not_released: group sg q/1 offset 4: held by m (allowed: after a power loss)\n",
		"VIOLATION accepted_redelivered: group sg q/0: offset 0: delivered again",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
