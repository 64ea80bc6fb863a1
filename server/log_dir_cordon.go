package server

// cordoned.log.dirs (KIP-1066): a broker's log directories that take no new
// replicas. Kafka 4.4 reports a directory cordoned in DescribeLogDirs v5
// (IsCordoned) when this per-broker config lists it or is "*" (every
// directory of the broker). fakekafka reports it; it does not steer
// replica placement away from cordoned brokers.

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
