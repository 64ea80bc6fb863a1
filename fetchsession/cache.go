package fetchsession

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

const (
	// DefaultSlots is max.incremental.fetch.session.cache.slots' default.
	DefaultSlots = 1000
	// Shards is how many shards a broker splits its cache into (Kafka's
	// NumFetchSessionCacheShards); each holds Slots/Shards sessions, so
	// fewer than 8 slots means no sessions at all, as in Kafka.
	Shards = 8
	// EvictionMs is MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: a session
	// unused this long may give its slot to any new one, and one younger
	// than this can be evicted only by a privileged (follower) session,
	// and only if it is not privileged itself.
	EvictionMs = 120_000
	// idRange is each shard's share of the session ids: shard n hands out
	// ids in [max(1, n*idRange), (n+1)*idRange).
	idRange = (1<<31 - 1) / Shards
)

// Cache is a broker's fetch session cache.
type Cache struct {
	shards [Shards]shard
	next   atomic.Uint32 // the shard the next new session goes to

	// RandomID returns a random id in [lo, hi); tests set it to make ids
	// predictable. Default: math/rand/v2.
	RandomID func(lo, hi int32) int32
}

type shard struct {
	num        int32
	maxEntries int
	mu         sync.Mutex
	sessions   map[int32]*Session
}

// NewCache returns a cache with slots sessions
// (max.incremental.fetch.session.cache.slots) over its shards.
func NewCache(slots int) *Cache {
	c := &Cache{RandomID: func(lo, hi int32) int32 { return lo + rand.Int32N(hi-lo) }}
	for i := range c.shards {
		c.shards[i] = shard{num: int32(i), maxEntries: max(slots, 0) / Shards, sessions: map[int32]*Session{}}
	}
	return c
}

// shardOf is the shard that owns id, or nil for an id no shard hands out
// (Kafka fails such a request with UNKNOWN_SERVER_ERROR).
func (c *Cache) shardOf(id int32) *shard {
	n := id / idRange // truncated, as Java's integer division
	if n < 0 || n >= Shards {
		return nil
	}
	return &c.shards[n]
}

// Len is the number of sessions in the cache.
func (c *Cache) Len() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		n += len(sh.sessions)
		sh.mu.Unlock()
	}
	return n
}

// Get returns the session with id, or nil.
func (c *Cache) Get(id int32) *Session {
	sh := c.shardOf(id)
	if sh == nil {
		return nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.sessions[id]
}

// Clear forgets every session, as a broker's restart does.
func (c *Cache) Clear() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		clear(sh.sessions)
		sh.mu.Unlock()
	}
}

// Remove closes the session with id; it says whether there was one.
func (c *Cache) Remove(id int32) bool {
	sh := c.shardOf(id)
	if sh == nil {
		return false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := sh.sessions[id]
	if s != nil {
		sh.remove(s)
	}
	return s != nil
}

func (sh *shard) remove(s *Session) {
	delete(sh.sessions, s.id)
	s.cachedSize = -1
}

// touch is Kafka's FetchSessionCacheShard.touch: it marks s used at now
// and files it for eviction by its size then. A session younger than
// EvictionMs can be evicted only by a privileged one, and only if it is
// not privileged itself. Called with sh.mu and s.mu held.
func (sh *shard) touch(s *Session, now int64) {
	s.lastUsed = now
	s.cachedSize = len(s.parts)
	old := now-s.creationMs > EvictionMs
	s.evictableByPriv = !s.privileged || old
	s.evictableByAll = old
}

// tryEvict is Kafka's tryEvict: the least recently used session goes if
// it is stale (unused for more than EvictionMs); otherwise the least
// valuable evictable one goes if the new session (privileged, size) is
// worth at least as much — by privilege, then size, then id, where the
// new one's id counts as 0 (so a session of the same size never evicts).
func (sh *shard) tryEvict(privileged bool, size int, now int64) bool {
	var lru, victim *Session
	for _, s := range sh.sessions {
		if lru == nil || s.lastUsed < lru.lastUsed || (s.lastUsed == lru.lastUsed && s.id < lru.id) {
			lru = s
		}
		evictable := s.evictableByAll
		if privileged {
			evictable = s.evictableByPriv
		}
		if evictable && (victim == nil || lessValuable(s, victim)) {
			victim = s
		}
	}
	switch {
	case lru == nil:
		return false
	case now-lru.lastUsed > EvictionMs:
		sh.remove(lru)
		return true
	case victim == nil:
		return false
	case compareKeys(privileged, size, 0, victim.privileged, victim.cachedSize, victim.id) < 0:
		return false
	default:
		sh.remove(victim)
		return true
	}
}

// compareKeys orders Kafka's EvictableKey: privilege (false first), size,
// then id.
func compareKeys(aPriv bool, aSize int, aID int32, bPriv bool, bSize int, bID int32) int {
	switch {
	case aPriv != bPriv:
		if aPriv {
			return 1
		}
		return -1
	case aSize != bSize:
		if aSize < bSize {
			return -1
		}
		return 1
	case aID != bID:
		if aID < bID {
			return -1
		}
		return 1
	}
	return 0
}

func lessValuable(a, b *Session) bool {
	return compareKeys(a.privileged, a.cachedSize, a.id, b.privileged, b.cachedSize, b.id) < 0
}

// CreateSession is Kafka's maybeCreateSession after a full fetch: parts
// (the full request's partitions, answered with results) become a new
// session in the next shard, round robin, if it has a free slot or can
// evict one. It returns the new id, or InvalidSessionID.
func (c *Cache) CreateSession(privileged, usesTopicIDs bool, parts []Fetch, results []Result, now int64) int32 {
	// The partitions as Kafka's response map holds them: a partition
	// named twice counts once, with the last parameters.
	s := &Session{privileged: privileged, usesTopicIDs: usesTopicIDs, creationMs: now,
		epoch: NextEpoch(InitialEpoch), parts: make(map[Key]*Partition, len(parts))}
	for i := range parts {
		s.add(&parts[i])
		p := s.parts[s.keyOf(&parts[i])]
		p.highWatermark, p.localLogStartOffset = results[i].HighWatermark, results[i].LogStartOffset
	}
	sh := &c.shards[int(c.next.Add(1)-1)%Shards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.sessions) >= sh.maxEntries && !sh.tryEvict(privileged, len(s.parts), now) {
		return InvalidSessionID
	}
	lo, hi := max(1, sh.num*idRange), (sh.num+1)*idRange
	id := c.RandomID(lo, hi)
	for sh.sessions[id] != nil || id == InvalidSessionID {
		id = c.RandomID(lo, hi)
	}
	s.id = id
	s.mu.Lock()
	sh.sessions[id] = s
	sh.touch(s, now)
	s.mu.Unlock()
	return id
}

// Kind is what a Fetch is to the sessions.
type Kind int8

const (
	// Sessionless: epoch -1, or the incremental request emptied its
	// session. The response carries session id 0 and every partition.
	Sessionless Kind = iota
	// Full: epoch 0. Every partition is answered; CreateSession may
	// open a session for them.
	Full
	// Incremental: the session's partitions are read; Respond picks
	// those the response carries.
	Incremental
	// SessionError: the response carries only ErrorCode, session id 0
	// and no partitions.
	SessionError
)

// Context is the sessions' decision for one Fetch (Kafka's FetchContext).
type Context struct {
	Kind      Kind
	ErrorCode int16
	// Session is the incremental context's session; ReqEpoch the epoch
	// its request carried.
	Session  *Session
	ReqEpoch int32
	// Partitions are the partitions to read, in order: the request's for
	// Sessionless and Full, the session's (after the request's changes)
	// for Incremental.
	Partitions []Fetch
}

// NewContext is Kafka's FetchManager.newContext for a request of version
// with session id and epoch, from a follower or a consumer, with its
// partitions (fetches) and forgotten partitions. dst is reused for an
// incremental context's Partitions.
func (c *Cache) NewContext(version int16, sessionID, epoch int32, follower bool, fetches, forgotten []Fetch, now int64, dst []Fetch) Context {
	if epoch == InitialEpoch || epoch == FinalEpoch {
		if sessionID != InvalidSessionID {
			if c.shardOf(sessionID) == nil {
				return Context{Kind: SessionError, ErrorCode: errUnknownServerError}
			}
			c.Remove(sessionID)
		}
		if epoch == FinalEpoch {
			return Context{Kind: Sessionless, Partitions: fetches}
		}
		return Context{Kind: Full, Partitions: fetches}
	}
	sh := c.shardOf(sessionID)
	if sh == nil {
		return Context{Kind: SessionError, ErrorCode: errUnknownServerError}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := sh.sessions[sessionID]
	if s == nil {
		return Context{Kind: SessionError, ErrorCode: errFetchSessionIDNotFound}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.epoch != epoch:
		return Context{Kind: SessionError, ErrorCode: errInvalidFetchSessionEpoch}
	case s.usesTopicIDs != (version >= 13):
		return Context{Kind: SessionError, ErrorCode: errFetchSessionTopicIDError}
	}
	s.update(fetches, forgotten)
	if len(s.parts) == 0 {
		sh.remove(s)
		return Context{Kind: Sessionless, Partitions: fetches}
	}
	sh.touch(s, now)
	s.epoch = NextEpoch(s.epoch)
	return Context{Kind: Incremental, Session: s, ReqEpoch: epoch, Partitions: s.snapshot(dst[:0])}
}
