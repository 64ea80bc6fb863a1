// Package fetchsession is Kafka's incremental fetch sessions (KIP-227) as
// a broker keeps them: the per-broker cache with its slots, shards and
// eviction rules, session ids and epochs, the partitions a session caches
// with their request parameters and last answered offsets, and which
// partitions an incremental response must carry. It has no sockets, clocks
// or goroutines: the caller passes the time in milliseconds, reads the
// partitions and hands back what it read. The server drives it from Fetch.
//
// A request's session id and epoch decide its kind (Kafka's FetchMetadata):
// epoch 0 (INITIAL) or -1 (FINAL) is a full fetch, which closes the session
// it names; with epoch 0 the broker may open a new session (its id goes back
// in the response, the next epoch is 1), with -1 it does not (sessionless).
// Any other epoch is incremental: the session must exist
// (FETCH_SESSION_ID_NOT_FOUND), carry that epoch (INVALID_FETCH_SESSION_EPOCH)
// and agree on topic ids, which version 13 brought (FETCH_SESSION_TOPIC_ID_ERROR).
// An incremental request lists only added or changed partitions and
// forgotten ones; the broker reads every partition of the session, in the
// session's order, and answers only those with records, a changed high
// watermark or log start offset, an error, a preferred read replica or a
// diverging epoch. A partition that returned records moves to the end of
// the order, so the next fetch starts with the others.
package fetchsession

import "sync"

// Kafka's FetchMetadata constants.
const (
	InvalidSessionID int32 = 0
	InitialEpoch     int32 = 0
	FinalEpoch       int32 = -1
)

// NextEpoch is the epoch that follows prev: -1 stays -1, and after
// MaxInt32 comes 1 (0 would mean a new session).
func NextEpoch(prev int32) int32 {
	switch {
	case prev < 0:
		return FinalEpoch
	case prev == 1<<31-1:
		return 1
	default:
		return prev + 1
	}
}

// Key names a partition in a session: by topic id in sessions that use
// topic ids (Fetch v13+), by topic name otherwise.
type Key struct {
	TopicID   [16]byte
	Topic     string
	Partition int32
}

// Fetch is one partition of a fetch: its name, id and the request's
// parameters for it. In an incremental context's Partitions the values are
// the session's cached ones, copied under the session's lock.
type Fetch struct {
	TopicID            [16]byte
	Topic              string
	Partition          int32
	FetchOffset        int64
	LogStartOffset     int64 // the fetcher's (a follower's)
	MaxBytes           int32
	CurrentLeaderEpoch int32
	LastFetchedEpoch   int32

	cached *Partition // the session's partition, in incremental contexts
}

// Result is what the broker read for one partition: what decides whether
// an incremental response carries it.
type Result struct {
	RecordsSize          int
	HighWatermark        int64
	LogStartOffset       int64
	ErrorCode            int16
	PreferredReadReplica bool // the response names one (KIP-392)
	DivergingEpoch       bool // the response carries a diverging epoch
}

// Partition is a session's cached partition: the request parameters last
// sent for it and the offsets last answered.
type Partition struct {
	key   Key
	topic string
	req   Fetch

	highWatermark       int64 // -1 after an error, so the partition is sent again
	localLogStartOffset int64

	prev, next *Partition
}

// mustRespond is Kafka's CachedPartition.maybeUpdateResponseData: whether
// an incremental response carries the partition, updating the cached
// offsets when update is set.
func (p *Partition) mustRespond(r *Result, update bool) bool {
	must := r.RecordsSize > 0
	if p.highWatermark != r.HighWatermark {
		must = true
		if update {
			p.highWatermark = r.HighWatermark
		}
	}
	if p.localLogStartOffset != r.LogStartOffset {
		must = true
		if update {
			p.localLogStartOffset = r.LogStartOffset
		}
	}
	if r.PreferredReadReplica || r.DivergingEpoch {
		must = true
	}
	if r.ErrorCode != 0 {
		if update {
			p.highWatermark = -1
		}
		must = true
	}
	return must
}

// Session is one fetch session.
type Session struct {
	id           int32
	privileged   bool // opened by a follower
	usesTopicIDs bool
	creationMs   int64

	mu       sync.Mutex // guards everything below
	epoch    int32      // the epoch the next request must carry
	parts    map[Key]*Partition
	head     *Partition // the session's order: head first
	tail     *Partition
	lastUsed int64

	// Kept by the cache at each touch: the size and eviction sets the
	// session was filed under (Kafka's cachedSize, evictableByAll and
	// evictableByPrivileged).
	cachedSize      int // -1 when not in the cache
	evictableByAll  bool
	evictableByPriv bool
}

// ID is the session's id.
func (s *Session) ID() int32 { return s.id }

// Epoch is the epoch the session's next request must carry.
func (s *Session) Epoch() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// Privileged says whether a follower opened the session.
func (s *Session) Privileged() bool { return s.privileged }

// Partitions returns the session's partitions in its order.
func (s *Session) Partitions() []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Key
	for p := s.head; p != nil; p = p.next {
		out = append(out, p.key)
	}
	return out
}

func (s *Session) keyOf(f *Fetch) Key {
	if s.usesTopicIDs {
		return Key{TopicID: f.TopicID, Partition: f.Partition}
	}
	return Key{Topic: f.Topic, Partition: f.Partition}
}

func (s *Session) pushBack(p *Partition) {
	p.prev, p.next = s.tail, nil
	if s.tail != nil {
		s.tail.next = p
	} else {
		s.head = p
	}
	s.tail = p
}

func (s *Session) unlink(p *Partition) {
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		s.head = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		s.tail = p.prev
	}
	p.prev, p.next = nil, nil
}

// add caches f (new partitions go to the end) or updates its parameters.
func (s *Session) add(f *Fetch) (added bool) {
	k := s.keyOf(f)
	if p := s.parts[k]; p != nil {
		p.req = *f
		p.req.cached = nil
		if f.Topic != "" {
			p.topic = f.Topic
		}
		return false
	}
	p := &Partition{key: k, topic: f.Topic, req: *f, highWatermark: -1, localLogStartOffset: -1}
	p.req.cached = nil
	s.parts[k] = p
	s.pushBack(p)
	return true
}

// update is Kafka's FetchSession.update: added and changed partitions
// first, then the forgotten ones leave.
func (s *Session) update(fetches, forgotten []Fetch) {
	for i := range fetches {
		s.add(&fetches[i])
	}
	for i := range forgotten {
		k := s.keyOf(&forgotten[i])
		if p := s.parts[k]; p != nil {
			delete(s.parts, k)
			s.unlink(p)
		}
	}
}

// snapshot appends the session's partitions, in order, to dst.
func (s *Session) snapshot(dst []Fetch) []Fetch {
	for p := s.head; p != nil; p = p.next {
		f := p.req
		f.TopicID, f.Partition = p.key.TopicID, p.key.Partition
		f.Topic = p.topic
		if !s.usesTopicIDs {
			f.Topic = p.key.Topic
		}
		f.cached = p
		dst = append(dst, f)
	}
	return dst
}

// Respond decides which partitions of an incremental context's response
// go out: must[i] is set for parts[i] (the context's Partitions) as
// results[i] requires. With update it also records the answered offsets
// and moves the partitions that returned records to the end of the
// session's order (Kafka's updateAndGenerateResponseData); without, it
// changes nothing (Kafka's getResponseSize). If the session moved past
// reqEpoch's successor meanwhile (a duplicate request), it answers
// INVALID_FETCH_SESSION_EPOCH and no partition.
func (s *Session) Respond(reqEpoch int32, parts []Fetch, results []Result, must []bool, update bool) (errorCode int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != NextEpoch(reqEpoch) {
		clear(must)
		return errInvalidFetchSessionEpoch
	}
	for i := range parts {
		p := parts[i].cached
		must[i] = p != nil && s.parts[p.key] == p && p.mustRespond(&results[i], update)
		if must[i] && update && results[i].RecordsSize > 0 {
			s.unlink(p)
			s.pushBack(p)
		}
	}
	return 0
}

// Kafka's error codes the sessions answer.
const (
	errFetchSessionIDNotFound   int16 = 70
	errInvalidFetchSessionEpoch int16 = 71
	errFetchSessionTopicIDError int16 = 106
	errUnknownServerError       int16 = -1
)
