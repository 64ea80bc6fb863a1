package reference

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Groups moving between the classic and the KIP-848 protocol, and KIP-848
// static members, with raw requests: an upgrade (a ConsumerGroupHeartbeat
// joins a classic group), a classic member joining a consumer group, the
// downgrade when the last consumer-protocol member leaves, and
// UNRELEASED_INSTANCE_ID. Epoch values are not compared (fakekafka's group
// epoch runs one ahead, see corpus_allowlist.txt), only how they relate.
func init() {
	scenarios = append(scenarios,
		scenario{
			name: "group-upgrade-downgrade",
			rows: []string{
				"classic group (raw JoinGroup/SyncGroup, range, 2 partitions); a ConsumerGroupHeartbeat joins (upgrade) and both settle",
				"… the consumer-protocol member leaves (downgrade); the classic member rejoins",
				"a classic group of protocol type connect; a ConsumerGroupHeartbeat joins",
			},
			run: func(r *run) []string {
				r.createN("mig", 2)
				coord := r.groupReady("mig-up")
				c := r.classicJoin(coord, "mig-up", "", "range", nil)
				sync := r.classicSync(coord, "mig-up", c, map[string][]int32{c.id: {0, 1}})
				first := fmt.Sprintf("classic: join %s leader self %v; sync %s %v", errName(c.code), c.leader == c.id, errName(sync.code), sync.parts)

				k := consumerMember{id: "mig-consumer-member-1"}
				hb := r.cgHeartbeat(coord, "mig-up", &k, 0, []string{"mig"})
				typ := r.groupType(coord, "mig-up")
				classicHB := ""
				r.waitFor("the classic member to be told to rejoin", func() bool {
					classicHB = errName(r.classicHeartbeat(coord, "mig-up", c))
					return classicHB != "NONE"
				})
				re := r.classicJoin(coord, "mig-up", c.id, "range", sync.parts)
				rejoin := fmt.Sprintf("rejoin %s leader none %v members %d protocol %s", errName(re.code), re.leader == "", re.members, re.protocol)
				cp, kp := r.settle(coord, "mig-up", &re, &k)
				up := fmt.Sprintf("%s; heartbeat joins %s (epoch above the generation %v); group type %s; classic heartbeat %s; %s; settled: classic %d partition(s), consumer %d",
					first, errName(hb), k.epoch > c.generation, typ, classicHB, rejoin, len(cp), len(kp))

				left := r.cgHeartbeat(coord, "mig-up", &k, -1, nil)
				typ = r.groupType(coord, "mig-up")
				r.waitFor("the classic member to be told to rejoin", func() bool {
					classicHB = errName(r.classicHeartbeat(coord, "mig-up", re))
					return classicHB != "NONE"
				})
				back := r.classicJoin(coord, "mig-up", re.id, "range", cp)
				bs := r.classicSync(coord, "mig-up", back, map[string][]int32{back.id: {0, 1}})
				down := fmt.Sprintf("leave %s epoch %d; group type %s; classic heartbeat %s; rejoin %s leader self %v members %d, generation above %v; sync %s %v; heartbeat %s",
					errName(left), k.epoch, typ, classicHB, errName(back.code), back.leader == back.id, back.members,
					back.generation > re.generation, errName(bs.code), bs.parts, errName(r.classicHeartbeat(coord, "mig-up", back)))

				coord = r.groupReady("mig-connect")
				cc := r.classicJoinType(coord, "mig-connect", "", "connect", "v1", nil)
				r.classicSync(coord, "mig-connect", cc, map[string][]int32{})
				k2 := consumerMember{id: "mig-consumer-member-2"}
				refused := r.cgHeartbeat(coord, "mig-connect", &k2, 0, []string{"mig"})
				other := fmt.Sprintf("classic join %s; heartbeat joins %s; group type %s", errName(cc.code), errName(refused), r.groupType(coord, "mig-connect"))
				return []string{up, down, other}
			},
		},
		scenario{
			name: "group-mixed-classic-join",
			rows: []string{
				"a consumer group (one ConsumerGroupHeartbeat member, 2 partitions); a classic member joins with JoinGroup/SyncGroup; another with other protocols",
			},
			run: func(r *run) []string {
				r.createN("mix", 2)
				coord := r.groupReady("mig-mix")
				k := consumerMember{id: "mix-consumer-member-1"}
				hb := r.cgHeartbeat(coord, "mig-mix", &k, 0, []string{"mix"})
				r.waitFor("the consumer member to own both partitions", func() bool {
					r.cgHeartbeat(coord, "mig-mix", &k, k.epoch, []string{"mix"})
					return len(k.owned) == 2
				})
				c := r.classicJoinTopic(coord, "mig-mix", "", "consumer", "range", "mix", nil)
				sync := r.classicSync(coord, "mig-mix", c, nil)
				cp, kp := r.settle(coord, "mig-mix", &c, &k)
				bad := r.classicJoinTopic(coord, "mig-mix", "", "consumer", "roundrobin", "mix", nil)
				conn := r.classicJoinTopic(coord, "mig-mix", "", "connect", "range", "mix", nil)
				return []string{fmt.Sprintf("heartbeat joins %s; classic join %s leader none %v members %d protocol %s; sync %s; settled: classic %d partition(s), consumer %d; other protocol %s; protocol type connect %s; group type %s",
					errName(hb), errName(c.code), c.leader == "", c.members, c.protocol, errName(sync.code), len(cp), len(kp),
					errName(bad.code), errName(conn.code), r.groupType(coord, "mig-mix"))}
			},
		},
		scenario{
			name: "group-static-members",
			rows: []string{
				"KIP-848 static member i1; a second member with i1; i1 leaves with epoch -2; a new member with i1",
			},
			run: func(r *run) []string {
				r.createN("stat", 2)
				coord := r.groupReady("mig-static")
				inst := "i1"
				a := consumerMember{id: "static-member-a-000001", instance: &inst}
				joinA := r.cgHeartbeat(coord, "mig-static", &a, 0, []string{"stat"})
				r.waitFor("member a to own both partitions", func() bool {
					r.cgHeartbeat(coord, "mig-static", &a, a.epoch, []string{"stat"})
					return len(a.owned) == 2
				})
				b := consumerMember{id: "static-member-b-000001", instance: &inst}
				joinB := r.cgHeartbeat(coord, "mig-static", &b, 0, []string{"stat"})
				wrong := consumerMember{id: b.id, instance: &inst, epoch: a.epoch}
				fenced := r.cgHeartbeat(coord, "mig-static", &wrong, a.epoch, []string{"stat"})
				epochA := a.epoch
				leave := r.cgHeartbeat(coord, "mig-static", &a, -2, nil)
				b.epoch = 0
				rejoin := r.cgHeartbeat(coord, "mig-static", &b, 0, []string{"stat"})
				old := consumerMember{id: a.id, instance: &inst}
				oldHB := r.cgHeartbeat(coord, "mig-static", &old, epochA, []string{"stat"})
				return []string{fmt.Sprintf("a joins %s; b joins %s; heartbeat with b's id %s; a leaves %s epoch %d; b joins %s, epoch same as a's %v, assigned %v; a again %s",
					errName(joinA), errName(joinB), errName(fenced), errName(leave), a.epoch, errName(rejoin), b.epoch == epochA, b.owned, errName(oldHB))}
			},
		},
	)
}

// groupReady is group's coordinator once it answers group requests (a
// fresh __consumer_offsets partition may still be loading on Kafka).
func (r *run) groupReady(group string) int32 {
	r.Helper()
	var coord int32
	r.waitFor("group "+group+"'s coordinator to answer", func() bool {
		coord = r.coordinator(group)
		req := kmsg.NewPtrOffsetFetchRequest()
		req.SetVersion(7)
		req.Group = group
		return !retriable(r.do(coord, req).(*kmsg.OffsetFetchResponse).ErrorCode)
	})
	return coord
}

// createN creates topic with n partitions on brokers 1-3.
func (r *run) createN(topic string, n int) {
	r.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for i := range n {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(i), []int32{1, 2, 3}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	if c := r.do(1, req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; c != 0 {
		r.Fatalf("create %s: %s", topic, errName(c))
	}
	for id := int32(1); id <= 3; id++ {
		r.waitFor("broker knows "+topic, func() bool {
			md := kmsg.NewPtrMetadataRequest()
			md.SetVersion(12)
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(topic)
			md.Topics = append(md.Topics, mt)
			t := r.do(id, md).(*kmsg.MetadataResponse).Topics[0]
			if t.ErrorCode != 0 || len(t.Partitions) != n {
				return false
			}
			for _, p := range t.Partitions {
				if p.Leader != 1 {
					return false
				}
			}
			return true
		})
	}
}

// classicMember is what a classic member learnt from its last JoinGroup.
type classicMember struct {
	code         int16
	id           string
	generation   int32
	leader       string
	protocol     string
	members      int
	topic        string
	protocolType string
}

func (r *run) classicJoin(coord int32, group, id, protocol string, owned []int32) classicMember {
	return r.classicJoinTopic(coord, group, id, "consumer", protocol, "mig", owned)
}

func (r *run) classicJoinType(coord int32, group, id, protocolType, protocol string, owned []int32) classicMember {
	return r.classicJoinTopic(coord, group, id, protocolType, protocol, "mig", owned)
}

// classicJoinTopic joins group as a classic member subscribed to topic
// (JoinGroup v9, again with the id MEMBER_ID_REQUIRED gives), reporting
// owned partitions in its metadata.
func (r *run) classicJoinTopic(coord int32, group, id, protocolType, protocol, topic string, owned []int32) classicMember {
	r.Helper()
	md := kmsg.ConsumerMemberMetadata{Version: 1, Topics: []string{topic}}
	if owned != nil {
		md.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: topic, Partitions: owned}}
	}
	join := func(id string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.SetVersion(9)
		req.Group, req.MemberID, req.ProtocolType = group, id, protocolType
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = protocol, md.AppendTo(nil)
		req.Protocols = append(req.Protocols, p)
		return r.do(coord, req).(*kmsg.JoinGroupResponse)
	}
	resp := join(id)
	if id == "" && resp.ErrorCode == kerr.MemberIDRequired.Code {
		resp = join(resp.MemberID)
	}
	m := classicMember{code: resp.ErrorCode, id: resp.MemberID, generation: resp.Generation, leader: resp.LeaderID,
		members: len(resp.Members), topic: topic, protocolType: protocolType}
	if resp.Protocol != nil {
		m.protocol = *resp.Protocol
	}
	return m
}

type syncAnswer struct {
	code  int16
	parts []int32
}

// classicSync syncs m (as the leader when assignments are given).
func (r *run) classicSync(coord int32, group string, m classicMember, assignments map[string][]int32) syncAnswer {
	r.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.SetVersion(5)
	req.Group, req.MemberID, req.Generation = group, m.id, m.generation
	pt := m.protocolType
	req.ProtocolType, req.Protocol = &pt, &m.protocol
	for id, ps := range assignments {
		a := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: m.topic, Partitions: ps}}}
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a.AppendTo(nil)
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	resp := r.do(coord, req).(*kmsg.SyncGroupResponse)
	out := syncAnswer{code: resp.ErrorCode, parts: []int32{}}
	var a kmsg.ConsumerMemberAssignment
	if resp.ErrorCode == 0 && pt == "consumer" && a.ReadFrom(resp.MemberAssignment) == nil {
		for _, t := range a.Topics {
			out.parts = append(out.parts, t.Partitions...)
		}
	}
	return out
}

func (r *run) classicHeartbeat(coord int32, group string, m classicMember) int16 {
	r.Helper()
	req := kmsg.NewPtrHeartbeatRequest()
	req.SetVersion(4)
	req.Group, req.MemberID, req.Generation = group, m.id, m.generation
	return r.do(coord, req).(*kmsg.HeartbeatResponse).ErrorCode
}

// consumerMember is a KIP-848 member driven by raw heartbeats: what it
// owns is what its last assignment said.
type consumerMember struct {
	id       string
	instance *string
	epoch    int32
	owned    []int32
	topicID  [16]byte
}

// cgHeartbeat sends one ConsumerGroupHeartbeat v1 at epoch (0 joins,
// subscribing to topics) and keeps the answer's epoch and assignment.
func (r *run) cgHeartbeat(coord int32, group string, m *consumerMember, epoch int32, topics []string) int16 {
	r.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.SetVersion(1)
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = group, m.id, epoch, m.instance
	req.RebalanceTimeoutMillis = -1
	if epoch == 0 {
		req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 30000, topics
	}
	if epoch >= 0 {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if len(m.owned) > 0 {
			req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: m.topicID, Partitions: m.owned})
		}
	}
	resp := r.do(coord, req).(*kmsg.ConsumerGroupHeartbeatResponse)
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	m.epoch = resp.MemberEpoch
	if resp.Assignment != nil {
		m.owned = []int32{}
		for _, t := range resp.Assignment.Topics {
			m.topicID = t.TopicID
			m.owned = append(m.owned, t.Partitions...)
		}
	}
	return 0
}

// settle runs a classic member and a KIP-848 member until both hold one
// partition and the classic member's heartbeat answers NONE: the classic
// member rejoins whenever told to, reporting what it owns.
func (r *run) settle(coord int32, group string, c *classicMember, k *consumerMember) (classic, consumer []int32) {
	r.Helper()
	classic = []int32{}
	if s := r.classicSync(coord, group, *c, nil); s.code == 0 {
		classic = s.parts
	}
	r.waitFor("the classic and the consumer member to settle", func() bool {
		r.cgHeartbeat(coord, group, k, k.epoch, nil)
		switch r.classicHeartbeat(coord, group, *c) {
		case 0:
			return len(classic) == 1 && len(k.owned) == 1
		case kerr.RebalanceInProgress.Code:
			*c = r.classicJoinTopic(coord, group, c.id, "consumer", c.protocol, c.topic, classic)
			if s := r.classicSync(coord, group, *c, nil); s.code == 0 {
				classic = s.parts
			}
		}
		time.Sleep(20 * time.Millisecond) // pacing between rounds, as a member's heartbeat interval
		return false
	})
	return classic, k.owned
}

// groupType is the group's type as ListGroups v5 names it.
func (r *run) groupType(coord int32, group string) string {
	r.Helper()
	req := kmsg.NewPtrListGroupsRequest()
	req.SetVersion(5)
	for _, g := range r.do(coord, req).(*kmsg.ListGroupsResponse).Groups {
		if g.Group == group {
			return g.GroupType
		}
	}
	return "none"
}
