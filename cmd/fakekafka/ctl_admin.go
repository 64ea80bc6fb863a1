package main

// fakekafka ctl verbs for partition reassignment.

import (
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/api"
)

// adminVerb runs verb if it is one of this file's; handled is false
// otherwise.
func (c *ctl) adminVerb(verb string, fs *flag.FlagSet, args []string) (handled bool, err error) {
	switch verb {
	case "reassign":
		cancel := fs.Bool("cancel", false, "")
		pos, err := c.args(fs, args, 2, -1, "TOPIC PARTITION BROKER... (or --cancel)")
		if err != nil {
			return true, err
		}
		body := map[string]any{"replicas": nil}
		switch {
		case *cancel && len(pos) > 2:
			return true, usagef("--cancel takes no brokers")
		case !*cancel && len(pos) == 2:
			return true, usagef("reassign wants the target brokers, or --cancel")
		case !*cancel:
			replicas, err := brokerIDList(pos[2:])
			if err != nil {
				return true, err
			}
			body["replicas"] = replicas
		}
		return true, c.partitionAction(pos[0], pos[1], "/reassign", body)
	case "create-partitions":
		pos, err := c.args(fs, args, 2, -1, "TOPIC COUNT [REPLICAS...] (COUNT: the new total; REPLICAS: 1,2,3 per new partition)")
		if err != nil {
			return true, err
		}
		count, err := strconv.ParseInt(pos[1], 10, 32)
		if err != nil {
			return true, usagef("partition count %q is not a number", pos[1])
		}
		body := map[string]any{"count": count}
		if len(pos) > 2 {
			var assignment [][]int32
			for _, s := range pos[2:] {
				replicas, err := brokerIDList([]string{s})
				if err != nil {
					return true, err
				}
				assignment = append(assignment, replicas)
			}
			body["assignment"] = assignment
		}
		var ts api.TopicState
		return true, c.show("POST", "/v1/topics/"+url.PathEscape(pos[0])+"/partitions", body, &ts, func() {
			c.printPartitions(ts.Name, ts.Partitions)
		})
	case "reassignments":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return true, err
		}
		var rs struct {
			Reassignments []api.ReassignmentState `json:"reassignments"`
		}
		return true, c.show("GET", "/v1/reassignments", nil, &rs, func() { c.printReassignments(rs.Reassignments) })
	}
	return false, nil
}

// brokerIDList parses broker ids given as separate arguments or
// comma-separated.
func brokerIDList(args []string) ([]int32, error) {
	out := []int32{}
	for _, s := range args {
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				return nil, usagef("broker id %q is not a number", f)
			}
			out = append(out, int32(n))
		}
	}
	return out, nil
}

func (c *ctl) printReassignments(rs []api.ReassignmentState) {
	tw := c.table("TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Topic, r.Partition, ids(r.Replicas), ids(r.AddingReplicas), ids(r.RemovingReplicas))
	}
	tw.Flush()
}

// reassignmentRole marks a replica a reassignment is adding or removing.
func reassignmentRole(p api.PartitionState, broker int32) string {
	switch {
	case slices.Contains(p.AddingReplicas, broker):
		return " adding"
	case slices.Contains(p.RemovingReplicas, broker):
		return " removing"
	}
	return ""
}
