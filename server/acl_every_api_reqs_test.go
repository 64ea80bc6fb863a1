package server

// The requests and answer readers the rows of TestACLEveryAPI share.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func fetchReq(e *aclEnv) kmsg.Request {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 0, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "t", e.topicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = 1<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func configReq(typ kmsg.ConfigResourceType, name string) kmsg.Request {
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	req.Resources = append(req.Resources, rr)
	return req
}

func incrementalAlterReq(typ kmsg.ConfigResourceType, name, key, value string) kmsg.Request {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = true
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	rc.Name, rc.Value = key, &value
	rr.Configs = append(rr.Configs, rc)
	req.Resources = append(req.Resources, rr)
	return req
}

func alterConfigsReq(typ kmsg.ConfigResourceType, name, key, value string) kmsg.Request {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly = true
	rr := kmsg.NewAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	rc := kmsg.NewAlterConfigsRequestResourceConfig()
	rc.Name, rc.Value = key, &value
	rr.Configs = append(rr.Configs, rc)
	req.Resources = append(req.Resources, rr)
	return req
}

func addPartitionsV3Req(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = "x", 1, 0
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	req.Topics = append(req.Topics, rt)
	return req
}

func addPartitionsV3Code(r kmsg.Response) int16 {
	return r.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
}

func txnOffsetCommitReq(e *aclEnv) kmsg.Request {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "x", "g", 1, 0, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.LeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return withTopicIDs(e.c, req)
}

func txnOffsetCommitCode(r kmsg.Response) int16 {
	return r.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

func offsetDeleteReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = "g"
	rt := kmsg.NewOffsetDeleteRequestTopic()
	rt.Topic = "t"
	rt.Partitions = append(rt.Partitions, kmsg.NewOffsetDeleteRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	return req
}

func consumerHeartbeatReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.RebalanceTimeoutMillis = "g", "authz-member-0000000001", 10000
	req.SubscribedTopicNames = []string{"t"}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	return req
}

func listedGroup(r kmsg.Response) int16 {
	for _, g := range r.(*kmsg.ListGroupsResponse).Groups {
		if g.Group == "g" {
			return 0
		}
	}
	return leftOut
}

func createTopicsReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.ValidateOnly = true
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "new", 1, 1
	req.Topics = append(req.Topics, rt)
	return req
}

func createTopicsCode(r kmsg.Response) int16 {
	return r.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
}

func addOffsetsReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.Group = "x", 1, "g"
	return req
}

func addOffsetsCode(r kmsg.Response) int16 { return r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode }

func describeConfigsCode(r kmsg.Response) int16 {
	return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode
}

func incrementalAlterCode(r kmsg.Response) int16 {
	return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
}

func offsetDeleteCode(r kmsg.Response) int16 {
	resp := r.(*kmsg.OffsetDeleteResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) == 0 {
		return resp.ErrorCode
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

func consumerHeartbeatCode(r kmsg.Response) int16 {
	return r.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode
}

func writeTxnMarkersReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID = 1
	rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	m.Topics = append(m.Topics, rt)
	req.Markers = append(req.Markers, m)
	return req
}

func writeTxnMarkersCode(r kmsg.Response) int16 {
	return r.(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
}

func deleteTopicsReq(*aclEnv) kmsg.Request {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{"t"}
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr("t")
	req.Topics = append(req.Topics, rt)
	return req
}

func deleteTopicsCode(r kmsg.Response) int16 {
	return r.(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode
}
