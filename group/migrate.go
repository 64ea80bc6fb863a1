package group

// Online migration between the classic and the consumer protocol
// (KIP-848's upgrade and downgrade, as Kafka 4.4 runs them), under the
// broker's group.consumer.migration.policy:
//
//   - upgrade: a ConsumerGroupHeartbeat joining a classic group with
//     members turns it into a consumer group; the classic members carry
//     over at member epoch = the generation, keeping their assignments as
//     their target until they rejoin (their JoinGroups and SyncGroups in
//     flight get REBALANCE_IN_PROGRESS);
//   - downgrade: when the last consumer-protocol member leaves (or is
//     fenced) and classic members remain, the group turns classic again at
//     generation = the group epoch, each member holding its target
//     assignment, and rebalances.
//
// Each conversion writes the old type's tombstone and the new type's
// record in one batch, so a coordinator that loads the log mid-migration
// restores exactly one type.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MigrationPolicy is group.consumer.migration.policy.
type MigrationPolicy string

// Kafka's values; bidirectional is the default since 4.0.
const (
	MigrationBidirectional MigrationPolicy = "bidirectional"
	MigrationUpgrade       MigrationPolicy = "upgrade"
	MigrationDowngrade     MigrationPolicy = "downgrade"
	MigrationDisabled      MigrationPolicy = "disabled"
)

// ParseMigrationPolicy reads a policy as Kafka does (case-insensitive);
// "" is the default.
func ParseMigrationPolicy(s string) (MigrationPolicy, error) {
	switch p := MigrationPolicy(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return MigrationBidirectional, nil
	case MigrationBidirectional, MigrationUpgrade, MigrationDowngrade, MigrationDisabled:
		return p, nil
	}
	return "", fmt.Errorf("group.consumer.migration.policy %q: want bidirectional, upgrade, downgrade or disabled", s)
}

// UpgradeEnabled says whether classic groups may turn consumer groups.
func (p MigrationPolicy) UpgradeEnabled() bool {
	return p == MigrationBidirectional || p == MigrationUpgrade || p == ""
}

// DowngradeEnabled says whether consumer groups may turn classic again.
func (p MigrationPolicy) DowngradeEnabled() bool {
	return p == MigrationBidirectional || p == MigrationDowngrade || p == ""
}

// FromClassic is the consumer group a classic group becomes (Kafka's
// ConsumerGroup.fromClassicGroup): group and assignment epoch are the
// generation; each member is at that epoch, subscribed as its metadata
// says, with its last assignment as its target. It fails, as Kafka, on
// metadata that does not read and on assignments carrying a custom
// assignor's user data.
func FromClassic(c *Classic, topics Topics) (*ConsumerGroup, string) {
	cg := NewConsumerGroup()
	cg.Epoch, cg.AssignmentEpoch = c.Generation, c.Generation
	for _, cm := range c.SortedMembers() {
		md := cm.MetadataFor(c.Protocol)
		if c.Protocol == "" && len(cm.Protocols) > 0 {
			md = cm.Protocols[0].Metadata
		}
		var sub kmsg.ConsumerMemberMetadata
		if sub.ReadFrom(md) != nil {
			return nil, fmt.Sprintf("Cannot upgrade classic group %s to consumer group because the embedded consumer protocol is malformed.", c.ID)
		}
		assigned := Assignment{}
		if len(cm.Assignment) > 0 {
			var a kmsg.ConsumerMemberAssignment
			if a.ReadFrom(cm.Assignment) != nil {
				return nil, fmt.Sprintf("Cannot upgrade classic group %s to consumer group because the embedded consumer protocol is malformed.", c.ID)
			}
			if len(a.UserData) > 0 {
				return nil, fmt.Sprintf("Cannot upgrade classic group %s to consumer group because an unsupported custom assignor is in use. Please refer to the documentation or switch to a default assignor before re-attempting the upgrade.", c.ID)
			}
			for _, t := range a.Topics {
				if tt, ok := topics.Lookup(t.Topic); ok {
					for _, p := range t.Partitions {
						assigned.Add(tt.ID, p)
					}
				}
			}
		}
		m := &ConsumerMember{ID: cm.ID, ClientID: cm.ClientID, ClientHost: cm.ClientHost, InstanceID: cm.InstanceID, RackID: sub.Rack,
			Epoch: c.Generation, Subscribed: sortedCopy(sub.Topics), RebalanceTimeout: cm.RebalanceTimeout,
			Assigned: assigned, Owned: assigned.Clone(), Sent: assigned.Clone(),
			Classic: &ClassicMember{SessionTimeout: cm.SessionTimeout, Protocols: slices.Clone(cm.Protocols)}}
		cg.Members[m.ID] = m
		cg.Target[m.ID] = assigned.Clone()
	}
	cg.TopicsSeen = cg.SubscribedPartitions(topics)
	return cg, ""
}

// Abandon ends the classic membership when the group turns consumer: the
// members' JoinGroups and SyncGroups in flight get code, every timer
// stops, and the classic side is Empty with no members. Callers hold the
// group's lock.
func (g *Classic) Abandon(code int16) {
	stopTimer(g.joinTimer)
	stopTimer(g.syncTimer)
	g.joinSeq++
	g.syncSeq++
	for _, t := range g.PendingMembers {
		stopTimer(t)
	}
	for _, m := range g.Members {
		stopTimer(m.session)
		m.timerSeq++
		m.deliverJoin(JoinError(code, m.ID))
		m.deliverSync(SyncResult{Code: code})
	}
	g.Members, g.Statics, g.PendingMembers = map[string]*Member{}, map[string]string{}, map[string]*clock.Timer{}
	g.AwaitingSync = nil
	g.State, g.Protocol, g.Leader, g.initialDelay = Empty, "", "", false
}

// ToClassic is the classic group metadata a consumer group becomes when
// member leaving goes (Kafka's ClassicGroup.fromConsumerGroup): the
// generation is the group epoch, the protocol the one the remaining
// members agree on, and each member holds its target assignment, encoded
// in its subscription's version.
func (cg *ConsumerGroup) ToClassic(leaving *ConsumerMember, topics Topics, now int64) Meta {
	tmp := Classic{Members: map[string]*Member{}}
	ids := slices.Sorted(maps.Keys(cg.Members))
	var seq uint64
	for _, id := range ids {
		m := cg.Members[id]
		if m == leaving || m.Classic == nil {
			continue
		}
		tmp.Members[id] = &Member{ID: id, Protocols: m.Classic.Protocols, seq: seq}
		seq++
	}
	protocol := tmp.selectProtocol()
	md := Meta{ProtocolType: "consumer", Protocol: protocol, Generation: cg.Epoch, Timestamp: now, Members: []MemberMeta{}}
	for _, id := range ids {
		m := cg.Members[id]
		if tmp.Members[id] == nil {
			continue
		}
		if md.Leader == "" {
			md.Leader = id
		}
		sub := tmp.Members[id].MetadataFor(protocol)
		md.Members = append(md.Members, MemberMeta{ID: id, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			SessionTimeoutMs: m.Classic.SessionTimeout.Milliseconds(), RebalanceTimeoutMs: m.RebalanceTimeout.Milliseconds(),
			Subscription: sub, Assignment: EncodeAssignment(cg.Target[id], sub, topics)})
	}
	return md
}
