package server

// DescribeQuorum, versions 0-2: the KRaft metadata quorum, as
// kafka-metadata-quorum.sh and Admin.describeMetadataQuorum ask for it
// (often as a container health check).
//
// fakekafka keeps its metadata in one process, so the quorum it reports
// is that of a combined-mode cluster where every broker is also a voter:
// the leader is the controller (the lowest running broker, as Metadata and
// DescribeCluster say), the leader epoch moves up each time a request finds
// a different leader than the last one did, and the metadata log is the
// event stream: its high watermark is the sequence number of the newest
// event. Running voters are caught up (LEO = HW, fetched and caught up
// now); a stopped one keeps what it had when last seen running (-1 before
// that). There are no observers. v2 adds each voter's endpoint (its first
// listener, under the name CONTROLLER) and a directory id. Only
// __cluster_metadata partition 0 exists: a request for anything else gets
// UNKNOWN_TOPIC_OR_PARTITION on each partition it names (none on the
// request), as KafkaRaftClient answers. With the authorizer it needs
// DESCRIBE on the cluster; denied, CLUSTER_AUTHORIZATION_FAILED at the top
// and nothing else.

import (
	"crypto/sha256"
	"sync"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const clusterMetadataTopic = "__cluster_metadata"

// quorumView is what DescribeQuorum remembers between requests: the last
// leader and its epoch, and each voter's offsets when last seen up.
type quorumView struct {
	mu     sync.Mutex
	leader int32
	epoch  int32
	seen   map[int32]voterSeen
}

type voterSeen struct {
	leo  int64
	time int64 // Unix milliseconds
}

func (cn *conn) handleDescribeQuorum(req *kmsg.DescribeQuorumRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	resp.ErrorMessage = noMessage(req.Version, 2) // Kafka sends "" from v2, which has the field
	if !cn.allowedCluster(authorizer.OpDescribe) {
		resp.ErrorCode, resp.ErrorMessage = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		return resp, nil
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != clusterMetadataTopic ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		// Every partition asked for gets the error, the request none.
		msg := kerr.UnknownTopicOrPartition.Description
		for _, rt := range req.Topics {
			st := kmsg.NewDescribeQuorumResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewDescribeQuorumResponseTopicPartition()
				sp.Partition, sp.ErrorCode, sp.ErrorMessage = rp.Partition, kerr.UnknownTopicOrPartition.Code, &msg
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil
	}
	c.events.mu.Lock()
	hw := int64(c.events.last)
	c.events.mu.Unlock()
	now := c.now().UnixMilli()
	leader := c.controller()

	q := &c.quorumView
	q.mu.Lock()
	if q.seen == nil {
		q.leader, q.seen = -1, map[int32]voterSeen{}
	}
	if leader != q.leader {
		q.leader = leader
		q.epoch++
	}
	sp := kmsg.NewDescribeQuorumResponseTopicPartition()
	sp.ErrorMessage = noMessage(req.Version, 2)
	sp.LeaderID, sp.LeaderEpoch, sp.HighWatermark = leader, q.epoch, hw
	for _, b := range c.brokers {
		if b.up.Load() {
			q.seen[b.id] = voterSeen{leo: hw, time: now}
		}
		v := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		v.ReplicaID, v.LogEndOffset = b.id, -1
		if s, ok := q.seen[b.id]; ok {
			v.LogEndOffset, v.LastFetchTimestamp, v.LastCaughtUpTimestamp = s.leo, s.time, s.time
		}
		v.ReplicaDirectoryID = voterDirectoryID(c, b.id)
		sp.CurrentVoters = append(sp.CurrentVoters, v)
	}
	q.mu.Unlock()
	sp.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}

	st := kmsg.NewDescribeQuorumResponseTopic()
	st.Topic = clusterMetadataTopic
	st.Partitions = append(st.Partitions, sp)
	resp.Topics = append(resp.Topics, st)
	if req.Version >= 2 {
		for _, b := range c.brokers {
			n := kmsg.NewDescribeQuorumResponseNode()
			n.NodeID = b.id
			l := kmsg.NewDescribeQuorumResponseNodeListener()
			host, port := cn.advertisedOf(b)
			l.Name, l.Host, l.Port = "CONTROLLER", host, uint16(port)
			n.Listeners = append(n.Listeners, l)
			resp.Nodes = append(resp.Nodes, n)
		}
	}
	return resp, nil
}

// voterDirectoryID is a stable, non-zero directory id for broker id's
// metadata log dir.
func voterDirectoryID(c *Cluster, id int32) [16]byte {
	sum := sha256.Sum256([]byte(c.cfg.ClusterID + "/" + LogDir(id)))
	var out [16]byte
	copy(out[:], sum[:16])
	return out
}
