package server

// The share-group offset admin APIs of KIP-932 at Kafka 4.4's versions:
// DescribeShareGroupOffsets (90, v0-1), AlterShareGroupOffsets (91, v0),
// DeleteShareGroupOffsets (92, v0). A share group's "offset" of a
// partition is its share partition's start offset, kept by the share
// coordinator (share_coordinator.go); these go to the group's coordinator,
// which reads and writes it through the persister.
//
// Describe: per group (DESCRIBE on it, else GROUP_AUTHORIZATION_FAILED),
// the start offset, leader epoch and (v1) lag of each partition asked for,
// or of every initialized one when topics is null (then only on the
// group's coordinator: NOT_COORDINATOR elsewhere). Lag is the partition's
// latest offset minus the start offset minus the records past it whose
// delivery is complete; -1 when that count (or the start offset) is
// unknown. A topic that does not exist answers start offset -1 with a zero
// topic id; a partition without state start offset -1; errors of the
// share coordinator are not passed on (start offset -1, lag -1), as in
// Kafka 4.4.
//
// Alter: only while the share group is empty (NON_EMPTY_GROUP otherwise);
// a group that does not exist is made by it; each partition's state is
// initialized at the given start offset with the group's epoch as state
// epoch. Delete: deletes the state of each topic's initialized partitions
// of an empty, existing share group (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP).

import (
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareGroupCoordinatorHere answers 0 when this broker coordinates group,
// else the error a group coordinator's runtime answers.
func (cn *conn) shareGroupCoordinatorHere(group string) int16 {
	id, code := cn.b.c.coordinatorOf(group)
	switch {
	case code != 0:
		return code
	case id != cn.b.id:
		return kerr.NotCoordinator.Code
	}
	return 0
}

func (cn *conn) handleDescribeShareGroupOffsets(req *kmsg.DescribeShareGroupOffsetsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	for _, rg := range req.Groups {
		resp.Groups = append(resp.Groups, cn.describeShareGroupOffsets(rg))
	}
	return resp, nil
}

func (cn *conn) describeShareGroupOffsets(rg kmsg.DescribeShareGroupOffsetsRequestGroup) kmsg.DescribeShareGroupOffsetsResponseGroup {
	c := cn.b.c
	g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
	g.GroupID = rg.GroupID
	if !cn.allowedGroup(authorizer.OpDescribe, rg.GroupID) {
		g.ErrorCode = errGroupAuth
		return g
	}
	type want struct {
		name  string
		id    [16]byte
		parts []int32
	}
	var wants []want
	var missing, denied []kmsg.DescribeShareGroupOffsetsResponseGroupTopic
	if rg.Topics == nil {
		if code := cn.shareGroupCoordinatorHere(rg.GroupID); code != 0 {
			g.ErrorCode, g.ErrorMessage = code, kmsg.StringPtr(share.ErrorMessage(code))
			return g
		}
		for id, parts := range c.shareGroupInitialized(rg.GroupID) {
			t := c.topicByID(id)
			if t == nil || t.deleted.Load() || !cn.allowedQuiet(authorizer.OpDescribe, authorizer.ResourceTopic, t.name) {
				continue
			}
			wants = append(wants, want{t.name, id, parts})
		}
		sortWants := func(a, b want) int {
			if a.name < b.name {
				return -1
			}
			if a.name > b.name {
				return 1
			}
			return 0
		}
		slices.SortFunc(wants, sortWants)
	}
	for _, rt := range rg.Topics {
		if !cn.allowedTopic(authorizer.OpDescribe, rt.Topic) {
			dt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			dt.Topic = rt.Topic
			for _, p := range rt.Partitions {
				dp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				dp.Partition, dp.StartOffset, dp.Lag = p, -1, -1
				dp.ErrorCode, dp.ErrorMessage = kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr(kerr.TopicAuthorizationFailed.Description)
				dt.Partitions = append(dt.Partitions, dp)
			}
			denied = append(denied, dt)
			continue
		}
		t := c.topic(rt.Topic)
		if t == nil || t.deleted.Load() {
			mt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			mt.Topic = rt.Topic
			for _, p := range rt.Partitions {
				mp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				mp.Partition, mp.StartOffset = p, -1
				mt.Partitions = append(mt.Partitions, mp)
			}
			missing = append(missing, mt)
			continue
		}
		wants = append(wants, want{rt.Topic, t.id, rt.Partitions})
	}
	for _, w := range wants {
		dt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
		dt.Topic, dt.TopicID = w.name, w.id
		for _, p := range w.parts {
			dt.Partitions = append(dt.Partitions, cn.describeSharePartition(rg.GroupID, w.name, w.id, p))
		}
		g.Topics = append(g.Topics, dt)
	}
	g.Topics = append(append(g.Topics, missing...), denied...)
	return g
}

// describeSharePartition is one partition of a DescribeShareGroupOffsets
// answer: its state summary and lag.
func (cn *conn) describeSharePartition(group, topic string, id [16]byte, partition int32) kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition {
	c := cn.b.c
	dp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
	dp.Partition, dp.Lag = partition, -1
	r := c.sc.persister.readSummary(share.Key{Group: group, TopicID: id, Partition: partition})
	o := r.Offset
	if r.Code != 0 || o.StartOffset == -1 || o.DeliveryCompleteCount == -1 {
		dp.StartOffset = -1
		if r.Code == 0 {
			dp.StartOffset, dp.LeaderEpoch = o.StartOffset, o.LeaderEpoch
		}
		return dp
	}
	latest, code := c.shareLatestOffset(topic, partition)
	if code != 0 {
		dp.ErrorCode, dp.ErrorMessage = code, kmsg.StringPtr(share.ErrorMessage(code))
		return dp
	}
	dp.StartOffset, dp.LeaderEpoch = o.StartOffset, o.LeaderEpoch
	dp.Lag = latest - o.StartOffset - int64(o.DeliveryCompleteCount)
	return dp
}

// shareLatestOffset is a partition's latest offset as ListOffsets LATEST
// answers it (the high watermark), or the error.
func (c *Cluster) shareLatestOffset(topic string, partition int32) (int64, int16) {
	ps, ok := c.Partition(topic, partition)
	switch {
	case !ok:
		return 0, kerr.UnknownTopicOrPartition.Code
	case ps.Leader < 0:
		return 0, kerr.LeaderNotAvailable.Code
	}
	return ps.HighWatermark, 0
}

func (cn *conn) handleAlterShareGroupOffsets(req *kmsg.AlterShareGroupOffsetsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	topErr := func(code int16, msg string) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage, resp.Topics = code, kmsg.StringPtr(msg), nil
		return resp, nil
	}
	if !cn.allowedGroup(authorizer.OpRead, req.GroupID) {
		return topErr(errGroupAuth, kerr.GroupAuthorizationFailed.Description)
	}
	// The broker's checks first: topics not to be read, or unknown.
	var checked []kmsg.AlterShareGroupOffsetsRequestTopic
	for _, rt := range req.Topics {
		code := int16(0)
		switch t := c.topic(rt.Topic); {
		case !cn.allowedTopic(authorizer.OpRead, rt.Topic):
			code = kerr.TopicAuthorizationFailed.Code
		case t == nil || t.deleted.Load():
			code = kerr.UnknownTopicOrPartition.Code
		}
		if code == 0 {
			checked = append(checked, rt)
			continue
		}
		at := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		at.Topic = rt.Topic
		for _, p := range rt.Partitions {
			at.Partitions = append(at.Partitions, alterSharePartition(p.Partition, code))
		}
		resp.Topics = append(resp.Topics, at)
	}
	if code := cn.shareGroupCoordinatorHere(req.GroupID); code != 0 {
		return topErr(code, share.ErrorMessage(code))
	}
	if req.GroupID == "" {
		return topErr(kerr.InvalidGroupID.Code, kerr.InvalidGroupID.Description)
	}
	epoch, code, msg := c.shareGroupForAlter(cn.b.id, req.GroupID, false)
	if code != 0 {
		return topErr(code, msg)
	}
	for _, rt := range checked {
		t := c.topic(rt.Topic)
		n := int32(len(t.partitions()))
		at := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		at.Topic, at.TopicID = rt.Topic, t.id
		for _, p := range rt.Partitions {
			if p.Partition < 0 || p.Partition >= n {
				at.Partitions = append(at.Partitions, alterSharePartition(p.Partition, kerr.UnknownTopicOrPartition.Code))
				continue
			}
			ap := alterSharePartition(p.Partition, 0)
			k := share.Key{Group: req.GroupID, TopicID: t.id, Partition: p.Partition}
			if r := c.sc.persister.call(k, func(b int32) share.Result { return c.shareInitialize(b, k, epoch, p.StartOffset) }); r.Code != 0 {
				ap.ErrorCode, ap.ErrorMessage = r.Code, r.Message
			}
			at.Partitions = append(at.Partitions, ap)
		}
		resp.Topics = append(resp.Topics, at)
	}
	return resp, nil
}

func alterSharePartition(partition int32, code int16) kmsg.AlterShareGroupOffsetsResponseTopicPartition {
	ap := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
	ap.Partition, ap.ErrorCode = partition, code
	if code != 0 {
		ap.ErrorMessage = kmsg.StringPtr(share.ErrorMessage(code))
	}
	return ap
}

func (cn *conn) handleDeleteShareGroupOffsets(req *kmsg.DeleteShareGroupOffsetsRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	topErr := func(code int16, msg string) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage, resp.Topics = code, kmsg.StringPtr(msg), nil
		return resp, nil
	}
	if !cn.allowedGroup(authorizer.OpDelete, req.GroupID) {
		return topErr(errGroupAuth, kerr.GroupAuthorizationFailed.Description)
	}
	var denied []kmsg.DeleteShareGroupOffsetsResponseTopic
	var allowed []string
	for _, rt := range req.Topics {
		if cn.allowedTopic(authorizer.OpRead, rt.Topic) {
			allowed = append(allowed, rt.Topic)
			continue
		}
		denied = append(denied, deleteShareTopic(rt.Topic, [16]byte{}, kerr.TopicAuthorizationFailed.Code, ""))
	}
	if code := cn.shareGroupCoordinatorHere(req.GroupID); code != 0 {
		return topErr(code, share.ErrorMessage(code))
	}
	if req.GroupID == "" {
		return topErr(kerr.InvalidGroupID.Code, kerr.InvalidGroupID.Description)
	}
	if _, code, msg := c.shareGroupForAlter(cn.b.id, req.GroupID, true); code != 0 {
		return topErr(code, msg)
	}
	initialized := c.shareGroupInitialized(req.GroupID)
	var done, failed []kmsg.DeleteShareGroupOffsetsResponseTopic
	for _, name := range allowed {
		t := c.topic(name)
		if t == nil || t.deleted.Load() {
			failed = append(failed, deleteShareTopic(name, [16]byte{}, kerr.UnknownTopicOrPartition.Code, ""))
			continue
		}
		parts, ok := initialized[t.id]
		if !ok {
			failed = append(failed, deleteShareTopic(name, [16]byte{}, kerr.UnknownTopicOrPartition.Code, "There is no offset information to delete."))
			continue
		}
		code := int16(0)
		for _, p := range parts {
			if code = c.sc.persister.Delete(share.Key{Group: req.GroupID, TopicID: t.id, Partition: p}); code != 0 {
				break
			}
		}
		if code != 0 {
			failed = append(failed, deleteShareTopic(name, t.id, code, ""))
			continue
		}
		done = append(done, deleteShareTopic(name, t.id, 0, ""))
	}
	resp.Topics = append(append(denied, done...), failed...)
	return resp, nil
}

// deleteShareTopic is one topic of a DeleteShareGroupOffsets answer; msg
// "" is the error's own message.
func deleteShareTopic(name string, id [16]byte, code int16, msg string) kmsg.DeleteShareGroupOffsetsResponseTopic {
	dt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
	dt.Topic, dt.TopicID, dt.ErrorCode = name, id, code
	if code != 0 {
		if msg == "" {
			msg = share.ErrorMessage(code)
		}
		dt.ErrorMessage = &msg
	}
	return dt
}
