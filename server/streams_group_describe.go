package server

// StreamsGroupDescribe, versions 0-1 (KIP-1071): each streams group's
// state (Empty, NotReady, Assigning, Reconciling, Stable), group and
// assignment epochs, topology, and per member its epochs, process,
// endpoint, client tags and current and target tasks. GROUP_ID_NOT_FOUND
// for an unknown group or one of another type. No topology description
// plugin runs here: one asked for (v1) is NOT_STORED.

import (
	"net"
	"strconv"

	"fmt"
	"github.com/fakekafka/fakekafka/api"
	"maps"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topology description statuses of StreamsGroupDescribe v1.
const (
	topologyDescriptionNotRequested int8 = 0
	topologyDescriptionNotStored    int8 = 1
)

func (cn *conn) handleStreamsGroupDescribe(req *kmsg.StreamsGroupDescribeRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewStreamsGroupDescribeResponseGroup()
		rg.Group = id
		rg.AuthorizedOperations = -2147483648
		var msg string
		g, code := c.group(cn.b.id, id, false)
		switch {
		case !cn.allowedGroup(authorizer.OpDescribe, id):
			rg.ErrorCode = errGroupAuth
		case code != 0:
			rg.ErrorCode = code
		case g == nil:
			rg.ErrorCode, msg = kerr.GroupIDNotFound.Code, fmt.Sprintf("Group %s not found.", id)
		default:
			g.Mu.Lock()
			if sg := g.StreamsGroup(); sg == nil {
				rg.ErrorCode, msg = kerr.GroupIDNotFound.Code, fmt.Sprintf("Group %s is not a streams group.", id)
			} else {
				describeStreamsGroup(sg, &rg)
				if req.IncludeAuthorizedOperations {
					rg.AuthorizedOperations = cn.authorizedOps(authorizer.ResourceGroup, id)
				}
				if req.Version >= 1 {
					rg.AssignorName = new(string)
					*rg.AssignorName = "sticky"
					if req.IncludeTopologyDescription {
						rg.TopologyDescriptionStatus = topologyDescriptionNotStored
					} else {
						rg.TopologyDescriptionStatus = topologyDescriptionNotRequested
					}
				}
			}
			g.Mu.Unlock()
		}
		if rg.ErrorCode != 0 {
			if msg == "" {
				msg = kerr.ErrorForCode(rg.ErrorCode).Error()
			}
			rg.ErrorMessage = &msg
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

func describeStreamsGroup(sg *grp.StreamsGroup, rg *kmsg.StreamsGroupDescribeResponseGroup) {
	rg.State, rg.Epoch, rg.AssignmentEpoch = sg.State(), sg.Epoch, sg.AssignmentEpoch
	if t := sg.Topology; t != nil {
		dt := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
		dt.Epoch = t.Epoch
		for _, s := range t.Subtopologies {
			ds := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
			ds.SubtopologyID, ds.SourceTopics, ds.RepartitionSinkTopics = s.ID, stringsOrEmpty(s.SourceTopics), stringsOrEmpty(s.RepartitionSinkTopics)
			ds.StateChangelogTopics, ds.RepartitionSourceTopics = describeTopicInfos(s.StateChangelogTopics), describeTopicInfos(s.RepartitionSourceTopics)
			dt.Subtopologies = append(dt.Subtopologies, ds)
		}
		rg.Topology = &dt
	}
	for _, m := range sg.SortedMembers() {
		dm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
		dm.MemberID, dm.MemberEpoch, dm.InstanceID, dm.RackID = m.ID, m.Epoch, m.InstanceID, m.RackID
		dm.ClientID, dm.ClientHost, dm.TopologyEpoch, dm.ProcessID = m.ClientID, m.ClientHost, m.TopologyEpoch, m.ProcessID
		if m.Endpoint != nil {
			dm.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: m.Endpoint.Host, Port: m.Endpoint.Port}
		}
		dm.ClientTags = []kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{}
		for _, k := range slices.Sorted(maps.Keys(m.ClientTags)) {
			dm.ClientTags = append(dm.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: k, Value: m.ClientTags[k]})
		}
		dm.TaskOffsets, dm.TaskEndOffsets = []kmsg.TaskOffset{}, []kmsg.TaskOffset{}
		dm.Assignment = streamsAssignment(m.Assigned)
		dm.TargetAssignment = streamsAssignment(sg.Target[m.ID])
		rg.Members = append(rg.Members, dm)
	}
}

func stringsOrEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func streamsAssignment(ts grp.TaskSet) kmsg.StreamsAssignment {
	return kmsg.StreamsAssignment{ActiveTasks: taskIDs(ts.Active), StandbyTasks: taskIDs(ts.Standby), WarmupTasks: taskIDs(ts.Warmup)}
}

func describeTopicInfos(in []grp.TopicInfo) []kmsg.TopicInfo {
	out := []kmsg.TopicInfo{}
	for _, ti := range in {
		ki := kmsg.NewTopicInfo()
		ki.Topic, ki.NumPartitions, ki.ReplicationFactor = ti.Name, ti.Partitions, ti.ReplicationFactor
		ki.Configs = []kmsg.TopicInfoConfig{}
		for _, k := range slices.Sorted(maps.Keys(ti.Configs)) {
			ki.Configs = append(ki.Configs, kmsg.TopicInfoConfig{Key: k, Value: ti.Configs[k]})
		}
		out = append(out, ki)
	}
	return out
}

// streamsSnapshot fills a streams group's state for Groups and GET
// /v1/groups. Callers hold the group's lock.
func streamsSnapshot(sg *grp.StreamsGroup, gs *GroupState) {
	gs.Protocol, gs.Generation = "sticky", sg.Epoch
	ae := sg.AssignmentEpoch
	gs.AssignmentEpoch = &ae
	for _, m := range sg.SortedMembers() {
		epoch := m.Epoch
		ss := &api.StreamsMemberState{ProcessID: m.ProcessID, TopologyEpoch: m.TopologyEpoch, State: m.State,
			Tasks: apiTasks(m.Assigned), Target: apiTasks(sg.Target[m.ID])}
		if m.Endpoint != nil {
			ss.UserEndpoint = net.JoinHostPort(m.Endpoint.Host, strconv.Itoa(int(m.Endpoint.Port)))
		}
		gs.Members = append(gs.Members, GroupMemberState{MemberID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			ClientHost: m.ClientHost, RebalanceTimeoutMillis: m.RebalanceTimeout.Milliseconds(), MemberEpoch: &epoch,
			Assignment: map[string][]int32{}, Streams: ss})
	}
}

func apiTasks(ts grp.TaskSet) api.StreamsTasks {
	conv := func(t grp.Tasks) map[string][]int32 {
		out := map[string][]int32{}
		for _, s := range t.Subtopologies() {
			out[s] = slices.Clone(t[s])
		}
		return out
	}
	return api.StreamsTasks{Active: conv(ts.Active), Standby: conv(ts.Standby), Warmup: conv(ts.Warmup)}
}
