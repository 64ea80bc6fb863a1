package server

// Reading a Fetch's partitions: one response partition per partition to
// read (fetch.go has the rules), into the connection's reused slots.

import (
	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/fetchsession"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchTopic resolves a fetched topic by name (v0-12) or id (v13+).
func (cn *conn) fetchTopic(version int16, name string, id [16]byte) (*topic, int16) {
	c := cn.b.c
	if version >= 13 {
		if t := c.topicByID(id); t != nil {
			if !cn.allowedTopic(authorizer.OpRead, t.name) {
				return nil, errTopicAuth
			}
			return t, 0
		}
		return nil, kerr.UnknownTopicID.Code
	}
	if !cn.allowedTopic(authorizer.OpRead, name) {
		return nil, errTopicAuth // before existence: Kafka discloses nothing
	}
	if t := c.topic(name); t != nil {
		return t, 0
	}
	return nil, kerr.UnknownTopicOrPartition.Code
}

// sameTopic says whether a and b name the same topic in a request of
// version: by id from v13, by name before.
func sameTopic(version int16, a, b *fetchsession.Fetch) bool {
	if version >= 13 {
		return a.TopicID == b.TopicID
	}
	return a.Topic == b.Topic
}

func (cn *conn) watchFetch(version int16, parts []fetchsession.Fetch, wake chan struct{}) []*partition {
	out := cn.fetchState.watched[:0]
	var t *topic
	var code int16
	for i := range parts {
		f := &parts[i]
		if i == 0 || !sameTopic(version, f, &parts[i-1]) {
			t, code = cn.fetchTopic(version, f.Topic, f.TopicID)
		}
		if code != 0 {
			continue
		}
		if f.Partition >= 0 && int(f.Partition) < len(t.partitions()) {
			p := t.partitions()[f.Partition]
			p.mu.Lock()
			p.watch(wake)
			p.mu.Unlock()
			out = append(out, p)
		}
	}
	cn.fetchState.watched = out
	return out
}

// readFetch reads every partition of parts from the current state into
// cn.fetchState.out (one each, in order). stop is true when the response
// must go out at once (some partition errored).
func (cn *conn) readFetch(req *kmsg.FetchRequest, parts []fetchsession.Fetch) (bytes int, stop bool) {
	fs := &cn.fetchState
	replicaID := req.ReplicaID
	if req.Version >= 15 {
		replicaID = req.ReplicaState.ID
	}
	// MaxBytes 0 answers the first batch alone, as Kafka's (KIP-74).
	remaining := min(max(int64(req.MaxBytes), 0), cn.b.c.fetchMaxBytes())
	if quotaCap := cn.fetchQuotaCap(); quotaCap >= 0 {
		remaining = min(remaining, int64(quotaCap)) // one answer never throttles alone
	}
	cn.fetchSpace.release() // a re-read replaces the response built before
	fs.out = growSlots(fs.out, len(parts))
	var t *topic
	var topicCode int16
	for i := range parts {
		f := &parts[i]
		sp := &fs.out[i]
		if i == 0 || !sameTopic(req.Version, f, &parts[i-1]) {
			t, topicCode = cn.fetchTopic(req.Version, f.Topic, f.TopicID)
		}
		*sp = kmsg.FetchResponseTopicPartition{}
		sp.Default()
		sp.Partition = f.Partition
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		// Kafka always sends a records field, empty when there is
		// nothing: librdkafka cannot parse a null one.
		sp.RecordBatches = []byte{}
		code := topicCode
		if code == 0 && (f.Partition < 0 || int(f.Partition) >= len(t.partitions())) {
			code = kerr.UnknownTopicOrPartition.Code
		}
		if code != 0 {
			// Kafka answers an unknown topic or partition with an empty,
			// not null, list of aborted transactions.
			sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
		}
		if code == 0 {
			limit := min(int64(f.MaxBytes), remaining)
			n := cn.fetchPartition(t.partitions()[f.Partition], replicaID, req.Version, req.IsolationLevel == 1, f, sp, limit, bytes > 0)
			bytes += n
			remaining -= int64(n)
			code = sp.ErrorCode
		}
		if code != 0 {
			sp.ErrorCode = code
			stop = true
		}
		if sp.DivergingEpoch.Epoch >= 0 {
			stop = true // Kafka answers a diverging epoch at once
		}
	}
	return bytes, stop
}

// growSlots returns s with n elements, reusing its array when it can.
func growSlots(s []kmsg.FetchResponseTopicPartition, n int) []kmsg.FetchResponseTopicPartition {
	if cap(s) < n {
		return make([]kmsg.FetchResponseTopicPartition, n, max(n, 2*cap(s)))
	}
	return s[:n]
}

// fetchPartition fills sp from one partition and returns the record bytes
// added. haveData says earlier partitions already returned records, so
// this one may not exceed limit even by one batch.
//
// Stored batches are immutable, so the partition lock covers only finding
// them; their bytes are gathered after it is released. A single batch goes
// out as it is stored, without a copy.
func (cn *conn) fetchPartition(p *partition, replicaID int32, version int16, committed bool, f *fetchsession.Fetch, sp *kmsg.FetchResponseTopicPartition, limit int64, haveData bool) int {
	p.mu.Lock()
	raws, size := cn.readPartition(p, replicaID, version, committed, f, sp, limit, haveData)
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
func (cn *conn) readPartition(p *partition, replicaID int32, version int16, committed bool, f *fetchsession.Fetch, sp *kmsg.FetchResponseTopicPartition, limit int64, haveData bool) ([][]byte, int) {
	me := cn.b.id
	st := p.st
	code := checkLeaderEpoch(st, f.CurrentLeaderEpoch)
	switch {
	case code != 0:
	case replicaID >= 0:
		code = kerr.NotLeaderForPartition.Code
		if f.CurrentLeaderEpoch >= 0 {
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
			}
		}
		return nil, 0
	}
	if checkLastFetchedEpoch(st, me, version, f, sp) {
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
	res, code := read(me, f.FetchOffset, int32(min(limit, 1<<31-1)))
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
	if size == 0 {
		return nil, 0
	}
	if committed {
		sp.AbortedTransactions = make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, len(res.Aborted))
		for i, a := range res.Aborted {
			sp.AbortedTransactions[i].ProducerID, sp.AbortedTransactions[i].FirstOffset = a.ProducerID, a.FirstOffset
		}
	}
	raws := cn.fetchSpace.raws[:0]
	for _, b := range res.Batches {
		raws = append(raws, b.Raw)
	}
	bound := res.HW
	if committed {
		bound = res.LastStableOffset
	}
	raws, size = cutToLimit(raws, size, res.Batches[len(res.Batches)-1].LastOffset, limit, !haveData, func(offset int64) []byte {
		next, code := st.Read(me, offset, 1)
		if code != 0 || len(next.Batches) == 0 || next.Batches[0].LastOffset >= bound {
			return nil
		}
		return next.Batches[0].Raw
	})
	cn.fetchSpace.raws = raws
	// A chaos run records what a consumer can read: the whole batches.
	if run := cn.b.c.chaos.Load(); run != nil && len(raws) > 0 && len(raws[0]) == len(res.Batches[0].Raw) {
		cn.b.c.recordRead(run, p, f.FetchOffset, &res, committed)
	}
	return raws, size
}
