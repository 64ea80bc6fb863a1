package server

import "github.com/twmb/franz-go/pkg/kmsg"

// Fault rules on the admin write APIs fail the topics or partitions in
// their scope before any work, and serve the rest.

// adminSplitAPIs fail per topic or partition without doing their work:
// CreatePartitions and AlterPartitionReassignments.
var adminSplitAPIs = map[int16]bool{37: true, 45: true}

// failCreatePartitions grows the topics outside r's scope.
func (cn *conn) failCreatePartitions(r *FaultRule, h handler, req *kmsg.CreatePartitionsRequest) (kmsg.Response, error) {
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
	cr := resp.(*kmsg.CreatePartitionsResponse)
	for _, name := range failed {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic, st.ErrorCode, st.ErrorMessage = name, r.code, r.message()
		cr.Topics = append(cr.Topics, st)
	}
	return cr, nil
}

// failAlterPartitionReassignments reassigns the partitions outside r's
// scope; those in it answer r's error and keep their replicas.
func (cn *conn) failAlterPartitionReassignments(r *FaultRule, h handler, req *kmsg.AlterPartitionAssignmentsRequest) (kmsg.Response, error) {
	rest := *req
	rest.Topics = nil
	var failed []kmsg.AlterPartitionAssignmentsResponseTopic
	for _, rt := range req.Topics {
		kept := rt
		kept.Partitions = nil
		ft := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		ft.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			if !r.inScope(faultScope{topic: rt.Topic, partition: rp.Partition, hasTopic: true, hasPartition: true}) {
				kept.Partitions = append(kept.Partitions, rp)
				continue
			}
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.ErrorMessage = rp.Partition, r.code, r.message()
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
	ar := resp.(*kmsg.AlterPartitionAssignmentsResponse)
	ar.Topics = append(ar.Topics, failed...)
	return ar, nil
}
