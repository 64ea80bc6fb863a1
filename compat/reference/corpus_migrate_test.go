package reference

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Corpus cases of KIP-848 static members and of classic requests to a
// consumer group, sent in order after the KIP-848 member's life: a static
// member joins, a second member with its instance id is
// UNRELEASED_INSTANCE_ID, a heartbeat naming the instance with the other
// member id is FENCED_INSTANCE_ID, the member leaves with epoch -2 and the
// second one takes its place; then classic JoinGroups to that consumer
// group (a new member's MEMBER_ID_REQUIRED, another protocol type's
// INCONSISTENT_GROUP_PROTOCOL), and its leave.

const corpusStaticGroup = "cg-848-static"

func migrationCases(versions map[int16][2]int16) []corpusCase {
	hv := versionsOf(versions, kmsg.ConsumerGroupHeartbeat)
	if len(hv) == 0 || hv[len(hv)-1] < 1 {
		return nil
	}
	v := hv[len(hv)-1]
	inst := "corpus-instance-1"
	const first, second = "corpus-static-member-1", "corpus-static-member-2"
	heartbeat := func(memberID string, epoch func(e *corpusEnv) int32) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrConsumerGroupHeartbeatRequest())
			req.Group, req.MemberID, req.InstanceID, req.MemberEpoch = corpusStaticGroup, memberID, &inst, epoch(e)
			req.RebalanceTimeoutMillis = -1
			if req.MemberEpoch == 0 {
				req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 6000, []string{"corpus"}
			}
			if req.MemberEpoch >= 0 {
				req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			}
			return req
		}
	}
	zero := func(*corpusEnv) int32 { return 0 }
	current := func(e *corpusEnv) int32 { return e.static }
	keep := func(e *corpusEnv, resp kmsg.Response) {
		if r := resp.(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode == 0 {
			e.static = r.MemberEpoch
		}
	}
	g := corpusStaticGroup
	out := []corpusCase{
		{name: "ConsumerGroupHeartbeat/static-join", group: g, req: heartbeat(first, zero), after: keep},
		{name: "ConsumerGroupHeartbeat/unreleased-instance-id", group: g, req: heartbeat(second, zero)},
		{name: "ConsumerGroupHeartbeat/fenced-instance-id", group: g, req: heartbeat(second, current)},
		{name: "ConsumerGroupHeartbeat/static-leave-epoch-2", group: g, req: heartbeat(first, func(*corpusEnv) int32 { return -2 })},
		{name: "ConsumerGroupHeartbeat/static-member-replaced", group: g, req: heartbeat(second, zero), after: keep},
		{name: "ConsumerGroupHeartbeat/replaced-member-fenced", group: g, req: heartbeat(first, current)},
	}
	if jv := versionsOf(versions, kmsg.JoinGroup); len(jv) > 0 && jv[len(jv)-1] >= 4 {
		join := func(protocolType string) func(*corpusEnv) kmsg.Request {
			return func(*corpusEnv) kmsg.Request {
				req := at(jv[len(jv)-1], kmsg.NewPtrJoinGroupRequest())
				req.Group, req.ProtocolType = g, protocolType
				req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
				p := kmsg.NewJoinGroupRequestProtocol()
				md := kmsg.ConsumerMemberMetadata{Version: 1, Topics: []string{"corpus"}}
				p.Name, p.Metadata = "range", md.AppendTo(nil)
				req.Protocols = append(req.Protocols, p)
				return req
			}
		}
		out = append(out,
			corpusCase{name: "JoinGroup/classic-member-to-consumer-group", group: g, req: join("consumer"), blank: []string{"MemberID"}},
			corpusCase{name: "JoinGroup/other-protocol-type-to-consumer-group", group: g, req: join("connect")},
		)
	}
	return append(out, corpusCase{name: "ConsumerGroupHeartbeat/static-leave", group: g,
		req: heartbeat(second, func(*corpusEnv) int32 { return -1 })})
}
