package server

// AlterReplicaLogDirs, versions 0-2: move replicas between the log dirs
// of the broker asked.
//
// Each broker has exactly one log dir (LogDir), so the only possible move
// is to where the replica already is, which Kafka answers with NONE and no
// work. Another path is LOG_DIR_NOT_FOUND; a partition this broker does
// not host is REPLICA_NOT_AVAILABLE (Kafka's answer before the replica
// exists), an unknown one UNKNOWN_TOPIC_OR_PARTITION. With the authorizer
// it needs ALTER on the cluster; denied, every partition is
// CLUSTER_AUTHORIZATION_FAILED, one topic entry per dir and topic asked
// (Kafka's error response).

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleAlterReplicaLogDirs(req *kmsg.AlterReplicaLogDirsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	if !cn.allowedCluster(authorizer.OpAlter) {
		for _, rd := range req.Dirs {
			for _, rt := range rd.Topics {
				st := kmsg.NewAlterReplicaLogDirsResponseTopic()
				st.Topic = rt.Topic
				for _, index := range rt.Partitions {
					sp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
					sp.Partition, sp.ErrorCode = index, errClusterAuth
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
		}
		return resp, nil
	}
	byTopic := map[string]int{} // topic → index in resp.Topics
	for _, rd := range req.Dirs {
		for _, rt := range rd.Topics {
			i, ok := byTopic[rt.Topic]
			if !ok {
				i = len(resp.Topics)
				byTopic[rt.Topic] = i
				st := kmsg.NewAlterReplicaLogDirsResponseTopic()
				st.Topic = rt.Topic
				resp.Topics = append(resp.Topics, st)
			}
			for _, index := range rt.Partitions {
				sp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				sp.Partition = index
				p := c.partition(rt.Topic, index)
				switch {
				case p == nil:
					sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case rd.Dir != LogDir(cn.b.id):
					sp.ErrorCode = kerr.LogDirNotFound.Code
				default:
					p.mu.Lock()
					hosted := p.st.Replica(cn.b.id) != nil
					p.mu.Unlock()
					if !hosted {
						sp.ErrorCode = kerr.ReplicaNotAvailable.Code
					}
				}
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, sp)
			}
		}
	}
	return resp, nil
}
