package server

// Marker requests: in Kafka a transaction coordinator's
// TransactionMarkerChannelManager sends one WriteTxnMarkers request to each
// leader of the transaction's partitions (in parallel, as client
// "broker-<id>-txn-marker-sender"), the leader appends the markers with
// acks=-1 and answers once the ISR has them, and a partition answered with
// a retriable error (NOT_LEADER_OR_FOLLOWER, a lost connection) is sent
// again. fakekafka's coordinator writes the markers in-process, but groups
// them the same way, one request per leader, so that a fault rule on
// WriteTxnMarkers (broker, topic, partition, client id filters; delay,
// error, dropped connection, after work) applies to the coordinator's
// markers as it would to Kafka's requests: the way to make a transaction
// complete slowly, or to make its markers fail and be retried.

import (
	"fmt"
	"time"

	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// writeTxnMarkersKey is WriteTxnMarkers' API key.
const writeTxnMarkersKey = 27

// markerSenderClientID is the client id of coordinator broker's marker
// requests, as Kafka's TransactionMarkerChannelManager names its client.
func markerSenderClientID(coordinator int32) string {
	return fmt.Sprintf("broker-%d-txn-marker-sender", coordinator)
}

// markerRound sends m to each partition of parts as one request per
// current leader, the requests in parallel, and returns each partition's
// answer in parts' order. A partition without a live leader answers
// NOT_LEADER_OR_FOLLOWER (retried).
func (c *Cluster) markerRound(coordinator int32, parts []transaction.Partition, m txnMarker) []int16 {
	codes := make([]int16, len(parts))
	byLeader := map[int32][]int{} // leader -> indexes into parts
	var leaders []int32
	for i, tp := range parts {
		p := c.partition(tp.Topic, tp.Partition)
		if p == nil {
			codes[i] = kerr.UnknownTopicOrPartition.Code
			continue
		}
		p.mu.Lock()
		leader := p.st.Leader()
		p.mu.Unlock()
		if b := c.broker(leader); b == nil || !b.up.Load() {
			codes[i] = kerr.NotLeaderForPartition.Code
			continue
		}
		if byLeader[leader] == nil {
			leaders = append(leaders, leader)
		}
		byLeader[leader] = append(byLeader[leader], i)
	}
	send := func(leader int32) {
		idx := byLeader[leader]
		sub := make([]transaction.Partition, len(idx))
		for j, i := range idx {
			sub[j] = parts[i]
		}
		for j, code := range c.markerRequest(coordinator, leader, sub, m) {
			codes[idx[j]] = code
		}
	}
	if len(leaders) == 1 {
		send(leaders[0])
		return codes
	}
	done := make(chan struct{}, len(leaders))
	for _, leader := range leaders {
		go func() {
			defer func() { done <- struct{}{} }()
			send(leader)
		}()
	}
	for range leaders {
		<-done
	}
	return codes
}

// markerRequest is one WriteTxnMarkers request from coordinator to leader:
// the fault rule that fires on it (if any) delays or fails it, and
// otherwise each marker is appended as leader with acks=all. Answers come
// in parts' order.
func (c *Cluster) markerRequest(coordinator, leader int32, parts []transaction.Partition, m txnMarker) []int16 {
	codes := make([]int16, len(parts))
	write := func(i int) {
		p := c.partition(parts[i].Topic, parts[i].Partition)
		if p == nil {
			codes[i] = kerr.UnknownTopicOrPartition.Code
			return
		}
		codes[i] = c.appendMarker(p, leader, m)
	}
	r := c.fireMarkerFault(coordinator, leader, parts, m)
	if r == nil {
		for i := range parts {
			write(i)
		}
		return codes
	}
	inScope := func(i int) bool {
		return r.inScope(faultScope{topic: parts[i].Topic, partition: parts[i].Partition, hasTopic: true, hasPartition: true})
	}
	if r.f.AfterWork {
		for i := range parts {
			write(i)
		}
	}
	if !c.markerFaultDelay(r.f.Delay) {
		for i := range codes {
			codes[i] = kerr.RequestTimedOut.Code // closing: nobody reads it
		}
		return codes
	}
	for i := range parts {
		switch {
		case r.f.DropConnection:
			// The coordinator never learns what the leader did: it sends
			// every marker of the request again.
			codes[i] = kerr.NetworkException.Code
		case r.code != 0 && inScope(i):
			codes[i] = r.code
		case !r.f.AfterWork:
			write(i)
		}
	}
	return codes
}

// fireMarkerFault returns the first WriteTxnMarkers rule on leader that
// matches the coordinator's request for parts, and takes one of its hits.
// Only rules naming WriteTxnMarkers fire: a rule for every API means the
// requests of clients, and its hits stay theirs.
func (c *Cluster) fireMarkerFault(coordinator, leader int32, parts []transaction.Partition, m txnMarker) *FaultRule {
	b := c.broker(leader)
	if b == nil {
		return nil
	}
	rules := b.faults.Load()
	if rules == nil {
		return nil
	}
	var req *kmsg.WriteTxnMarkersRequest
	clientID := markerSenderClientID(coordinator)
	for _, r := range *rules {
		if r.key != writeTxnMarkersKey || r.f.ClientID != "" && r.f.ClientID != clientID {
			continue
		}
		if r.filtered() {
			if req == nil {
				req = markerRequestFor(parts, m)
			}
			if !c.mentions(req, r) {
				continue
			}
		}
		hits, ok := r.take()
		if !ok {
			continue
		}
		c.log.Info("fault fired", "fault", r.id, "api", "WriteTxnMarkers", "broker", leader, "client", clientID,
			"error", r.f.Error, "delay", r.f.Delay, "drop_connection", r.f.DropConnection, "after_work", r.f.AfterWork, "hits", hits)
		c.emitFaultHit(r, leader, writeTxnMarkersKey, hits)
		return r
	}
	return nil
}

// markerRequestFor is the WriteTxnMarkers request Kafka's coordinator
// would send for m to parts, for matching fault rules.
func markerRequestFor(parts []transaction.Partition, m txnMarker) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	rm := kmsg.NewWriteTxnMarkersRequestMarker()
	rm.ProducerID, rm.ProducerEpoch, rm.Committed, rm.CoordinatorEpoch, rm.TransactionVersion = m.producerID, m.epoch, m.commit, m.coordEpoch, m.txnVersion
	for _, tp := range parts {
		if n := len(rm.Topics); n == 0 || rm.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			rt.Topic = tp.Topic
			rm.Topics = append(rm.Topics, rt)
		}
		rt := &rm.Topics[len(rm.Topics)-1]
		rt.Partitions = append(rt.Partitions, tp.Partition)
	}
	req.Markers = append(req.Markers, rm)
	return req
}

// markerFaultDelay waits d on the cluster's clock; false when the cluster
// closes first.
func (c *Cluster) markerFaultDelay(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.closing:
		return false
	}
}

// failWriteTxnMarkers answers r's error for the partitions in its scope of
// a WriteTxnMarkers request on the wire, without writing their markers,
// and serves the rest.
func (cn *conn) failWriteTxnMarkers(r *FaultRule, h handler, req *kmsg.WriteTxnMarkersRequest) (kmsg.Response, error) {
	rest := *req
	rest.Markers = make([]kmsg.WriteTxnMarkersRequestMarker, len(req.Markers))
	failed := make([][][]int32, len(req.Markers)) // marker -> topic -> partitions
	for i, m := range req.Markers {
		kept := m
		kept.Topics = make([]kmsg.WriteTxnMarkersRequestMarkerTopic, len(m.Topics))
		failed[i] = make([][]int32, len(m.Topics))
		for j, t := range m.Topics {
			kt := t
			kt.Partitions = nil
			for _, p := range t.Partitions {
				if r.inScope(faultScope{topic: t.Topic, partition: p, hasTopic: true, hasPartition: true}) {
					failed[i][j] = append(failed[i][j], p)
				} else {
					kt.Partitions = append(kt.Partitions, p)
				}
			}
			kept.Topics[j] = kt
		}
		rest.Markers[i] = kept
	}
	resp, err := h(cn, &rest)
	if err != nil {
		return nil, err
	}
	wr := resp.(*kmsg.WriteTxnMarkersResponse)
	for i := range wr.Markers {
		for j := range wr.Markers[i].Topics {
			for _, p := range failed[i][j] {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, r.code
				wr.Markers[i].Topics[j].Partitions = append(wr.Markers[i].Topics[j].Partitions, rp)
			}
		}
	}
	return wr, nil
}
