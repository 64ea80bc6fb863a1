package server

import (
	"reflect"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// How a fault rule fails a request: the mode of each API (before or after
// its work) and the per-API answers that carry the injected error.

// faultMode is how an API fails without doing its work.
type faultMode int

const (
	faultSplit         faultMode = iota // typed: serve the rest, add the errors
	faultTopLevel                       // answer with the top-level error code only
	faultOverwrite                      // read-only: serve, then write the errors over the answer
	faultAfterWorkOnly                  // cannot: an error needs AfterWork
)

// readOnlyAPIs change nothing, so serving them and overwriting the answer
// is as good as not serving them.
var readOnlyAPIs = map[int16]bool{
	2:  true, // ListOffsets
	3:  true, // Metadata (auto-creation aside)
	9:  true, // OffsetFetch
	10: true, // FindCoordinator
	15: true, // DescribeGroups
	16: true, // ListGroups
	23: true, // OffsetForLeaderEpoch
	29: true, // DescribeAcls
	32: true, // DescribeConfigs
	35: true, // DescribeLogDirs
	46: true, // ListPartitionReassignments
	48: true, // DescribeClientQuotas
	60: true, // DescribeCluster
	61: true, // DescribeProducers
	65: true, // DescribeTransactions
	66: true, // ListTransactions
	75: true, // DescribeTopicPartitions
}

func faultModeFor(key int16) faultMode {
	switch {
	case key == 0 || key == 1 || key == 19 || key == 20 || key == 21 || key == writeTxnMarkersKey || groupWriteAPIs[key] || adminSplitAPIs[key]:
		return faultSplit
	case topLevelErrorOnly(reflect.TypeOf(kmsg.ResponseForKey(key)).Elem()):
		return faultTopLevel
	case readOnlyAPIs[key]:
		return faultOverwrite
	}
	return faultAfterWorkOnly
}

// failBeforeWork answers req with r's error on its matching part and
// serves the rest.
func (cn *conn) failBeforeWork(r *FaultRule, h handler, req kmsg.Request) (kmsg.Response, error) {
	c := cn.b.c
	switch req := req.(type) {
	case *kmsg.ProduceRequest:
		return cn.failProduce(r, h, req)
	case *kmsg.FetchRequest:
		return cn.failFetch(r, h, req)
	case *kmsg.CreateTopicsRequest:
		return cn.failCreateTopics(r, h, req)
	case *kmsg.DeleteTopicsRequest:
		return cn.failDeleteTopics(r, h, req)
	case *kmsg.DeleteRecordsRequest:
		return cn.failDeleteRecords(r, h, req)
	case *kmsg.CreatePartitionsRequest:
		return cn.failCreatePartitions(r, h, req)
	case *kmsg.AlterPartitionAssignmentsRequest:
		return cn.failAlterPartitionReassignments(r, h, req)
	case *kmsg.OffsetCommitRequest:
		return cn.failOffsetCommit(r, h, req)
	case *kmsg.OffsetDeleteRequest:
		return cn.failOffsetDelete(r, h, req)
	case *kmsg.LeaveGroupRequest, *kmsg.DeleteGroupsRequest:
		return failGroups(r, req), nil
	case *kmsg.WriteTxnMarkersRequest:
		return cn.failWriteTxnMarkers(r, h, req)
	}
	switch faultModeFor(req.Key()) {
	case faultTopLevel:
		resp := req.ResponseKind()
		c.setFaultErrors(resp, r)
		return resp, nil
	case faultOverwrite:
		resp, err := h(cn, req)
		if err == nil && resp != nil {
			c.setFaultErrors(resp, r)
		}
		return resp, err
	}
	// InjectFault refuses this; serve the request rather than guess.
	return h(cn, req)
}

func (r *FaultRule) message() *string {
	msg := "injected by fakekafka fault " + r.id
	return &msg
}

// failProduce appends the partitions outside r's scope and answers r's
// error for the others.
func (cn *conn) failProduce(r *FaultRule, h handler, req *kmsg.ProduceRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	failed := map[string][]int32{}
	ids := map[string][16]byte{} // v13 names topics by id
	var order []string
	for _, rt := range req.Topics {
		kept := rt
		kept.Partitions = nil
		_, name, _ := cn.b.c.produceTopic(req.Version, rt.Topic, rt.TopicID)
		for _, rp := range rt.Partitions {
			if !r.inScope(faultScope{topic: name, partition: rp.Partition, hasTopic: name != "", hasPartition: true}) {
				kept.Partitions = append(kept.Partitions, rp)
				continue
			}
			if failed[name] == nil {
				order = append(order, name)
			}
			failed[name] = append(failed[name], rp.Partition)
			ids[name] = rt.TopicID
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	if resp == nil { // acks=0: a failed partition closes the connection
		return nil, errCloseConn
	}
	pr := resp.(*kmsg.ProduceResponse)
	for _, name := range order {
		i := slices.IndexFunc(pr.Topics, func(t kmsg.ProduceResponseTopic) bool { return t.Topic == name })
		if i < 0 {
			t := kmsg.NewProduceResponseTopic()
			t.Topic, t.TopicID = name, ids[name]
			pr.Topics = append(pr.Topics, t)
			i = len(pr.Topics) - 1
		}
		for _, p := range failed[name] {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.BaseOffset = p, r.code, -1
			if req.Version >= 8 {
				sp.ErrorMessage = r.message()
			}
			pr.Topics[i].Partitions = append(pr.Topics[i].Partitions, sp)
		}
	}
	return pr, nil
}

// failFetch reads the partitions outside r's scope and answers r's error
// for the others, at once: a partition with an error ends a long poll.
func (cn *conn) failFetch(r *FaultRule, h handler, req *kmsg.FetchRequest) (kmsg.Response, error) {
	c := cn.b.c
	rest := *req
	rest.Topics = nil
	type failedTopic struct {
		rt         kmsg.FetchRequestTopic
		partitions []int32
	}
	var failed []failedTopic
	for _, rt := range req.Topics {
		name := rt.Topic
		if req.Version >= 13 {
			name = ""
			if t := c.topicByID(rt.TopicID); t != nil {
				name = t.name
			}
		}
		kept := rt
		kept.Partitions = nil
		ft := failedTopic{rt: rt}
		for _, rp := range rt.Partitions {
			if r.inScope(faultScope{topic: name, partition: rp.Partition, hasTopic: name != "", hasPartition: true}) {
				ft.partitions = append(ft.partitions, rp.Partition)
			} else {
				kept.Partitions = append(kept.Partitions, rp)
			}
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
		if len(ft.partitions) > 0 {
			failed = append(failed, ft)
		}
	}
	if len(failed) > 0 {
		rest.MaxWaitMillis = 0
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	fr := resp.(*kmsg.FetchResponse)
	if !r.filtered() {
		fr.ErrorCode = r.code
	}
	for _, ft := range failed {
		i := slices.IndexFunc(fr.Topics, func(t kmsg.FetchResponseTopic) bool {
			return t.Topic == ft.rt.Topic && t.TopicID == ft.rt.TopicID
		})
		if i < 0 {
			t := kmsg.NewFetchResponseTopic()
			t.Topic, t.TopicID = ft.rt.Topic, ft.rt.TopicID
			fr.Topics = append(fr.Topics, t)
			i = len(fr.Topics) - 1
		}
		for _, p := range ft.partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition, sp.ErrorCode = p, r.code
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			sp.RecordBatches = []byte{} // empty, never null: librdkafka rejects null
			fr.Topics[i].Partitions = append(fr.Topics[i].Partitions, sp)
		}
	}
	return fr, nil
}

// failCreateTopics creates the topics outside r's scope.
func (cn *conn) failCreateTopics(r *FaultRule, h handler, req *kmsg.CreateTopicsRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	var failed []string
	for _, rt := range req.Topics {
		if r.inScope(faultScope{topic: rt.Topic, hasTopic: true}) {
			failed = append(failed, rt.Topic)
		} else {
			rest.Topics = append(rest.Topics, rt)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	cr := resp.(*kmsg.CreateTopicsResponse)
	for _, name := range failed {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.ErrorCode, st.ErrorMessage = name, r.code, r.message()
		cr.Topics = append(cr.Topics, st)
	}
	return cr, nil
}

// failDeleteRecords deletes records from the partitions outside r's scope.
func (cn *conn) failDeleteRecords(r *FaultRule, h handler, req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	var failed []kmsg.DeleteRecordsResponseTopic
	for _, rt := range req.Topics {
		kept := rt
		kept.Partitions = nil
		ft := kmsg.NewDeleteRecordsResponseTopic()
		ft.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			if !r.inScope(faultScope{topic: rt.Topic, partition: rp.Partition, hasTopic: true, hasPartition: true}) {
				kept.Partitions = append(kept.Partitions, rp)
				continue
			}
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark, sp.ErrorCode = rp.Partition, -1, r.code
			ft.Partitions = append(ft.Partitions, sp)
		}
		if len(kept.Partitions) > 0 {
			rest.Topics = append(rest.Topics, kept)
		}
		if len(ft.Partitions) > 0 {
			failed = append(failed, ft)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	dr := resp.(*kmsg.DeleteRecordsResponse)
	for _, ft := range failed {
		i := slices.IndexFunc(dr.Topics, func(t kmsg.DeleteRecordsResponseTopic) bool { return t.Topic == ft.Topic })
		if i < 0 {
			dr.Topics = append(dr.Topics, ft)
			continue
		}
		dr.Topics[i].Partitions = append(dr.Topics[i].Partitions, ft.Partitions...)
	}
	return dr, nil
}

// failDeleteTopics deletes the topics outside r's scope.
func (cn *conn) failDeleteTopics(r *FaultRule, h handler, req *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
	c := cn.b.c
	rest := *req
	rest.TopicNames, rest.Topics = nil, nil
	var failed []kmsg.DeleteTopicsResponseTopic
	fail := func(name string, id [16]byte) {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID, st.ErrorCode, st.ErrorMessage = &name, id, r.code, r.message()
		failed = append(failed, st)
	}
	for _, name := range req.TopicNames {
		if r.inScope(faultScope{topic: name, hasTopic: true}) {
			fail(name, [16]byte{})
		} else {
			rest.TopicNames = append(rest.TopicNames, name)
		}
	}
	for _, rt := range req.Topics {
		s := c.topicScope(rt.Topic, rt.TopicID)
		if r.inScope(s) {
			id := rt.TopicID
			if t := c.topic(s.topic); t != nil && id == ([16]byte{}) {
				id = t.id
			}
			fail(s.topic, id)
		} else {
			rest.Topics = append(rest.Topics, rt)
		}
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	dr := resp.(*kmsg.DeleteTopicsResponse)
	dr.Topics = append(dr.Topics, failed...)
	return dr, nil
}
