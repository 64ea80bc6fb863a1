package server

// Fetch sessions (KIP-227) on the wire: the request's session id, epoch,
// partitions and forgotten partitions go to the broker's cache (package
// fetchsession, which has the rules), and the answer is built from what
// the cache decided: every partition for a full or sessionless fetch, the
// changed ones for an incremental fetch, only the error for a session
// error. Everything a request needs is kept on its connection and reused,
// so an incremental fetch that finds nothing new allocates no response
// partitions.

import (
	"github.com/fakekafka/fakekafka/fetchsession"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchSessionCacheSlots is max.incremental.fetch.session.cache.slots.
func (cfg *Config) fetchSessionCacheSlots() int {
	switch {
	case cfg.FetchSessionCacheSlots == 0:
		return fetchsession.DefaultSlots
	case cfg.FetchSessionCacheSlots < 0:
		return 0
	}
	return cfg.FetchSessionCacheSlots
}

// fetchState is a connection's reused Fetch scratch.
type fetchState struct {
	fetches   []fetchsession.Fetch // the request's partitions
	forgotten []fetchsession.Fetch
	snap      []fetchsession.Fetch // an incremental context's partitions
	out       []kmsg.FetchResponseTopicPartition
	results   []fetchsession.Result
	must      []bool
	watched   []*partition
	wake      chan struct{}
}

// wakeChan is the connection's long-poll channel, emptied of any signal
// left from an earlier wait.
func (fs *fetchState) wakeChan() chan struct{} {
	if fs.wake == nil {
		fs.wake = make(chan struct{}, 1)
	}
	select {
	case <-fs.wake:
	default:
	}
	return fs.wake
}

// fetchContext lists the request's partitions and asks the broker's
// session cache what the request is.
func (cn *conn) fetchContext(req *kmsg.FetchRequest) fetchsession.Context {
	fs := &cn.fetchState
	fs.fetches = fs.fetches[:0]
	for i := range req.Topics {
		rt := &req.Topics[i]
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			f := fetchsession.Fetch{Partition: rp.Partition, FetchOffset: rp.FetchOffset,
				LogStartOffset: rp.LogStartOffset, MaxBytes: rp.PartitionMaxBytes,
				CurrentLeaderEpoch: rp.CurrentLeaderEpoch, LastFetchedEpoch: rp.LastFetchedEpoch}
			if req.Version >= 13 {
				f.TopicID = rt.TopicID
			} else {
				f.Topic = rt.Topic
			}
			fs.fetches = append(fs.fetches, f)
		}
	}
	fs.fetches = dedupeFetches(req.Version, fs.fetches) // a partition twice: Kafka reads it once
	sessionID, epoch := req.SessionID, req.SessionEpoch
	if req.Version < 7 {
		// Kafka's FetchMetadata.LEGACY: no sessions before v7.
		sessionID, epoch = fetchsession.InvalidSessionID, fetchsession.FinalEpoch
	}
	if sessionID == fetchsession.InvalidSessionID && epoch == fetchsession.FinalEpoch {
		// The common sessionless fetch: nothing for the cache to do.
		return fetchsession.Context{Kind: fetchsession.Sessionless, Partitions: fs.fetches}
	}
	fs.forgotten = fs.forgotten[:0]
	for i := range req.ForgottenTopics {
		ft := &req.ForgottenTopics[i]
		for _, p := range ft.Partitions {
			f := fetchsession.Fetch{Partition: p}
			if req.Version >= 13 {
				f.TopicID = ft.TopicID
			} else {
				f.Topic = ft.Topic
			}
			fs.forgotten = append(fs.forgotten, f)
		}
	}
	ctx := cn.b.sessions.NewContext(req.Version, sessionID, epoch, fetchReplicaID(req) >= 0,
		fs.fetches, fs.forgotten, cn.b.c.now().UnixMilli(), fs.snap)
	if ctx.Kind == fetchsession.Incremental {
		fs.snap = ctx.Partitions
	}
	return ctx
}

func fetchReplicaID(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// sessionError is the answer to a request the sessions refused: Kafka's
// SessionErrorContext answers the error, session id 0 and no partitions.
// UNKNOWN_SERVER_ERROR (a session id past every cache shard, which fails
// inside Kafka) is its generic error answer instead: the request's session
// id, and before v13 every partition with the error too.
func (fs *fetchState) sessionError(req *kmsg.FetchRequest, code int16) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.ErrorCode = code
	if code != kerr.UnknownServerError.Code {
		return resp
	}
	resp.SessionID = req.SessionID
	if req.Version >= 13 {
		return resp
	}
	for i := range req.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic = req.Topics[i].Topic
		for _, rp := range req.Topics[i].Partitions {
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			sp.RecordBatches = []byte{}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// fetchResponse builds the answer from the partitions read into
// cn.fetchState.out, as ctx says, and applies the consumer quota: a
// throttled answer carries no partitions, opens no session and leaves an
// incremental session's cached offsets as they were (Kafka's
// getThrottledResponse).
func (cn *conn) fetchResponse(req *kmsg.FetchRequest, ctx *fetchsession.Context) *kmsg.FetchResponse {
	fs := &cn.fetchState
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	parts := ctx.Partitions
	defer func() { clear(fs.out) }() // the answer holds its own copies
	switch ctx.Kind {
	case fetchsession.Incremental:
		s := ctx.Session
		fs.results = fs.results[:0]
		for i := range parts {
			fs.results = append(fs.results, fetchResult(&fs.out[i]))
		}
		fs.must = growBools(fs.must, len(parts))
		if q, _ := cn.quotaSensor(quota.ConsumerByteRate); q != nil {
			// Sized as it would go out, without touching the session.
			if code := s.Respond(ctx.ReqEpoch, parts, fs.results, fs.must, false); code == 0 {
				cn.assembleFetch(req, resp, parts, fs.must)
			}
			if cn.throttleFetch(resp) {
				resp.Topics = nil
				if s.Epoch() != fetchsession.NextEpoch(ctx.ReqEpoch) {
					resp.ErrorCode = kerr.InvalidFetchSessionEpoch.Code
				}
				resp.SessionID = s.ID()
				return resp
			}
			resp.Topics, resp.Brokers = nil, nil
		}
		resp.SessionID = s.ID()
		if code := s.Respond(ctx.ReqEpoch, parts, fs.results, fs.must, true); code != 0 {
			resp.ErrorCode = code // a duplicate request moved the session on
			return resp
		}
		cn.assembleFetch(req, resp, parts, fs.must)
		return resp
	default:
		cn.assembleFetch(req, resp, parts, nil)
		if cn.throttleFetch(resp) {
			return resp
		}
		if ctx.Kind == fetchsession.Full {
			fs.results = fs.results[:0]
			for i := range parts {
				fs.results = append(fs.results, fetchResult(&fs.out[i]))
			}
			resp.SessionID = cn.b.sessions.CreateSession(fetchReplicaID(req) >= 0, req.Version >= 13,
				parts, fs.results, cn.b.c.now().UnixMilli())
		}
		return resp
	}
}

// fetchResult is what the sessions need to know of a partition's answer.
func fetchResult(sp *kmsg.FetchResponseTopicPartition) fetchsession.Result {
	return fetchsession.Result{
		RecordsSize:          len(sp.RecordBatches),
		HighWatermark:        sp.HighWatermark,
		LogStartOffset:       sp.LogStartOffset,
		ErrorCode:            sp.ErrorCode,
		PreferredReadReplica: sp.PreferredReadReplica >= 0,
		DivergingEpoch:       sp.DivergingEpoch.Epoch >= 0,
	}
}

func growBools(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	return s[:n]
}

// assembleFetch puts the partitions read (those with must[i], or all when
// must is nil) into resp, grouped by topic as they come (Kafka's
// FetchResponse.of), with the KIP-951 leaders they name on v16+. Nothing
// is allocated when no partition goes out.
func (cn *conn) assembleFetch(req *kmsg.FetchRequest, resp *kmsg.FetchResponse, parts []fetchsession.Fetch, must []bool) {
	fs := &cn.fetchState
	n, topics, prev := 0, 0, -1
	for i := range parts {
		if must != nil && !must[i] {
			continue
		}
		if prev < 0 || !sameTopic(req.Version, &parts[i], &parts[prev]) {
			topics++
		}
		n++
		prev = i
	}
	if n == 0 {
		return
	}
	all := make([]kmsg.FetchResponseTopicPartition, 0, n)
	resp.Topics = make([]kmsg.FetchResponseTopic, 0, topics)
	var leaders []int32
	prev = -1
	for i := range parts {
		if must != nil && !must[i] {
			continue
		}
		if prev < 0 || !sameTopic(req.Version, &parts[i], &parts[prev]) {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = parts[i].Topic, parts[i].TopicID
			st.Partitions = all[len(all):len(all)]
			resp.Topics = append(resp.Topics, st)
		}
		all = append(all, fs.out[i])
		st := &resp.Topics[len(resp.Topics)-1]
		st.Partitions = st.Partitions[:len(st.Partitions)+1]
		if id := fs.out[i].CurrentLeader.LeaderID; id >= 0 && fs.out[i].ErrorCode != 0 && !containsID(leaders, id) {
			leaders = append(leaders, id)
		}
		prev = i
	}
	if req.Version >= 16 {
		for _, id := range leaders {
			if b := cn.b.c.broker(id); b != nil {
				fb := kmsg.NewFetchResponseBroker()
				fb.NodeID = b.id
				fb.Host, fb.Port = cn.advertisedOf(b)
				resp.Brokers = append(resp.Brokers, fb)
			}
		}
	}
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// FetchSessions is the number of fetch sessions (KIP-227) broker id keeps
// now, or -1 for no such broker. Clients that use sessions (franz-go, the
// Java client) open one per broker they fetch from.
func (c *Cluster) FetchSessions(id int32) int {
	b := c.broker(id)
	if b == nil {
		return -1
	}
	return b.sessions.Len()
}
