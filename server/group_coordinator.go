package server

// The group coordinator on package coordinator's runtime, as in Kafka:
// every group belongs to one partition of the internal, replicated
// __consumer_offsets topic (by the Java hash of its id), that partition's
// leader is the group's coordinator, and committed offsets and group
// metadata are records in that partition's log. The shard's state and its
// replay are package group's (group.Shard); this file is its host on the
// cluster (clock, events, logging, goroutines, the chaos checker, the
// topic table) and the lookups the handlers use.

import (
	"log/slog"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/coordinator"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The group coordinator's types are package group's.
type (
	group             = grp.Group
	groupShard        = grp.Shard
	committedOffset   = grp.Offset
	recordKey         = grp.RecordKey
	coordinatorRecord = grp.CoordinatorRecord
)

// topicPartition names one partition.
type topicPartition struct {
	Topic     string
	Partition int32
}

const consumerKind = grp.ConsumerKind

// newGroupShard is the runtime's NewState: a shard hosted by c.
func (c *Cluster) newGroupShard(index int32, at coordinator.Epoch) *groupShard {
	return grp.NewShard(groupHost{c}, index, at)
}

// coordinatorOf returns the broker coordinating groupID, or -1 with the
// error a FindCoordinator answer carries.
func (c *Cluster) coordinatorOf(groupID string) (int32, int16) {
	return c.coord.Coordinator(groupID)
}

// group returns groupID's state as coordinated by broker, loading the shard
// from the log if leadership moved since it was last loaded. It fails with
// NOT_COORDINATOR when broker does not lead the group's partition and
// COORDINATOR_NOT_AVAILABLE when nobody does. With create false an unknown
// group is nil (and no error).
func (c *Cluster) group(broker int32, groupID string, create bool) (*group, int16) {
	sh, err := c.coord.ShardFor(groupID)
	if err != nil {
		return nil, kerr.CoordinatorNotAvailable.Code
	}
	s, _, code := sh.Acquire(broker)
	if code != 0 {
		return nil, code
	}
	return s.Group(groupID, create), 0
}

// existingGroup looks up groupID for a request on broker that needs the
// group to exist: INVALID_GROUP_ID for an empty id, the coordinator errors,
// and missing when the group is unknown.
func (c *Cluster) existingGroup(broker int32, groupID string, missing *kerr.Error) (*group, int16) {
	if groupID == "" {
		return nil, kerr.InvalidGroupID.Code
	}
	g, code := c.group(broker, groupID, false)
	if code == 0 && g == nil {
		code = missing.Code
	}
	return g, code
}

// groupHost is the cluster as package group's shards need it.
type groupHost struct{ c *Cluster }

func (h groupHost) Shard(index int32) *coordinator.Shard[*groupShard] { return h.c.coord.Shard(index) }

func (h groupHost) Emit(g *group, ev grp.Event) {
	h.c.emit(groupEventType(ev.Type), func(e *Event) {
		e.Group, e.Member, e.Reason, e.Detail, e.Generation = g.ID, ev.Member, ev.Reason, ev.Detail, ev.Epoch
	})
}

func (h groupHost) EmitConsumer(g *group, evs []grp.Event) { h.c.emitConsumerEvents(g, evs) }
func (h groupHost) Now() time.Time                         { return h.c.now() }
func (h groupHost) InitialRebalanceDelay() time.Duration {
	return h.c.cfg.GroupInitialRebalanceDelay
}

// GroupConfig is the group's effective group configs (groupConfig).
func (h groupHost) GroupConfig(id string) grp.Config { return h.c.groupConfig(id) }
func (h groupHost) MigrationPolicy() grp.MigrationPolicy {
	return grp.MigrationPolicy(h.c.cfg.ConsumerGroupMigrationPolicy)
}
func (h groupHost) Log() *slog.Logger        { return h.c.log }
func (h groupHost) Go(f func()) bool         { return h.c.goTracked(f) }
func (h groupHost) Closing() <-chan struct{} { return h.c.closing }
func (h groupHost) Recording() bool          { return h.c.chaos.Load() != nil }
func (h groupHost) Committed(group string, recs []coordinatorRecord) {
	h.c.recordCommits(group, recs)
}
func (h groupHost) Topics() grp.Topics { return assignorTopics{h.c} }

// goTracked runs f on a goroutine that Close waits for, unless the cluster
// is closing.
func (c *Cluster) goTracked(f func()) bool {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	select {
	case <-c.closing:
		return false
	default:
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// groupEventType is the cluster's event type of a group change.
func groupEventType(t grp.EventType) EventType {
	switch t {
	case grp.MemberJoined:
		return EventGroupMemberJoined
	case grp.MemberLeft:
		return EventGroupMemberLeft
	case grp.MemberExpired:
		return EventGroupMemberExpired
	case grp.RebalanceStarted:
		return EventGroupRebalanceStarted
	case grp.MemberFenced:
		return EventGroupMemberFenced
	case grp.GroupUpgraded:
		return EventGroupUpgraded
	case grp.GroupDowngraded:
		return EventGroupDowngraded
	}
	return EventGroupRebalanceCompleted
}

// clientHost is how Kafka shows a member's address: "/" and the IP.
func (cn *conn) clientHost() string {
	host := cn.nc.RemoteAddr().String()
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = strings.Trim(host[:i], "[]")
	}
	return "/" + host
}
