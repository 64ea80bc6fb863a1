package server

// Fetch, versions 4-17 (topic IDs from v13), for consumers.
//
// A consumer reads up to the serving replica's HW, never past it; with
// isolation_level read_committed up to its last stable offset, with the
// aborted transactions of the returned range (sorted by first offset) so
// the consumer drops their records. read_uncommitted gets no aborted list. On v11+
// any replica of the partition serves (up to its own HW, which trails the
// leader's); older versions need the leader. Per partition: unknown topic
// (UNKNOWN_TOPIC_ID by id), current_leader_epoch (FENCED_LEADER_EPOCH /
// UNKNOWN_LEADER_EPOCH), not a replica or not the leader
// (NOT_LEADER_OR_FOLLOWER with the KIP-951 leader on v12+), then
// OFFSET_OUT_OF_RANGE below the log start or past the LEO. An offset in
// [HW, LEO] gets no records and no error.
//
// max_bytes and partition_max_bytes bound the response, but the first batch
// found is always returned whole so a consumer never stalls (KIP-74). With
// too little data the request long-polls: it waits for any change of its
// partitions (so it wakes when a HW moves, not on a bare append) until
// min_bytes is reached, an error appears or max_wait passes: on the
// cluster's clock, or on the wall clock if that comes first (so that a
// manual clock does not hold idle consumers).
//
// Fetch sessions are not kept: every response carries session id 0, which
// makes clients send full fetches (allowed by KIP-227). A replica id >= 0
// is a follower we do not know: UNKNOWN_LEADER_EPOCH if it sent an epoch,
// else NOT_LEADER_OR_FOLLOWER, as Kafka answers an unknown follower.
//
// With the authorizer a topic needs READ (TOPIC_AUTHORIZATION_FAILED,
// checked before the topic's existence).

import (
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleFetch(req *kmsg.FetchRequest) (kmsg.Response, error) {
	resp, err := cn.fetch(req)
	if fr, ok := resp.(*kmsg.FetchResponse); ok && err == nil && fr.ErrorCode == 0 {
		cn.throttleFetch(fr) // consumer_byte_rate (quotas.go)
	}
	return resp, err
}

func (cn *conn) fetch(req *kmsg.FetchRequest) (kmsg.Response, error) {
	c := cn.b.c
	if req.SessionID != 0 {
		// We never hand out sessions, so any id is unknown.
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp, nil
	}
	resp, bytes, stop := cn.readFetch(req)
	if stop || req.MaxWaitMillis <= 0 || bytes >= int(req.MinBytes) {
		return resp, nil
	}

	wake := make(chan struct{}, 1)
	watched := cn.watchFetch(req, wake)
	defer func() {
		for _, p := range watched {
			p.unwatch(wake)
		}
	}()
	maxWait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	timer := c.cfg.Clock.NewTimer(maxWait)
	defer timer.Stop()
	// The same wait on the wall clock also ends it: an empty answer changes
	// nothing in the cluster, and a manual clock must not hold an idle
	// consumer's fetch (and the rebalance or close waiting on it) forever.
	wall := time.NewTimer(maxWait)
	defer wall.Stop()
	for {
		// Re-read after registering so no change between the first read and
		// the registration is missed.
		resp, bytes, stop = cn.readFetch(req)
		if stop || bytes >= int(req.MinBytes) {
			return resp, nil
		}
		// Every way out of the wait reads again: the records gathered
		// for this answer go back to the pools while it waits.
		cn.fetchSpace.release()
		cn.parkBegin() // a delayed fetch: no handler time
		select {
		case <-wake:
			cn.parkEnd()
		case <-timer.C:
			resp, _, _ = cn.readFetch(req)
			return resp, nil
		case <-wall.C:
			resp, _, _ = cn.readFetch(req)
			return resp, nil
		case <-cn.closed:
			return nil, errCloseConn
		case <-c.closing:
			return nil, errCloseConn
		}
	}
}

// fetchTopic resolves a request topic by name (v0-12) or id (v13+).
func (cn *conn) fetchTopic(version int16, rt *kmsg.FetchRequestTopic) (*topic, int16) {
	c := cn.b.c
	if version >= 13 {
		if t := c.topicByID(rt.TopicID); t != nil {
			if !cn.allowedTopic(authorizer.OpRead, t.name) {
				return nil, errTopicAuth
			}
			return t, 0
		}
		return nil, kerr.UnknownTopicID.Code
	}
	if !cn.allowedTopic(authorizer.OpRead, rt.Topic) {
		return nil, errTopicAuth // before existence: Kafka discloses nothing
	}
	if t := c.topic(rt.Topic); t != nil {
		return t, 0
	}
	return nil, kerr.UnknownTopicOrPartition.Code
}

func (cn *conn) watchFetch(req *kmsg.FetchRequest, wake chan struct{}) []*partition {
	var out []*partition
	for i := range req.Topics {
		t, code := cn.fetchTopic(req.Version, &req.Topics[i])
		if code != 0 {
			continue
		}
		for _, rp := range req.Topics[i].Partitions {
			if rp.Partition >= 0 && int(rp.Partition) < len(t.partitions()) {
				p := t.partitions()[rp.Partition]
				p.mu.Lock()
				p.watch(wake)
				p.mu.Unlock()
				out = append(out, p)
			}
		}
	}
	return out
}

// readFetch builds a complete response from the current state. stop is
// true when the response must go out at once (some partition errored).
func (cn *conn) readFetch(req *kmsg.FetchRequest) (resp *kmsg.FetchResponse, bytes int, stop bool) {
	c := cn.b.c
	resp = req.ResponseKind().(*kmsg.FetchResponse)
	replicaID := req.ReplicaID
	if req.Version >= 15 {
		replicaID = req.ReplicaState.ID
	}
	remaining := int64(req.MaxBytes)
	if req.Version < 3 || remaining <= 0 {
		remaining = int64(^uint32(0) >> 1)
	}
	if quotaCap := cn.fetchQuotaCap(); quotaCap >= 0 {
		remaining = min(remaining, int64(quotaCap)) // one answer never throttles alone
	}
	leaders := map[int32]bool{}
	cn.fetchSpace.release() // a re-read replaces the response built before
	resp.Topics = make([]kmsg.FetchResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := &resp.Topics[i]
		*st = kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		t, topicCode := cn.fetchTopic(req.Version, rt)
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := &st.Partitions[j]
			*sp = kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			// Kafka always sends a records field, empty when there is
			// nothing: librdkafka cannot parse a null one.
			sp.RecordBatches = []byte{}
			code := topicCode
			if code == 0 && (rp.Partition < 0 || int(rp.Partition) >= len(t.partitions())) {
				code = kerr.UnknownTopicOrPartition.Code
			}
			if code != 0 {
				// Kafka answers an unknown topic or partition with an empty,
				// not null, list of aborted transactions.
				sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			}
			if code == 0 {
				limit := min(int64(rp.PartitionMaxBytes), remaining)
				n := cn.fetchPartition(t.partitions()[rp.Partition], replicaID, req.Version, req.IsolationLevel == 1, rp, sp, limit, bytes > 0, leaders)
				bytes += n
				remaining -= int64(n)
				code = sp.ErrorCode
			}
			if code != 0 {
				sp.ErrorCode = code
				stop = true
			}
		}
	}
	if req.Version >= 16 {
		for id := range leaders {
			if b := c.broker(id); b != nil {
				fb := kmsg.NewFetchResponseBroker()
				fb.NodeID = b.id
				fb.Host, fb.Port = cn.advertisedOf(b)
				resp.Brokers = append(resp.Brokers, fb)
			}
		}
	}
	return resp, bytes, stop
}

// fetchPartition fills sp from one partition and returns the record bytes
// added. haveData says earlier partitions already returned records, so
// this one may not exceed limit even by one batch.
//
// Stored batches are immutable, so the partition lock covers only finding
// them; their bytes are gathered after it is released. A single batch goes
// out as it is stored, without a copy.
func (cn *conn) fetchPartition(p *partition, replicaID int32, version int16, committed bool, rp *kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition, limit int64, haveData bool, leaders map[int32]bool) int {
	p.mu.Lock()
	raws, size := cn.readPartition(p, replicaID, version, committed, rp, sp, limit, haveData, leaders)
	p.mu.Unlock()
	switch len(raws) {
	case 0:
		return 0
	case 1:
		sp.RecordBatches = raws[0]
	default:
		buf := cn.fetchSpace.take(size)
		n := 0
		for _, raw := range raws {
			n += copy(buf[n:], raw)
		}
		sp.RecordBatches = buf
	}
	clear(raws) // the scratch list must not keep batches alive
	return size
}

// readPartition is the part of fetchPartition under p.mu: it fills sp's
// offsets or error and returns the batches to send. The list is a copy
// (the connection's scratch list, valid until its next read), since the
// log may reuse its own once the lock is released.
func (cn *conn) readPartition(p *partition, replicaID int32, version int16, committed bool, rp *kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition, limit int64, haveData bool, leaders map[int32]bool) ([][]byte, int) {
	me := cn.b.id
	st := p.st
	code := checkLeaderEpoch(st, rp.CurrentLeaderEpoch)
	switch {
	case code != 0:
	case replicaID >= 0:
		code = kerr.NotLeaderForPartition.Code
		if rp.CurrentLeaderEpoch >= 0 {
			code = kerr.UnknownLeaderEpoch.Code
		}
	case st.Replica(me) == nil, version < 11 && st.Leader() != me:
		code = kerr.NotLeaderForPartition.Code
	}
	if code != 0 {
		sp.ErrorCode = code
		if version >= 12 && (code == kerr.NotLeaderForPartition.Code || code == kerr.FencedLeaderEpoch.Code) {
			if id, epoch, ok := leaderHint(st); ok {
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = id, epoch
				leaders[id] = true
			}
		}
		return nil, 0
	}
	if haveData && limit <= 0 {
		r := st.Replica(me)
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = r.HW(), r.LSO(), r.LogStartOffset()
		return nil, 0
	}
	read := st.Read
	if committed {
		read = st.ReadCommitted
	}
	res, code := read(me, rp.FetchOffset, int32(min(limit, 1<<31-1)))
	if code != 0 {
		// Kafka answers a failed read (OFFSET_OUT_OF_RANGE) with unknown
		// offsets, -1 each, as set above.
		sp.ErrorCode = code
		return nil, 0
	}
	sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = res.HW, res.LastStableOffset, res.LogStartOffset
	size := 0
	for _, b := range res.Batches {
		size += len(b.Raw)
	}
	if size == 0 || (haveData && size > int(limit)) {
		return nil, 0
	}
	if committed {
		sp.AbortedTransactions = make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, len(res.Aborted))
		for i, a := range res.Aborted {
			sp.AbortedTransactions[i].ProducerID, sp.AbortedTransactions[i].FirstOffset = a.ProducerID, a.FirstOffset
		}
	}
	if run := cn.b.c.chaos.Load(); run != nil {
		cn.b.c.recordRead(run, p, rp.FetchOffset, &res, committed)
	}
	raws := cn.fetchSpace.raws[:0]
	for _, b := range res.Batches {
		raws = append(raws, b.Raw)
	}
	cn.fetchSpace.raws = raws
	return raws, size
}
