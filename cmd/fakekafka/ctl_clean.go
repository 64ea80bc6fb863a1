package main

import (
	"flag"
	"fmt"
	"net/url"
	"strconv"

	"github.com/fakekafka/fakekafka/api"
)

// clean runs retention and compaction now on a topic or one partition.
func (c *ctl) clean(fs *flag.FlagSet, args []string) error {
	pos, err := c.args(fs, args, 1, 2, "TOPIC [PARTITION]")
	if err != nil {
		return err
	}
	path := "/v1/topics/" + url.PathEscape(pos[0]) + "/clean"
	var rs []api.CleanResult
	if len(pos) == 2 {
		if _, err := strconv.ParseInt(pos[1], 10, 32); err != nil {
			return usagef("partition %q is not a number", pos[1])
		}
		path = "/v1/partitions/" + url.PathEscape(pos[0]) + "/" + pos[1] + "/clean"
		var r api.CleanResult
		return c.show("POST", path, nil, &r, func() { c.printCleaned([]api.CleanResult{r}) })
	}
	return c.show("POST", path, nil, &rs, func() { c.printCleaned(rs) })
}

func (c *ctl) printCleaned(rs []api.CleanResult) {
	tw := c.table("TOPIC", "PARTITION", "SEGMENTS DELETED", "LOG START", "COMPACTED TO", "RECORDS REMOVED", "BYTES")
	for _, r := range rs {
		compacted := "-"
		if r.Compacted {
			compacted = strconv.FormatInt(r.CleanedTo, 10)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t%d -> %d\n", r.Topic, r.Partition, r.SegmentsDeleted, r.LogStartOffset,
			compacted, r.RecordsRemoved, r.BytesBefore, r.BytesAfter)
	}
	tw.Flush()
}
