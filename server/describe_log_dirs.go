package server

// DescribeLogDirs, versions 0-5: the log directory of the broker asked, as
// Kafka's ReplicaManager.describeLogDirs answers it.
//
// Each broker has one log dir with a stable path-like name
// (/var/lib/fakekafka/broker-N/data), holding the replicas this broker
// hosts: Size is the replica's stored batch bytes, OffsetLag 0 and IsFuture
// false (there are no future replicas, since AlterReplicaLogDirs is not
// served). Null topics means every topic; listed partitions this broker
// does not host, or unknown topics, are left out. TotalBytes and UsableBytes
// (v4+) are -1, Kafka's "unknown volume", since nothing is on a disk.
// IsCordoned (v5+) follows the broker's cordoned.log.dirs.
// With the authorizer it needs DESCRIBE on the cluster; denied, the answer
// has no log dirs and (v3+) CLUSTER_AUTHORIZATION_FAILED.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LogDir is broker id's one log directory, as DescribeLogDirs names it.
func LogDir(id int32) string { return fmt.Sprintf("/var/lib/fakekafka/broker-%d/data", id) }

func (cn *conn) handleDescribeLogDirs(req *kmsg.DescribeLogDirsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !cn.allowedCluster(authorizer.OpDescribe) {
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir, dir.TotalBytes, dir.UsableBytes = LogDir(cn.b.id), -1, -1
	dir.IsCordoned = c.logDirCordoned(cn.b.id) // v5+ (log_dir_cordon.go)
	dir.Topics = []kmsg.DescribeLogDirsResponseDirTopic{}
	byName := c.topics.Load().byName
	wanted := map[string][]int32{} // nil: every partition
	if req.Topics == nil {
		for name := range byName {
			wanted[name] = nil
		}
	} else {
		for _, rt := range req.Topics {
			wanted[rt.Topic] = append(wanted[rt.Topic], rt.Partitions...)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(wanted)) {
		t := byName[name]
		if t == nil {
			continue
		}
		st := kmsg.NewDescribeLogDirsResponseDirTopic()
		st.Topic = name
		parts := t.partitions()
		indexes := wanted[name]
		if indexes == nil && req.Topics == nil {
			for i := range parts {
				indexes = append(indexes, int32(i))
			}
		}
		slices.Sort(indexes)
		for _, i := range slices.Compact(indexes) {
			if i < 0 || int(i) >= len(parts) {
				continue
			}
			p := parts[i]
			p.mu.Lock()
			r := p.st.Replica(cn.b.id)
			var size int64
			if r != nil {
				size = r.Log().Size()
			}
			p.mu.Unlock()
			if r == nil {
				continue
			}
			sp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			sp.Partition, sp.Size = i, size
			st.Partitions = append(st.Partitions, sp)
		}
		if len(st.Partitions) > 0 {
			dir.Topics = append(dir.Topics, st)
		}
	}
	resp.Dirs = append(resp.Dirs, dir)
	return resp, nil
}
