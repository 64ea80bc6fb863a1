package server

// ShareFetch, versions 1-2 (KIP-932; v2 adds share.acquire.mode and renew
// acknowledgements).
//
// The request's ShareSessionEpoch opens (0), continues or closes (-1) the
// member's share session with this broker (share_sessions.go). Its
// acknowledgements are applied first, per partition
// (AcknowledgeErrorCode); an opening request may not carry any
// (INVALID_REQUEST). Then every partition of the session acquires records
// for the member on its leader: the Available records of its in-flight
// window and new ones up to the high watermark (the last stable offset
// under share.isolation.level=read_committed, whose aborted transactions
// are archived unseen), at most MaxRecords (whole batches, or exactly with
// ShareAcquireMode 1) and group.share.partition.max.record.locks in
// flight. Each acquired run comes with its delivery count; the records'
// locks run for share.record.lock.duration.ms on the cluster's clock. With
// fewer than MinBytes acquired the request waits, up to MaxWaitMs, for new
// records or released ones. Per partition: UNKNOWN_TOPIC_ID,
// UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (with the current
// leader), TOPIC_AUTHORIZATION_FAILED.

import (
	"time"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// defaultShareMaxRecords is what a v1+ request with no MaxRecords gets.
const defaultShareMaxRecords = 500

func (cn *conn) handleShareFetch(req *kmsg.ShareFetchRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	fail := func(code int16, msg string) (kmsg.Response, error) {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return resp, nil
	}
	group, member := derefOr(req.GroupID), derefOr(req.MemberID)
	switch {
	case group == "":
		return fail(kerr.InvalidRequest.Code, "Group ID is required.")
	case member == "":
		return fail(kerr.InvalidRequest.Code, "Member ID is required.")
	case !cn.allowedGroup(authorizer.OpRead, group):
		return fail(errGroupAuth, "")
	case req.ShareSessionEpoch == 0 && shareFetchHasAcks(req):
		return fail(kerr.InvalidRequest.Code, "Acknowledge data present on initial epoch.")
	}
	s, closing, code := cn.updateShareSession(group, member, req.ShareSessionEpoch, sessionFetch)
	if code != 0 {
		return fail(code, "") // Kafka: no lock timeout with an error
	}
	resp.AcquisitionLockTimeoutMillis = int32(c.groupConfig(group).ShareRecordLockDuration.Milliseconds())
	out := newShareFetchAnswer(resp)
	leaders := map[int32]bool{}

	// The session's partitions change first; acknowledgements apply next.
	c.shares.mu.Lock()
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			if !closing {
				s.add(shareTP{rt.TopicID, rp.Partition})
			}
		}
	}
	for _, ft := range req.ForgottenTopicsData {
		for _, p := range ft.Partitions {
			s.forget(shareTP{ft.TopicID, p})
		}
	}
	parts := append([]shareTP(nil), s.parts...)
	c.shares.mu.Unlock()

	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			if len(rp.AcknowledgementBatches) == 0 {
				continue
			}
			sp := out.partition(rt.TopicID, rp.Partition)
			batches := make([]share.AckBatch, len(rp.AcknowledgementBatches))
			for i, b := range rp.AcknowledgementBatches {
				batches[i] = share.AckBatch{First: b.FirstOffset, Last: b.LastOffset, Types: ackTypes(b.AcknowledgeTypes)}
			}
			ackCode, hint := cn.shareAcknowledge(group, member, rt.TopicID, rp.Partition, batches, req.Version >= 2 && req.IsRenewAck)
			sp.AcknowledgeErrorCode = ackCode
			if hint.LeaderID >= 0 {
				sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = hint.LeaderID, hint.LeaderEpoch
				leaders[hint.LeaderID] = true
			}
		}
	}
	if closing {
		c.releaseShareMember(group, member, s.keys())
		cn.shareNodeEndpoints(resp, leaders)
		return resp, nil
	}
	if req.IsRenewAck {
		// A renew-only request acquires nothing (KIP-1222).
		cn.shareNodeEndpoints(resp, leaders)
		return resp, nil
	}
	if req.ShareSessionEpoch == 0 {
		for _, tp := range parts {
			out.partition(tp.topicID, tp.partition)
		}
	}
	maxRecords := int(req.MaxRecords)
	if maxRecords <= 0 {
		maxRecords = defaultShareMaxRecords
	}
	strict := req.Version >= 2 && req.ShareAcquireMode == 1
	got := 0
	fetch := func() int {
		n, records := cn.shareAcquire(group, member, parts, out, maxRecords, strict, int(req.MaxBytes)-got, leaders)
		got += n
		maxRecords -= records
		return got
	}
	if n := fetch(); n >= int(max(req.MinBytes, 1)) || req.MaxWaitMillis <= 0 || len(parts) == 0 || out.errors {
		cn.shareNodeEndpoints(resp, leaders)
		return resp, nil
	}

	// Long poll: wake on new records (a partition change) or released
	// ones (a share-partition change), until MaxWaitMs on the cluster's
	// clock or the wall clock, whichever first (as Fetch).
	wake := make(chan struct{}, 1)
	unwatch := cn.watchShare(group, parts, wake)
	defer unwatch()
	maxWait := time.Duration(req.MaxWaitMillis) * time.Millisecond
	timer := c.cfg.Clock.NewTimer(maxWait)
	defer timer.Stop()
	wall := time.NewTimer(maxWait)
	defer wall.Stop()
	for {
		if n := fetch(); n >= int(max(req.MinBytes, 1)) || out.errors {
			break
		}
		cn.parkBegin()
		select {
		case <-wake:
			cn.parkEnd()
			continue
		case <-timer.C:
		case <-wall.C:
		case <-cn.closed:
			return nil, errCloseConn
		case <-c.closing:
			return nil, errCloseConn
		}
		cn.parkEnd()
		break
	}
	cn.shareNodeEndpoints(resp, leaders)
	return resp, nil
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func shareFetchHasAcks(req *kmsg.ShareFetchRequest) bool {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) > 0 {
				return true
			}
		}
	}
	return false
}

func ackTypes(ts []int8) []share.AckType {
	out := make([]share.AckType, len(ts))
	for i, t := range ts {
		out[i] = share.AckType(t)
	}
	return out
}

// shareFetchAnswer indexes a ShareFetch response's partitions.
type shareFetchAnswer struct {
	resp   *kmsg.ShareFetchResponse
	idx    map[shareTP][2]int
	errors bool // some partition has an error: answer at once
}

func newShareFetchAnswer(resp *kmsg.ShareFetchResponse) *shareFetchAnswer {
	return &shareFetchAnswer{resp: resp, idx: map[shareTP][2]int{}}
}

// partition returns the response's entry for a partition, adding it.
func (a *shareFetchAnswer) partition(topicID [16]byte, p int32) *kmsg.ShareFetchResponseTopicPartition {
	tp := shareTP{topicID, p}
	if at, ok := a.idx[tp]; ok {
		return &a.resp.Topics[at[0]].Partitions[at[1]]
	}
	ti := -1
	for i := range a.resp.Topics {
		if a.resp.Topics[i].TopicID == topicID {
			ti = i
		}
	}
	if ti < 0 {
		t := kmsg.NewShareFetchResponseTopic()
		t.TopicID = topicID
		a.resp.Topics = append(a.resp.Topics, t)
		ti = len(a.resp.Topics) - 1
	}
	rp := kmsg.NewShareFetchResponseTopicPartition()
	rp.Partition = p
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
	// As Kafka: an empty records field, never a null one (the Java share
	// consumer stops fetching a partition whose records came back null).
	rp.Records = []byte{}
	a.resp.Topics[ti].Partitions = append(a.resp.Topics[ti].Partitions, rp)
	a.idx[tp] = [2]int{ti, len(a.resp.Topics[ti].Partitions) - 1}
	return &a.resp.Topics[ti].Partitions[a.idx[tp][1]]
}

// leaderHintOf is a partition's current leader for an answer.
type leaderAt struct{ LeaderID, LeaderEpoch int32 }

// sharePartitionOf resolves a topic id and partition on this broker: the
// partition, or the error and the current leader.
func (cn *conn) sharePartitionOf(topicID [16]byte, index int32) (*partition, int16, leaderAt) {
	c := cn.b.c
	none := leaderAt{-1, -1}
	t := c.topicByID(topicID)
	if t == nil {
		return nil, kerr.UnknownTopicID.Code, none
	}
	if !cn.allowedTopic(authorizer.OpRead, t.name) {
		return nil, errTopicAuth, none
	}
	if index < 0 || int(index) >= len(t.partitions()) {
		return nil, kerr.UnknownTopicOrPartition.Code, none
	}
	return t.partitions()[index], 0, none
}

// shareAcknowledge applies one partition's acknowledgements for member.
func (cn *conn) shareAcknowledge(group, member string, topicID [16]byte, index int32, batches []share.AckBatch, renew bool) (int16, leaderAt) {
	c := cn.b.c
	p, code, hint := cn.sharePartitionOf(topicID, index)
	if code != 0 {
		return code, hint
	}
	if !renew {
		for _, b := range batches {
			for _, t := range b.Types {
				if t == share.AckRenew {
					return kerr.InvalidRequest.Code, hint // Renew needs IsRenewAck
				}
			}
		}
	}
	sp, code := c.sharePartitionFor(cn.b.id, group, p)
	if code != 0 {
		return code, currentLeader(p)
	}
	defer sp.mu.Unlock()
	lim := c.shareLimits(group)
	now := c.now()
	before := sp.sm.Clone()
	code, archived := sp.sm.Acknowledge(member, now, batches, lim)
	if code != 0 {
		return code, hint
	}
	if code := sp.persist(); code != 0 {
		// Not written: undo it, as Kafka's SharePartition rolls back an
		// acknowledgement whose state write failed.
		sp.sm = before
		return code, hint
	}
	c.recordShareAcks(sp, member, now, batches)
	c.emitShareChanges(sp, archived, "released at share.delivery.count.limit")
	sp.notify()
	sp.arm()
	return 0, hint
}

// currentLeader is p's leader for a NOT_LEADER_OR_FOLLOWER answer.
func currentLeader(p *partition) leaderAt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, epoch, ok := leaderHint(p.st); ok {
		return leaderAt{id, epoch}
	}
	return leaderAt{-1, -1}
}

// shareAcquire acquires records for member from the session's partitions
// into the answer, and returns the record bytes and records it added.
func (cn *conn) shareAcquire(group, member string, parts []shareTP, out *shareFetchAnswer, maxRecords int, strict bool, maxBytes int, leaders map[int32]bool) (total, records int) {
	c := cn.b.c
	if maxBytes <= 0 {
		maxBytes = 1<<31 - 1 // MaxBytes' default; KIP-74: the first batch goes whole anyway
	}
	committed := c.groupConfig(group).ShareIsolationLevel == "read_committed"
	for _, tp := range parts {
		if maxRecords <= 0 || total >= maxBytes {
			break
		}
		p, code, hint := cn.sharePartitionOf(tp.topicID, tp.partition)
		var sp *sharePartition
		if code == 0 {
			if sp, code = c.sharePartitionFor(cn.b.id, group, p); code != 0 {
				hint = currentLeader(p)
			}
		}
		if code != 0 {
			rp := out.partition(tp.topicID, tp.partition)
			rp.ErrorCode = code
			if hint.LeaderID >= 0 {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = hint.LeaderID, hint.LeaderEpoch
				leaders[hint.LeaderID] = true
			}
			out.errors = true
			continue
		}
		raw, n := cn.acquireFrom(sp, member, committed, maxRecords, strict, maxBytes-total)
		sp.mu.Unlock()
		if len(n) == 0 {
			continue
		}
		rp := out.partition(tp.topicID, tp.partition)
		rp.Records = append(rp.Records, raw...)
		for _, a := range n {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.First, a.Last, a.DeliveryCount
			rp.AcquiredRecords = append(rp.AcquiredRecords, ar)
			maxRecords -= int(a.Last - a.First + 1)
			records += int(a.Last - a.First + 1)
		}
		total += len(raw)
	}
	return total, records
}

// acquireFrom reads sp's partition from the next offset to acquire and
// acquires what it can: the batches holding acquired records, and the
// runs. Callers hold sp.mu.
func (cn *conn) acquireFrom(sp *sharePartition, member string, committed bool, maxRecords int, strict bool, maxBytes int) ([]byte, []share.AcquiredRange) {
	c := cn.b.c
	lim := c.shareLimits(sp.key.Group)
	// One instant for the expiry and the acquisition: a lock due by the
	// time records are acquired is released first.
	now := c.now()
	sp.expire(now)
	p := sp.p
	p.mu.Lock()
	r := p.st.Replica(cn.b.id)
	if r == nil {
		p.mu.Unlock()
		return nil, nil
	}
	limit := r.HW()
	if committed {
		limit = r.LSO()
	}
	if ls := r.LogStartOffset(); sp.sm.StartOffset() < ls {
		sp.sm.Reset(ls) // retention or DeleteRecords took them
	}
	if !sp.sm.Available(limit, lim) {
		p.mu.Unlock()
		return nil, nil
	}
	read := p.st.Read
	if committed {
		read = p.st.ReadCommitted
	}
	res, code := read(cn.b.id, sp.sm.NextFetchOffset(), int32(min(maxBytes, 1<<31-1)))
	p.mu.Unlock()
	if code != 0 || len(res.Batches) == 0 {
		return nil, nil
	}
	ranges := make([]share.Range, 0, len(res.Batches))
	for _, b := range res.Batches {
		if b.LastOffset >= limit {
			break
		}
		ranges = append(ranges, share.Range{First: b.BaseOffset, Last: b.LastOffset, Skip: b.Control || aborted(b, res.Aborted)})
	}
	got := sp.sm.Acquire(member, now, ranges, maxRecords, strict, lim)
	if len(got) == 0 {
		return nil, nil
	}
	c.recordShareDeliveries(sp, member, now, got)
	sp.arm()
	var raw []byte
	for _, b := range res.Batches {
		for _, a := range got {
			if b.BaseOffset <= a.Last && b.LastOffset >= a.First {
				raw = append(raw, b.Raw...)
				break
			}
		}
	}
	return raw, got
}

// aborted says whether b belongs to an aborted transaction.
func aborted(b *replication.Batch, txns []replication.AbortedTxn) bool {
	if !b.Transactional || b.Control {
		return false
	}
	for _, a := range txns {
		if a.ProducerID == b.ProducerID && b.BaseOffset >= a.FirstOffset && b.BaseOffset <= a.LastOffset {
			return true
		}
	}
	return false
}

// watchShare registers wake with the partitions and share partitions of
// the session; the answer removes it.
func (cn *conn) watchShare(group string, parts []shareTP, wake chan struct{}) func() {
	c := cn.b.c
	var ps []*partition
	var sps []*sharePartition
	for _, tp := range parts {
		p, code, _ := cn.sharePartitionOf(tp.topicID, tp.partition)
		if code != 0 {
			continue
		}
		p.mu.Lock()
		p.watch(wake)
		p.mu.Unlock()
		ps = append(ps, p)
		c.shares.mu.Lock()
		sp := c.shares.parts[share.Key{Group: group, TopicID: tp.topicID, Partition: tp.partition}]
		c.shares.mu.Unlock()
		if sp != nil {
			sp.watch(wake)
			sps = append(sps, sp)
		}
	}
	return func() {
		for _, p := range ps {
			p.unwatch(wake)
		}
		for _, sp := range sps {
			sp.unwatch(wake)
		}
	}
}

// shareNodeEndpoints lists the leaders the answer names.
func (cn *conn) shareNodeEndpoints(resp *kmsg.ShareFetchResponse, leaders map[int32]bool) {
	for id := range leaders {
		if b := cn.b.c.broker(id); b != nil {
			ne := kmsg.NewShareFetchResponseNodeEndpoint()
			ne.NodeID = b.id
			ne.Host, ne.Port = cn.advertisedOf(b)
			resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
		}
	}
}
