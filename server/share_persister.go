package server

// The share.Persister a share partition's leader keeps its state through,
// as Kafka 4.4's DefaultStatePersister: each call finds the share
// coordinator of its key (the leader of its __share_group_state
// partition) and runs there. NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
// COORDINATOR_LOAD_IN_PROGRESS and UNKNOWN_TOPIC_OR_PARTITION are
// retried, at most 5 attempts in all, after an exponential backoff from
// 1 s (2 s, 4 s, 8 s, 16 s; ±20% jitter; at most 30 s), as Kafka's
// PersisterStateManager does; the last error is the answer. The backoff
// runs on the wall clock (like the retry of marker writes): a test on the
// manual clock need not advance it for a failover to heal.
//
// Its answers are the share coordinator's, as Kafka 4.4's: a Read (or a
// Write) of a share partition never initialized is INVALID_REQUEST (Kafka's
// group coordinator initializes a share partition, InitializeShareGroupState
// at the group epoch, before it assigns it), and a Write's batches are merged
// into the state kept (where they overlap, the higher delivery count wins,
// then the higher state), not put in its place. A Write does not move the
// stored leader epoch; a Read at a new leader epoch does.

import (
	"math/rand/v2"
	"time"

	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's PersisterStateManager retry settings.
const (
	sharePersisterAttempts   = 5
	sharePersisterBackoff    = time.Second
	sharePersisterBackoffMax = 30 * time.Second
)

// sharePersister is the cluster's share.Persister.
type sharePersister struct {
	c *Cluster
	// attempts, backoff and backoffMax are Kafka's; tests shorten them.
	attempts            int
	backoff, backoffMax time.Duration
	// attempted, if set, hears each attempt's number and code (tests).
	attempted func(n int, code int16)
}

// newSharePersister is the persister share partitions use: the share
// coordinators of this cluster.
func (c *Cluster) newSharePersister() share.Persister {
	return &sharePersister{c: c, attempts: sharePersisterAttempts, backoff: sharePersisterBackoff, backoffMax: sharePersisterBackoffMax}
}

// shareRetriable says whether the persister tries again after code.
func shareRetriable(code int16) bool {
	switch code {
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code, kerr.UnknownTopicOrPartition.Code:
		return true
	}
	return false
}

// call runs op on the current share coordinator of k until it answers
// something not retriable or the attempts are used up.
func (p *sharePersister) call(k share.Key, op func(broker int32) share.Result) share.Result {
	var res share.Result
	for attempt := 1; ; attempt++ {
		broker, code := p.c.shareCoordinatorOf(k)
		if code == 0 {
			res = op(broker)
		} else {
			res = share.Result{Code: code}
		}
		if p.attempted != nil {
			p.attempted(attempt, res.Code)
		}
		if !shareRetriable(res.Code) || attempt >= p.attempts {
			return res
		}
		if !p.sleep(attempt) {
			return res
		}
	}
}

// sleep waits the backoff after attempt n (ExponentialBackoff with base 2
// and 20% jitter); false when the cluster closes meanwhile.
func (p *sharePersister) sleep(n int) bool {
	d := p.backoff << n
	if d > p.backoffMax || d <= 0 {
		d = p.backoffMax
	}
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.c.closing:
		return false
	}
}

func (p *sharePersister) Initialize(k share.Key, stateEpoch int32, startOffset int64) int16 {
	return p.call(k, func(b int32) share.Result { return p.c.shareInitialize(b, k, stateEpoch, startOffset) }).Code
}

func (p *sharePersister) Read(k share.Key, leaderEpoch int32) (share.PartitionState, int16) {
	r := p.call(k, func(b int32) share.Result { return p.c.shareRead(b, k, leaderEpoch) })
	if r.Code != 0 {
		return share.PartitionState{}, r.Code
	}
	return share.PartitionState{StateEpoch: r.Offset.StateEpoch, LeaderEpoch: leaderEpoch, StartOffset: r.Offset.StartOffset,
		DeliveryCompleteCount: r.Offset.DeliveryCompleteCount, Batches: r.Offset.Batches}, 0
}

func (p *sharePersister) Write(k share.Key, st share.PartitionState) int16 {
	w := share.WriteState{StateEpoch: st.StateEpoch, LeaderEpoch: st.LeaderEpoch, StartOffset: st.StartOffset,
		DeliveryCompleteCount: st.DeliveryCompleteCount, Batches: st.Batches}
	return p.call(k, func(b int32) share.Result { return p.c.shareWrite(b, k, w) }).Code
}

func (p *sharePersister) Delete(k share.Key) int16 {
	return p.call(k, func(b int32) share.Result { return p.c.shareDelete(b, k) }).Code
}

func (p *sharePersister) ReadSummary(k share.Key, _ int32) (share.PartitionState, int16) {
	r := p.call(k, func(b int32) share.Result { return p.c.shareReadSummary(b, k) })
	if r.Code != 0 {
		return share.PartitionState{}, r.Code
	}
	return share.PartitionState{StateEpoch: r.Offset.StateEpoch, LeaderEpoch: r.Offset.LeaderEpoch, StartOffset: r.Offset.StartOffset,
		DeliveryCompleteCount: r.Offset.DeliveryCompleteCount}, 0
}

// readSummary is ReadSummary with the delivery complete count, for
// DescribeShareGroupOffsets' lag.
func (p *sharePersister) readSummary(k share.Key) share.Result {
	return p.call(k, func(b int32) share.Result { return p.c.shareReadSummary(b, k) })
}
