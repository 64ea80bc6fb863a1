package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/fakekafka/fakekafka/chaos"
)

// chaosSummary is the part of GET /v1/chaos/report ctl prints.
type chaosSummary struct {
	Seed         uint64                  `json:"seed"`
	Running      bool                    `json:"running"`
	Actions      []json.RawMessage       `json:"actions"`
	FirstAnomaly string                  `json:"first_anomaly"`
	Partitions   []chaos.PartitionReport `json:"partitions"`
	Offsets      []chaos.OffsetRewind    `json:"offsets"`
	ShareDeliv   int                     `json:"share_deliveries"`
	ShareAcks    int                     `json:"share_acks"`
	Share        []chaos.ShareViolation  `json:"share"`
	Violations   []chaos.Violation       `json:"violations"`
}

// chaos runs "chaos start SPEC", "chaos stop" and "chaos report".
func (c *ctl) chaos(args []string) error {
	if len(args) == 0 {
		return usagef("chaos wants start, stop or report")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("chaos "+sub, flag.ContinueOnError)
	switch sub {
	case "start":
		pos, err := c.args(fs, args, 1, 1, "SPEC")
		if err != nil {
			return err
		}
		spec, err := loadChaosSpec(pos[0])
		if err != nil {
			return usagef("%v", err)
		}
		var started struct {
			Seed    uint64         `json:"seed"`
			Actions []chaos.Action `json:"actions"`
		}
		return c.show("POST", "/v1/chaos", spec, &started, func() {
			fmt.Fprintf(c.out, "chaos started: seed=%d, %d actions\n", started.Seed, len(started.Actions))
			for _, a := range started.Actions {
				fmt.Fprintln(c.out, a)
			}
		})
	case "stop", "report":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		method, path := "GET", "/v1/chaos/report"
		if sub == "stop" {
			method, path = "DELETE", "/v1/chaos"
		}
		var rep chaosSummary
		return c.show(method, path, nil, &rep, func() { c.printChaos(rep) })
	}
	return usagef("chaos wants start, stop or report, got %q", sub)
}

func (c *ctl) printChaos(rep chaosSummary) {
	state := "stopped"
	if rep.Running {
		state = "running"
	}
	fmt.Fprintf(c.out, "seed %d, %s, %d actions run, %d violations\n", rep.Seed, state, len(rep.Actions), len(rep.Violations))
	if rep.FirstAnomaly != "" {
		fmt.Fprintf(c.out, "first anomaly: %s\n", rep.FirstAnomaly)
	}
	tw := c.table("TOPIC", "PARTITION", "ACKED", "LOST", "LOST ALLOWED", "DUPLICATES", "READ THEN LOST", "ABOVE HW", "ABORTED VISIBLE")
	for _, p := range rep.Partitions {
		lost, allowed := int64(0), int64(0)
		for _, l := range p.Lost {
			lost += l.To - l.From
			if l.Allowed {
				allowed += l.To - l.From
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", p.Topic, p.Partition, p.AckedRecords, lost, allowed,
			len(p.Duplicates), len(p.ReadThenLost), len(p.ServedAboveHW), len(p.AbortedVisible))
	}
	tw.Flush()
	if rep.ShareDeliv > 0 || len(rep.Share) > 0 {
		fmt.Fprintf(c.out, "share groups: %d deliveries, %d acknowledgements, %d findings\n", rep.ShareDeliv, rep.ShareAcks, len(rep.Share))
		for _, s := range rep.Share {
			allowed := ""
			if s.Allowed {
				allowed = " (allowed: " + s.Why + ")"
			}
			fmt.Fprintf(c.out, "share %s: group %s %s/%d offset %d: %s%s\n", s.Rule, s.Group, s.TP.Topic, s.TP.Partition, s.Offset, s.Detail, allowed)
		}
	}
	for _, v := range rep.Violations {
		fmt.Fprintf(c.out, "VIOLATION %s\n", v)
	}
}
