package server

// Fetch, versions 4-18 (topic IDs from v13), for consumers. v18 adds only
// the partition's HighWatermark, a follower's (KIP-1166); consumers send
// the default and Kafka reads it only from followers, so it is ignored.
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
// Fetch sessions (KIP-227, v7+) are Kafka's: each broker keeps a cache
// (package fetchsession, fetch_session.go); a full fetch (epoch 0) may open
// a session, an incremental one reads every partition of its session and
// answers only those that changed; epoch -1 is a fetch without a session.
// A replica id >= 0
// is a follower we do not know: UNKNOWN_LEADER_EPOCH if it sent an epoch,
// else NOT_LEADER_OR_FOLLOWER, as Kafka answers an unknown follower.
//
// With the authorizer a topic needs READ (TOPIC_AUTHORIZATION_FAILED,
// checked before the topic's existence).

import (
	"time"

	"github.com/fakekafka/fakekafka/fetchsession"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleFetch(req *kmsg.FetchRequest) (kmsg.Response, error) {
	fs := &cn.fetchState
	ctx := cn.fetchContext(req)
	if ctx.Kind == fetchsession.SessionError {
		return fs.sessionError(req, ctx.ErrorCode), nil
	}
	if err := cn.fetch(req, ctx.Partitions); err != nil {
		return nil, err
	}
	return cn.fetchResponse(req, &ctx), nil
}

// fetch reads ctx's partitions into cn.fetchState, long-polling until
// there is enough to answer.
func (cn *conn) fetch(req *kmsg.FetchRequest, parts []fetchsession.Fetch) error {
	c := cn.b.c
	bytes, stop := cn.readFetch(req, parts)
	if stop || req.MaxWaitMillis <= 0 || bytes >= int(req.MinBytes) {
		return nil
	}

	fs := &cn.fetchState
	wake := fs.wakeChan()
	watched := cn.watchFetch(req.Version, parts, wake)
	defer func() {
		for _, p := range watched {
			p.unwatch(wake)
		}
		clear(watched)
		fs.watched = watched[:0]
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
		bytes, stop = cn.readFetch(req, parts)
		if stop || bytes >= int(req.MinBytes) {
			return nil
		}
		// Every way out of the wait reads again: the records gathered
		// for this answer go back to the pools while it waits.
		cn.fetchSpace.release()
		cn.parkBegin() // a delayed fetch: no handler time
		select {
		case <-wake:
			cn.parkEnd()
		case <-timer.C:
			cn.readFetch(req, parts)
			return nil
		case <-wall.C:
			cn.readFetch(req, parts)
			return nil
		case <-cn.closed:
			return errCloseConn
		case <-c.closing:
			return errCloseConn
		}
	}
}
