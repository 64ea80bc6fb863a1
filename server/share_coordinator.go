package server

// The share coordinator (KIP-932), on package coordinator's runtime: the
// state of every share partition (group, topic id, partition) belongs to
// one partition of the internal, replicated __share_group_state topic, by
// the Java hash of its key "group:topicId:partition"; that partition's
// leader is its coordinator, and every change is a ShareSnapshot or
// ShareUpdate record in that partition's log, written with acks=all
// before it takes effect. The rules and the shard's state are package
// share's; this file runs them: it picks the shard, loads it when the
// leadership moved, writes the records and reports the changes.
//
// The topic is created on first use like __consumer_offsets: Kafka 4.4's
// share.coordinator.state.topic.* settings (50 partitions, replication
// factor 3 and min.insync.replicas 2, both capped by the live brokers),
// cleanup.policy=delete with retention.ms=-1 (the coordinator prunes it
// itself; fakekafka keeps every record), segment.bytes 100 MiB.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/coordinator"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareStateTopic is Kafka's internal topic of the share coordinators.
const shareStateTopic = "__share_group_state"

const (
	// shareWriteTimeout is share.coordinator.write.timeout.ms.
	shareWriteTimeout = 5 * time.Second
	// shareStateMinISR is share.coordinator.state.topic.min.isr.
	shareStateMinISR = 2
)

// shareCoordinators is the share coordinators' runtime.
type shareCoordinators struct {
	rt *coordinator.Runtime[*share.CoordinatorShard]
	// persister is what the share-group offset admin APIs use, as Kafka's
	// group coordinator uses its persister.
	persister *sharePersister
	groupHook shareGroupHook // tests: a share group (share_group_standin.go)
}

// newShareCoordinators sets up the runtime; its topic is created on first
// use.
func (c *Cluster) newShareCoordinators() {
	perSnapshot := max(0, c.cfg.ShareSnapshotUpdateRecordsPerSnapshot)
	c.sc.persister = c.newSharePersister().(*sharePersister)
	c.sc.rt = coordinator.New(coordinator.Config[*share.CoordinatorShard]{
		Topic: shareStateTopic,
		Open: func() ([]coordinator.PartitionLog, error) {
			rf := min(c.cfg.ShareStateReplicationFactor, len(c.liveBrokers()))
			return c.internalTopic(shareStateTopic, c.cfg.ShareStatePartitions, rf, map[string]string{
				"cleanup.policy":      "delete",
				"retention.ms":        "-1",
				"min.insync.replicas": strconv.Itoa(min(shareStateMinISR, max(rf, 1))),
				"segment.bytes":       "104857600", // share.coordinator.state.topic.segment.bytes
				"compression.type":    "producer",
			})
		},
		NewState: func(index int32, e coordinator.Epoch) *share.CoordinatorShard {
			return share.NewCoordinatorShard(index, e, perSnapshot, c.sharePartitionCount)
		},
		Loaded: func(_ *coordinator.Shard[*share.CoordinatorShard], e coordinator.Epoch, st *share.CoordinatorShard) {
			n := len(st.Partitions())
			c.log.Info("share coordinator loaded", "partition", st.Index(), "epoch", e.Epoch, "broker", e.Leader, "share_partitions", n)
			c.emit(EventShareCoordinatorLoaded, func(ev *Event) {
				ev.Broker, ev.Topic, ev.Partition, ev.Epoch = e.Leader, shareStateTopic, st.Index(), e.Epoch
				ev.Detail = fmt.Sprintf("%d share partitions", n)
			})
		},
		Alive: func(id int32) bool {
			b := c.broker(id)
			return b != nil && b.up.Load()
		},
		Clock:        c.cfg.Clock,
		WriteTimeout: shareWriteTimeout,
		Log:          c.log,
	})
}

// sharePartitionCount is the coordinator's metadata image: the partition
// count of a live topic by id.
func (c *Cluster) sharePartitionCount(id [16]byte) (int32, bool) {
	t := c.topicByID(id)
	if t == nil || t.deleted.Load() {
		return 0, false
	}
	return int32(len(t.partitions())), true
}

// shareCoordinatorOf is the broker coordinating a share partition's state
// (FindCoordinator key type SHARE), or -1 with the error to answer.
func (c *Cluster) shareCoordinatorOf(k share.Key) (int32, int16) {
	return c.sc.rt.Coordinator(k.CoordinatorKey())
}

// parseShareKey parses a FindCoordinator SHARE key,
// "groupId:topicId:partition" (the group may itself hold colons).
func parseShareKey(key string) (share.Key, bool) {
	parts := strings.Split(key, ":")
	if len(parts) < 3 {
		return share.Key{}, false
	}
	n := len(parts)
	group := strings.Join(parts[:n-2], ":")
	id, ok := share.ParseTopicID(strings.TrimRight(parts[n-2], "="))
	p, err := strconv.ParseInt(parts[n-1], 10, 32)
	if strings.TrimSpace(group) == "" || !ok || err != nil {
		return share.Key{}, false
	}
	return share.Key{Group: group, TopicID: id, Partition: int32(p)}, true
}

// shareOp runs one share-state operation on k's shard as coordinated by
// broker: decide (under the shard's operation lock), write the records it
// returns with acks=all, and answer. A failed write answers the runtime's
// error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) with Kafka's message.
func (c *Cluster) shareOp(broker int32, k share.Key, what string, op func(st *share.CoordinatorShard, nowMs int64) ([]coordinator.Record, share.Result)) share.Result {
	sh, err := c.sc.rt.ShardFor(k.CoordinatorKey())
	if err != nil {
		return shareFail(kerr.CoordinatorNotAvailable.Code, what)
	}
	st, e, code := sh.Acquire(broker)
	if code != 0 {
		return shareFail(code, what)
	}
	st.Lock()
	defer st.Unlock()
	recs, res := op(st, c.now().UnixMilli())
	if res.Code != 0 || len(recs) == 0 {
		return res
	}
	if code := sh.Write(e, coordinator.NoProducer, recs); code != 0 {
		c.log.Info("share state write failed", "op", what, "group", k.Group, "partition", k.Partition, "code", code)
		return shareFail(code, what)
	}
	return res
}

// shareFail is an operation's failure as Kafka's share coordinator
// service words it ("Unable to <what>: <message>").
func shareFail(code int16, what string) share.Result {
	msg := "Unable to " + what + ": " + share.ErrorMessage(code)
	return share.Result{Code: code, Message: &msg}
}

// shareInitialize initializes k's state at stateEpoch and startOffset.
func (c *Cluster) shareInitialize(broker int32, k share.Key, stateEpoch int32, startOffset int64) share.Result {
	res := c.shareOp(broker, k, "initialize share group state", func(st *share.CoordinatorShard, now int64) ([]coordinator.Record, share.Result) {
		return st.Initialize(k, stateEpoch, startOffset, now)
	})
	if res.Code == 0 {
		c.emitShareState(EventShareStateInitialized, k, fmt.Sprintf("state epoch %d, start offset %d", stateEpoch, startOffset))
	}
	return res
}

// shareWrite writes a share partition leader's state change.
func (c *Cluster) shareWrite(broker int32, k share.Key, w share.WriteState) share.Result {
	return c.shareOp(broker, k, "write share group state", func(st *share.CoordinatorShard, now int64) ([]coordinator.Record, share.Result) {
		return st.Write(k, w, now)
	})
}

// shareRead reads k's state for the partition leader at leaderEpoch.
func (c *Cluster) shareRead(broker int32, k share.Key, leaderEpoch int32) share.Result {
	return c.shareOp(broker, k, "read share group state", func(st *share.CoordinatorShard, now int64) ([]coordinator.Record, share.Result) {
		return st.Read(k, leaderEpoch, now)
	})
}

// shareReadSummary reads k's start offset and epochs.
func (c *Cluster) shareReadSummary(broker int32, k share.Key) share.Result {
	return c.shareOp(broker, k, "read share group state summary", func(st *share.CoordinatorShard, _ int64) ([]coordinator.Record, share.Result) {
		return nil, st.ReadSummary(k)
	})
}

// shareDelete deletes k's state.
func (c *Cluster) shareDelete(broker int32, k share.Key) share.Result {
	var existed bool
	res := c.shareOp(broker, k, "delete share group state", func(st *share.CoordinatorShard, _ int64) ([]coordinator.Record, share.Result) {
		recs, r := st.Delete(k)
		existed = len(recs) > 0
		return recs, r
	})
	if res.Code == 0 && existed {
		c.emitShareState(EventShareStateDeleted, k, "")
	}
	return res
}

// emitShareState reports a durable change of a share partition's state.
// The event's Topic is the share partition's topic (by name when it
// still exists), Detail the rest.
func (c *Cluster) emitShareState(typ EventType, k share.Key, detail string) {
	name := share.TopicIDString(k.TopicID)
	if t := c.topicByID(k.TopicID); t != nil {
		name = t.name
	}
	c.emit(typ, func(e *Event) {
		e.Group, e.Topic, e.Partition, e.Detail = k.Group, name, k.Partition, detail
	})
}

// ShareState is one share partition's state as its share coordinator
// holds it.
type ShareState struct {
	Group       string
	Topic       string // the topic's name; its id when it no longer exists
	TopicID     [16]byte
	Partition   int32
	Coordinator int32 // the broker that loaded it
	// StatePartition is its partition of __share_group_state.
	StatePartition int32
	share.Offset
	// UpdatesSinceSnapshot counts the ShareUpdate records since the last
	// ShareSnapshot.
	UpdatesSinceSnapshot int
}

// ShareStates lists the share partitions the share coordinators hold,
// loading each __share_group_state shard on its current leader, by state
// partition, then group, topic id and partition. Empty before the topic
// exists.
func (c *Cluster) ShareStates() []ShareState {
	if c.topic(shareStateTopic) == nil {
		return nil
	}
	shards, err := c.sc.rt.Shards()
	if err != nil {
		return nil
	}
	var out []ShareState
	for _, sh := range shards {
		leader, code := sh.Coordinator()
		if code != 0 {
			continue
		}
		st, e, code := sh.Acquire(leader)
		if code != 0 {
			continue
		}
		for _, p := range st.Partitions() {
			name := share.TopicIDString(p.Key.TopicID)
			if t := c.topicByID(p.Key.TopicID); t != nil {
				name = t.name
			}
			out = append(out, ShareState{Group: p.Key.Group, Topic: name, TopicID: p.Key.TopicID, Partition: p.Key.Partition,
				Coordinator: e.Leader, StatePartition: st.Index(), Offset: p.Offset, UpdatesSinceSnapshot: p.UpdatesSinceSnapshot})
		}
	}
	return out
}

// shareGroupStateKeys lists the share partitions of group the share
// coordinators hold state for (loading the shards on their leaders).
func (c *Cluster) shareGroupStateKeys(group string) []share.Key {
	var keys []share.Key
	for _, s := range c.ShareStates() {
		if s.Group == group {
			keys = append(keys, share.Key{Group: group, TopicID: s.TopicID, Partition: s.Partition})
		}
	}
	return keys
}

// findShareCoordinator answers a FindCoordinator key of type SHARE into
// co, returning its error code. A key that fails is answered as Kafka 4.4
// does: no node (port -1) and an empty message.
func (cn *conn) findShareCoordinator(version int16, key string, co *kmsg.FindCoordinatorResponseCoordinator) int16 {
	code := cn.shareCoordinatorFor(version, key, co)
	if code != 0 {
		co.NodeID, co.Host, co.Port, co.ErrorMessage = -1, "", -1, kmsg.StringPtr("")
	}
	return code
}

func (cn *conn) shareCoordinatorFor(version int16, key string, co *kmsg.FindCoordinatorResponseCoordinator) int16 {
	if version < 6 {
		return kerr.InvalidRequest.Code
	}
	if !cn.allowedCluster(authorizer.OpClusterAction) {
		return kerr.ClusterAuthorizationFailed.Code
	}
	k, ok := parseShareKey(key)
	if !ok {
		return kerr.InvalidRequest.Code
	}
	id, code := cn.b.c.shareCoordinatorOf(k)
	if b := cn.b.c.broker(id); code == 0 && b != nil {
		co.NodeID = b.id
		co.Host, co.Port = cn.advertisedOf(b)
	}
	return code
}

// shareTopicDeleted removes the share state of a deleted topic's
// partitions, as Kafka's share coordinators do when the metadata drops the
// topic: on each state partition's leader, in the background.
func (c *Cluster) shareTopicDeleted(id [16]byte) {
	if c.topic(shareStateTopic) == nil {
		return
	}
	c.goTracked(func() {
		shards, err := c.sc.rt.Shards()
		if err != nil {
			return
		}
		for _, sh := range shards {
			leader, code := sh.Coordinator()
			if code != 0 {
				continue
			}
			st, e, code := sh.Acquire(leader)
			if code != 0 {
				continue
			}
			st.Lock()
			recs, keys := st.TopicDeleted(id)
			if len(recs) > 0 {
				code = sh.Write(e, coordinator.NoProducer, recs)
			}
			st.Unlock()
			if code != 0 {
				c.log.Info("share state of a deleted topic not removed", "partition", sh.Index(), "code", code)
				continue
			}
			for _, k := range keys {
				c.emitShareState(EventShareStateDeleted, k, "topic deleted")
			}
		}
	})
}
