package server

// Fault injection for the group APIs that change state: the injected error
// is answered without doing the work (faults.go). JoinGroup, SyncGroup and
// Heartbeat have only a top-level error and need nothing here; LeaveGroup
// and DeleteGroups fail whole; OffsetCommit and OffsetDelete fail the
// partitions in the rule's scope and do the rest.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupWriteAPIs fail per partition or per group, before their work.
var groupWriteAPIs = map[int16]bool{
	8:  true, // OffsetCommit
	13: true, // LeaveGroup
	42: true, // DeleteGroups
	47: true, // OffsetDelete
}

// failGroups answers a LeaveGroup (nobody leaves) or DeleteGroups (no
// group is deleted) with r's error.
func failGroups(r *FaultRule, req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.LeaveGroupRequest:
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = r.code
		return resp
	case *kmsg.DeleteGroupsRequest:
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, id := range req.Groups {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group, g.ErrorCode = id, r.code
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}
	return nil
}

// failOffsetCommit commits the partitions outside r's scope.
func (cn *conn) failOffsetCommit(r *FaultRule, h handler, req *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	var failed []kmsg.OffsetCommitResponseTopic
	for _, rt := range req.Topics {
		kept := rt
		kept.Partitions = nil
		ft := kmsg.NewOffsetCommitResponseTopic()
		name := rt.Topic
		if req.Version >= 10 { // topics by id (offsets_topic_ids.go answers them with their names too)
			name = cn.b.c.topicIDName(rt.TopicID)
		}
		ft.Topic, ft.TopicID = name, rt.TopicID
		for _, rp := range rt.Partitions {
			if !r.inScope(faultScope{topic: name, partition: rp.Partition, hasTopic: true, hasPartition: true}) {
				kept.Partitions = append(kept.Partitions, rp)
				continue
			}
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, r.code
			ft.Partitions = append(ft.Partitions, sp)
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
		if len(ft.Partitions) > 0 {
			failed = append(failed, ft)
		}
	}
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	if len(rest.Topics) > 0 {
		served, err := h(cn, &rest)
		if err != nil {
			return nil, err
		}
		resp = served.(*kmsg.OffsetCommitResponse)
	}
	for _, ft := range failed {
		i := slices.IndexFunc(resp.Topics, func(t kmsg.OffsetCommitResponseTopic) bool { return t.Topic == ft.Topic && t.TopicID == ft.TopicID })
		if i < 0 {
			resp.Topics = append(resp.Topics, ft)
			continue
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, ft.Partitions...)
	}
	return resp, nil
}

// failOffsetDelete deletes the offsets of the partitions outside r's
// scope; without a scope the whole request fails with a group error.
func (cn *conn) failOffsetDelete(r *FaultRule, h handler, req *kmsg.OffsetDeleteRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if !r.filtered() {
		resp.ErrorCode = r.code
		return resp, nil
	}
	rest := *req
	rest.Topics = nil
	var failed []kmsg.OffsetDeleteResponseTopic
	for _, rt := range req.Topics {
		kept := rt
		kept.Partitions = nil
		ft := kmsg.OffsetDeleteResponseTopic{Topic: rt.Topic}
		for _, rp := range rt.Partitions {
			if !r.inScope(faultScope{topic: rt.Topic, partition: rp.Partition, hasTopic: true, hasPartition: true}) {
				kept.Partitions = append(kept.Partitions, rp)
				continue
			}
			ft.Partitions = append(ft.Partitions, kmsg.OffsetDeleteResponseTopicPartition{Partition: rp.Partition, ErrorCode: r.code})
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
		if len(ft.Partitions) > 0 {
			failed = append(failed, ft)
		}
	}
	if len(rest.Topics) > 0 {
		served, err := h(cn, &rest)
		if err != nil {
			return nil, err
		}
		resp = served.(*kmsg.OffsetDeleteResponse)
		if resp.ErrorCode != 0 {
			return resp, nil // a group error covers every partition
		}
	}
	for _, ft := range failed {
		i := slices.IndexFunc(resp.Topics, func(t kmsg.OffsetDeleteResponseTopic) bool { return t.Topic == ft.Topic })
		if i < 0 {
			resp.Topics = append(resp.Topics, ft)
			continue
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, ft.Partitions...)
	}
	return resp, nil
}
