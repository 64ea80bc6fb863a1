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
