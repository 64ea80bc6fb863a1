package server

// cordoned.log.dirs (KIP-1066): a broker's log directories that take no new
// replicas. Kafka 4.4 reports a directory cordoned in DescribeLogDirs v5
// (IsCordoned) when this per-broker config lists it or is "*" (every
// directory of the broker), and its controller places no new replicas on a
// broker whose every log dir is cordoned (new topics and partitions placed
// by it; explicit assignments are not checked for it here). fakekafka's brokers have one log
// dir each, so a cordoned dir takes its broker out of placement.

import "strings"

// logDirCordoned reports whether broker id's one log dir (LogDir) is
// cordoned, by the value of cordoned.log.dirs that broker sees.
func (c *Cluster) logDirCordoned(id int32) bool {
	v, _ := c.brokerSettings().value(id, "cordoned.log.dirs")
	dir := LogDir(id)
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d == "*" || d == dir {
			return true
		}
	}
	return false
}

// validateCordonedLogDirs checks a new cordoned.log.dirs of broker id as
// Kafka's KafkaConfig.validateCordonedLogDirs does: "*" alone, or dirs the
// broker has (its one LogDir); "" when it passes or is not being set.
func validateCordonedLogDirs(next map[string]string, id int32) string {
	v, ok := next["cordoned.log.dirs"]
	if !ok || id == clusterLevel {
		return ""
	}
	var dirs, unknown []string
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		switch {
		case d == "*" && len(dirs) > 1:
			return "requirement failed: When cordoned.log.dirs is set to *, it must not contain other values"
		case d != "*" && d != LogDir(id):
			unknown = append(unknown, d)
		}
	}
	if len(unknown) > 0 {
		return "requirement failed: All entries in cordoned.log.dirs must be present in log.dirs or log.dir. Missing entries : " + strings.Join(unknown, ",")
	}
	return ""
}

// placeableBrokers are the running brokers new replicas may go to: those
// whose log dir is not cordoned.
func (c *Cluster) placeableBrokers() []int32 {
	live := c.liveBrokers()
	out := live[:0]
	for _, id := range live {
		if !c.logDirCordoned(id) {
			out = append(out, id)
		}
	}
	return out
}
