package server

// Share sessions (KIP-932), each broker's own, as Kafka's ShareSessionCache
// keeps them: keyed by group and member, opened by ShareSessionEpoch 0,
// closed by -1 (or when the connection that opened it closes), any other
// epoch the one the session expects next (INVALID_SHARE_SESSION_EPOCH
// otherwise; SHARE_SESSION_NOT_FOUND with no session). A ShareFetch adds
// its partitions to the session and drops the forgotten ones; the session
// fetches from all of them. group.share.max.share.sessions bounds the
// sessions of one broker (SHARE_SESSION_LIMIT_REACHED).

import (
	"slices"

	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shareSessionKey names a share session on one broker.
type shareSessionKey struct {
	broker        int32
	group, member string
}

// shareTP is a topic partition by topic id.
type shareTP struct {
	topicID   [16]byte
	partition int32
}

// shareSession is one member's session with one broker.
type shareSession struct {
	key   shareSessionKey
	cn    *conn
	epoch int32 // the epoch the next request must carry
	parts []shareTP
}

// defaultShareMaxSessions is group.share.max.share.sessions' default.
const defaultShareMaxSessions = 2000

func (c *Cluster) shareMaxSessions() int {
	if c.cfg.ShareGroupMaxShareSessions > 0 {
		return c.cfg.ShareGroupMaxShareSessions
	}
	return defaultShareMaxSessions
}

// shareSessionOp is what a request does to its session.
type shareSessionOp int

const (
	sessionFetch shareSessionOp = iota // ShareFetch
	sessionAck                         // ShareAcknowledge: never opens one
)

// updateShareSession applies a request's epoch to its session: it opens,
// checks and moves on, or closes it. It returns the session (removed from
// the cache when closing) and whether it closed; code is the request's
// error. old is a session a new one replaced, whose acquisitions go.
func (cn *conn) updateShareSession(group, member string, epoch int32, op shareSessionOp) (s *shareSession, closing bool, code int16) {
	c := cn.b.c
	var replaced *shareSession
	defer func() {
		// A member opening a new session ends its old one: what the old
		// one acquired goes back (outside c.shares.mu, which the release
		// takes).
		if replaced != nil {
			c.releaseShareMember(group, member, replaced.keys())
		}
	}()
	key := shareSessionKey{broker: cn.b.id, group: group, member: member}
	c.shares.mu.Lock()
	defer c.shares.mu.Unlock()
	if c.shares.sessions == nil {
		c.shares.sessions = map[shareSessionKey]*shareSession{}
	}
	cur := c.shares.sessions[key]
	switch epoch {
	case 0:
		if op == sessionAck {
			return nil, false, kerr.InvalidShareSessionEpoch.Code
		}
		if cur == nil && c.shareSessionsOn(cn.b.id) >= c.shareMaxSessions() {
			return nil, false, kerr.ShareSessionLimitReached.Code
		}
		s = &shareSession{key: key, cn: cn, epoch: 1}
		c.shares.sessions[key] = s
		replaced = cur
		return s, false, 0
	case -1:
		if cur == nil {
			return nil, false, kerr.ShareSessionNotFound.Code
		}
		delete(c.shares.sessions, key)
		return cur, true, 0
	}
	switch {
	case cur == nil:
		return nil, false, kerr.ShareSessionNotFound.Code
	case epoch != cur.epoch:
		return nil, false, kerr.InvalidShareSessionEpoch.Code
	}
	cur.epoch++
	if cur.epoch < 0 {
		cur.epoch = 1 // Kafka's nextEpoch wraps past MaxInt32 to 1
	}
	return cur, false, 0
}

// shareSessionsOn counts broker's sessions. Callers hold c.shares.mu.
func (c *Cluster) shareSessionsOn(broker int32) int {
	n := 0
	for k := range c.shares.sessions {
		if k.broker == broker {
			n++
		}
	}
	return n
}

// keys are the session's share partitions.
func (s *shareSession) keys() []share.Key {
	out := make([]share.Key, len(s.parts))
	for i, tp := range s.parts {
		out[i] = share.Key{Group: s.key.group, TopicID: tp.topicID, Partition: tp.partition}
	}
	return out
}

// add and forget change the session's partitions. Callers hold
// c.shares.mu or own the session.
func (s *shareSession) add(tp shareTP) {
	if !slices.Contains(s.parts, tp) {
		s.parts = append(s.parts, tp)
	}
}

func (s *shareSession) forget(tp shareTP) {
	s.parts = slices.DeleteFunc(s.parts, func(x shareTP) bool { return x == tp })
}

// closeShareSessions ends the sessions a closing connection opened: their
// acquisitions go back, as Kafka releases them when the connection goes.
// Not when the connection goes because its broker stopped: a crashed
// broker writes nothing, and the partition's next leader reads the state
// as it was (the acquisitions were never written).
func (cn *conn) closeShareSessions() {
	c := cn.b.c
	released := cn.b.up.Load()
	c.shares.mu.Lock()
	var gone []*shareSession
	for k, s := range c.shares.sessions {
		if s.cn == cn {
			gone = append(gone, s)
			delete(c.shares.sessions, k)
		}
	}
	c.shares.mu.Unlock()
	for _, s := range gone {
		if released {
			c.releaseShareMember(s.key.group, s.key.member, s.keys())
		}
	}
}
