// Package replication is the replicated-partition state machine of
// fakekafka: every replica's log, log end offset (LEO) and high watermark
// (HW), the ISR, leader epochs and their caches, idempotent producer state,
// elections and truncation.
//
// Like etcd's raft package it has no goroutines, sockets or clocks of its
// own: callers pass the time in and drive each step ("follower 2 fetches
// once"), so tests can check every offset. A Partition is not safe for
// concurrent use; the server guards each one with its own lock.
package replication

import (
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TruncationMode says how a replica that becomes a follower finds the point
// where its log diverges from the new leader's.
type TruncationMode int

const (
	// TruncateByEpoch is Kafka 0.11+ (KIP-101, KIP-279): ask the leader for
	// the end offset of the follower's latest epoch, iterating down.
	TruncateByEpoch TruncationMode = iota
	// TruncateToHW is the pre-0.11 rule: cut the log to the replica's own HW.
	// It reproduces both data-loss scenarios of KIP-101.
	TruncateToHW
)

// Config holds the per-partition settings that shape replication.
type Config struct {
	// MinInsyncReplicas is min.insync.replicas; values below 1 mean 1.
	MinInsyncReplicas int
	// ReplicaLagTimeMax is replica.lag.time.max.ms: a follower that has not
	// caught up for longer drops out of the ISR.
	ReplicaLagTimeMax time.Duration
	// UncleanLeaderElection is unclean.leader.election.enable.
	UncleanLeaderElection bool
	// Truncation picks epoch-based (default) or legacy HW truncation.
	Truncation TruncationMode
	// FlushMessages is flush.messages: flush a replica's log once this many
	// records are unflushed. 0 never flushes on count (Kafka's default), so
	// a power loss takes everything since the last clean shutdown.
	FlushMessages int64
	// LegacyMinISR restores the pre-3.7 behaviour where the HW advances even
	// while the ISR is below min.insync.replicas (KAFKA-15583 changed it),
	// which makes NOT_ENOUGH_REPLICAS_AFTER_APPEND the usual acks=all answer
	// to an ISR shrink instead of REQUEST_TIMED_OUT.
	LegacyMinISR bool
}

// DefaultReplicaLagTimeMax is Kafka's replica.lag.time.max.ms default.
const DefaultReplicaLagTimeMax = 30 * time.Second

// followerState is the leader's view of a follower (Kafka's Replica.scala),
// learnt only from the follower's fetches.
type followerState struct {
	leo                int64 // fetch offset of the latest fetch; -1 unknown
	lastFetchTime      time.Time
	lastFetchLeaderLEO int64
	lastCaughtUp       time.Time
}

// FollowerView is what the leader knows of one follower, as Kafka's
// Replica.scala keeps it: the offset of its latest fetch (its LEO as far as
// the leader knows, -1 before the first fetch in this epoch), when it last
// fetched and when it was last caught up. The ISR shrink check reads
// LastCaughtUp.
type FollowerView struct {
	LEO          int64
	LastFetch    time.Time
	LastCaughtUp time.Time
}

// FollowerView returns the leader's view of the follower on broker id;
// false for the leader itself, an unknown broker or a leaderless partition.
func (p *Partition) FollowerView(id int32) (FollowerView, bool) {
	r := p.Replica(id)
	if r == nil || p.leader < 0 || id == p.leader {
		return FollowerView{}, false
	}
	return FollowerView{LEO: r.remote.leo, LastFetch: r.remote.lastFetchTime, LastCaughtUp: r.remote.lastCaughtUp}, true
}

// Replica is one broker's copy of a partition.
type Replica struct {
	Broker int32
	log    Log
	hw     int64
	prod   producers
	online bool

	remote     followerState // valid while another replica leads
	truncating bool          // must find its divergence point before fetching

	recoveryPoint int64 // below it the log survives a power loss
	checkpointHW  int64 // the HW a restart comes back with
	isolated      bool  // cut off from the other brokers and the controller
}

// Isolated reports whether the replica is cut off from the other brokers.
func (r *Replica) Isolated() bool { return r.isolated }

// RecoveryPoint is the offset below which the replica's log is flushed.
func (r *Replica) RecoveryPoint() int64 { return r.recoveryPoint }

// Log returns the replica's log (read-only use).
func (r *Replica) Log() *Log { return &r.log }

// LEO is the replica's log end offset.
func (r *Replica) LEO() int64 { return r.log.end }

// HW is the replica's own high watermark.
func (r *Replica) HW() int64 { return r.hw }

// LogStartOffset is the replica's log start offset.
func (r *Replica) LogStartOffset() int64 { return r.log.start }

// Online reports whether the replica's broker is up.
func (r *Replica) Online() bool { return r.online }

// setHW clamps to [log start, LEO], as UnifiedLog.updateHighWatermark does.
func (r *Replica) setHW(hw int64) {
	r.hw = min(max(hw, r.log.start), r.log.end)
}

func (r *Replica) truncateTo(offset int64) {
	if offset >= r.log.end {
		return
	}
	r.log.truncateTo(offset)
	r.setHW(r.hw)
	r.recoveryPoint = min(r.recoveryPoint, r.log.end)
	r.prod.rebuild(&r.log)
}

// Partition is one topic partition: its replicas in assignment order (also
// the election order), the leader, leader epoch and ISR.
type Partition struct {
	cfg        Config
	replicas   []*Replica
	leader     int32 // broker id, -1 when leaderless
	epoch      int32
	isr        []int32 // kept in assignment order
	epochStart int64   // leader's LEO when it took the current epoch

	// A zombie is a deposed leader cut off from the controller and the
	// other brokers: it still believes it leads at zombieEpoch with
	// zombieISR, so it keeps taking writes that can never commit.
	zombie      int32
	zombieEpoch int32
	zombieISR   []int32

	changes   []Change     // since the last TakeChanges (changes.go)
	committed int64        // the highest HW any leader reached
	history   []EpochEntry // epoch cache of the leader that committed up to committed
}

// NewPartition creates a partition whose first replica leads at epoch 0
// with every replica in the ISR, as a freshly created Kafka topic does.
func NewPartition(replicas []int32, cfg Config, now time.Time) *Partition {
	p := &Partition{cfg: cfg, leader: -1, epoch: -1, zombie: -1}
	for _, id := range replicas {
		p.replicas = append(p.replicas, &Replica{Broker: id, prod: newProducers(), online: true})
		p.isr = append(p.isr, id)
	}
	if len(replicas) > 0 {
		p.becomeLeader(replicas[0], now)
		p.history = p.LeaderReplica().log.Epochs()
	}
	p.changes = nil // creation is not news
	return p
}

// Config returns the partition's settings.
func (p *Partition) Config() Config { return p.cfg }

// SetConfig changes the settings (min.insync.replicas and friends); the HW
// is re-evaluated since a lower minimum may let it move.
func (p *Partition) SetConfig(cfg Config, now time.Time) {
	p.cfg = cfg
	p.maybeIncrementHW(now)
}

// Leader is the leader's broker id, or -1.
func (p *Partition) Leader() int32 { return p.leader }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 { return p.epoch }

// ISR returns a copy of the in-sync replica set, in assignment order.
func (p *Partition) ISR() []int32 { return slices.Clone(p.isr) }

// InISR reports whether broker id is in the ISR.
func (p *Partition) InISR(id int32) bool { return slices.Contains(p.isr, id) }

// Replicas returns the partition's replicas in assignment order.
func (p *Partition) Replicas() []*Replica { return p.replicas }

// Replica returns the replica on broker id, or nil.
func (p *Partition) Replica(id int32) *Replica {
	for _, r := range p.replicas {
		if r.Broker == id {
			return r
		}
	}
	return nil
}

// LeaderReplica returns the leader's replica, or nil when leaderless.
func (p *Partition) LeaderReplica() *Replica {
	if p.leader < 0 {
		return nil
	}
	return p.Replica(p.leader)
}

// HW is the leader's high watermark, or -1 when leaderless.
func (p *Partition) HW() int64 {
	if l := p.LeaderReplica(); l != nil {
		return l.hw
	}
	return -1
}

// EpochStartOffset is the leader's LEO when it took the current epoch.
func (p *Partition) EpochStartOffset() int64 { return p.epochStart }

// EffectiveMinISR is min(min.insync.replicas, replication factor), at least
// 1 (KAFKA-15583, Kafka 3.7+).
func (p *Partition) EffectiveMinISR() int {
	return max(1, min(p.cfg.MinInsyncReplicas, len(p.replicas)))
}

// UnderMinISR reports whether the ISR is smaller than the effective minimum.
func (p *Partition) UnderMinISR() bool { return len(p.isr) < p.EffectiveMinISR() }

// AppendResult is what the leader answers for an appended batch.
type AppendResult struct {
	BaseOffset     int64
	LogStartOffset int64
	Duplicate      bool // a retry of a batch already in the log
	Required       int64
}

// Append appends batch b on the leader (Kafka's appendRecordsToLeader). b's
// BaseOffset/LastOffset hold the producer's values (base 0, last = delta);
// Append assigns the real offsets, stamps the leader epoch into b and into
// b.Raw, and returns the error code a Produce response would carry.
//
// With acks -1 it refuses with NOT_ENOUGH_REPLICAS when the ISR is below
// min.insync.replicas, before appending anything. An idempotent retry of
// one of the producer's last five batches appends nothing and returns the
// original offset.
func (p *Partition) Append(b *Batch, acks int16, now time.Time) (AppendResult, int16) {
	l := p.LeaderReplica()
	if l == nil {
		return AppendResult{}, kerr.NotLeaderForPartition.Code
	}
	if acks == -1 && p.UnderMinISR() {
		return AppendResult{}, kerr.NotEnoughReplicas.Code
	}
	res, code := p.appendTo(l, b, p.epoch)
	if code == 0 && !res.Duplicate {
		p.maybeIncrementHW(now)
	}
	return res, code
}

// appendTo checks an idempotent batch against r's producer state, then
// stamps it with the next offsets and epoch and appends it to r's log.
func (p *Partition) appendTo(r *Replica, b *Batch, epoch int32) (AppendResult, int16) {
	dup, isDup, code := r.prod.check(b)
	if code != 0 {
		return AppendResult{}, code
	}
	if isDup {
		end := dup.firstOffset + int64(b.LastOffset-b.BaseOffset) + 1
		return AppendResult{BaseOffset: dup.firstOffset, LogStartOffset: r.log.start, Duplicate: true, Required: end}, 0
	}
	p.stamp(b, r.log.end, epoch)
	r.log.append(b)
	r.prod.update(b)
	p.maybeFlush(r)
	return AppendResult{BaseOffset: b.BaseOffset, LogStartOffset: r.log.start, Required: b.EndOffset()}, 0
}

func (p *Partition) isZombie(broker int32) bool { return p.zombie >= 0 && broker == p.zombie }

// View is the partition as broker sees it: the truth, except for a zombie
// leader, which still sees itself leading at its old epoch with its old ISR.
func (p *Partition) View(broker int32) (leader, epoch int32, isr []int32) {
	if p.isZombie(broker) {
		return p.zombie, p.zombieEpoch, slices.Clone(p.zombieISR)
	}
	return p.leader, p.epoch, p.ISR()
}

// AppendAs appends on behalf of broker: the leader appends normally, a
// zombie appends to its own log under its old epoch (acks=1 succeeds, the
// records are lost when it rejoins), anyone else gets NOT_LEADER_OR_FOLLOWER.
func (p *Partition) AppendAs(broker int32, b *Batch, acks int16, now time.Time) (AppendResult, int16) {
	if !p.isZombie(broker) {
		if broker != p.leader {
			return AppendResult{}, kerr.NotLeaderForPartition.Code
		}
		return p.Append(b, acks, now)
	}
	if acks == -1 && len(p.zombieISR) < p.EffectiveMinISR() {
		return AppendResult{}, kerr.NotEnoughReplicas.Code
	}
	return p.appendTo(p.Replica(broker), b, p.zombieEpoch)
}

// stamp gives b its offsets and leader epoch, in the struct and the bytes.
func (p *Partition) stamp(b *Batch, base int64, epoch int32) {
	delta := b.LastOffset - b.BaseOffset
	b.BaseOffset = base
	b.LastOffset = base + delta
	b.Epoch = epoch
	protocol.SetBaseOffset(b.Raw, b.BaseOffset)
	protocol.SetPartitionLeaderEpoch(b.Raw, b.Epoch)
}

// Isolate cuts broker id off from the other brokers and the controller
// while clients can still reach it. If it leads, it becomes a zombie: the
// controller will fence it and elect someone else, but it goes on believing
// it leads.
func (p *Partition) Isolate(id int32) {
	r := p.Replica(id)
	if r == nil || r.isolated {
		return
	}
	r.isolated = true
	if id == p.leader {
		p.zombie, p.zombieEpoch, p.zombieISR = id, p.epoch, p.ISR()
	}
}

// Heal reconnects broker id. A zombie learns it was deposed, becomes a
// follower and truncates what it took meanwhile.
func (p *Partition) Heal(id int32) {
	r := p.Replica(id)
	if r == nil || !r.isolated {
		return
	}
	r.isolated = false
	if id == p.zombie {
		p.zombie, p.zombieISR = -1, nil
	}
	if id != p.leader && r.online {
		p.becomeFollower(r)
	}
}

// AppendStatus tells a parked acks=all produce on broker whether it is done
// (Kafka's DelayedProduce check): NONE once the HW reaches required with
// enough replicas in the ISR, NOT_ENOUGH_REPLICAS_AFTER_APPEND if the HW got
// there with too few, NOT_LEADER_OR_FOLLOWER once the broker no longer leads
// in the epoch the append happened in.
func (p *Partition) AppendStatus(broker, epoch int32, required int64) (done bool, code int16) {
	if p.isZombie(broker) && epoch == p.zombieEpoch {
		// Its followers left it and it cannot shrink the ISR without the
		// controller: the HW never gets there, the request expires.
		return false, kerr.RequestTimedOut.Code
	}
	if p.leader != broker || p.epoch != epoch {
		return true, kerr.NotLeaderForPartition.Code
	}
	if p.LeaderReplica().hw < required {
		return false, kerr.RequestTimedOut.Code
	}
	if p.UnderMinISR() {
		return true, kerr.NotEnoughReplicasAfterAppend.Code
	}
	return true, 0
}

// caughtUp is Kafka's Replica.isCaughtUp.
func (p *Partition) caughtUp(r *Replica, leaderLEO int64, now time.Time) bool {
	return r.remote.leo == leaderLEO || now.Sub(r.remote.lastCaughtUp) <= p.lagTimeMax()
}

func (p *Partition) lagTimeMax() time.Duration {
	if p.cfg.ReplicaLagTimeMax > 0 {
		return p.cfg.ReplicaLagTimeMax
	}
	return DefaultReplicaLagTimeMax
}

// maybeIncrementHW is Kafka's Partition.maybeIncrementLeaderHW: the minimum
// LEO over the ISR and over caught-up online replicas outside it, frozen
// while the ISR is below min.insync.replicas (3.7+), never moving back.
func (p *Partition) maybeIncrementHW(now time.Time) bool {
	l := p.LeaderReplica()
	if l == nil {
		return false
	}
	if !p.cfg.LegacyMinISR && p.UnderMinISR() {
		return false
	}
	hw := l.log.end
	for _, r := range p.replicas {
		if r == l {
			continue
		}
		if p.InISR(r.Broker) || (r.online && p.caughtUp(r, l.log.end, now)) {
			hw = min(hw, r.remote.leo)
		}
	}
	if hw > l.hw {
		l.setHW(hw)
		p.committed = max(p.committed, l.hw)
		return true
	}
	return false
}

// FetchResult describes one follower fetch round trip.
type FetchResult struct {
	Batches   int   // batches copied to the follower
	Truncated int64 // records the follower truncated first, if any
	HW        int64 // leader HW carried by the response
}

// Progress reports whether the step changed anything the follower or the
// leader will act on, so a driver knows to fetch again.
func (f FetchResult) Progress() bool { return f.Batches > 0 || f.Truncated > 0 }

// ReplicaFetch runs one complete fetch by the follower on broker id against
// the current leader, with no network in between: first the follower
// truncates if it has just become a follower; then the leader reads from the
// follower's LEO (capturing its HW before anything else, as Kafka does),
// records the fetch offset as the follower's LEO (which may expand the ISR
// and advance the HW), and the follower appends the shared batches and sets
// its HW to min(leader HW, own LEO).
//
// Because the leader learns a follower's LEO only from its next fetch, an
// acks=all write needs two fetches to commit and the follower learns the new
// HW on the one after.
func (p *Partition) ReplicaFetch(id int32, maxBytes int32, now time.Time) (FetchResult, int16) {
	return p.ReplicaFetchUpTo(id, maxBytes, -1, now)
}

// ReplicaFetchUpTo is ReplicaFetch copying only batches that end at or
// before upTo (-1: no limit), so a test can step a follower to an exact
// offset ("follower 2 replicates up to 5").
func (p *Partition) ReplicaFetchUpTo(id int32, maxBytes int32, upTo int64, now time.Time) (FetchResult, int16) {
	l := p.LeaderReplica()
	f := p.Replica(id)
	switch {
	case l == nil:
		return FetchResult{}, kerr.NotLeaderForPartition.Code
	case f == nil || f == l:
		return FetchResult{}, kerr.UnknownTopicOrPartition.Code
	case !l.online || !f.online || l.isolated || f.isolated:
		return FetchResult{}, kerr.ReplicaNotAvailable.Code
	}
	var res FetchResult
	if f.truncating {
		before := f.log.end
		p.truncateFollower(f, l)
		res.Truncated = before - f.log.end
	}
	switch {
	case f.log.end > l.log.end:
		// Only possible after an unclean election or HW truncation: the
		// follower's fetch is out of range and it cuts to the leader's LEO.
		before := f.log.end
		p.truncate(f, l.log.end, ReasonAheadOfLeader)
		res.Truncated += before - f.log.end
	case f.log.end < l.log.start:
		f.log.truncateFully(l.log.start)
		f.recoveryPoint = l.log.start
		f.setHW(f.hw)
		f.prod.rebuild(&f.log)
	}

	fetchOffset := f.log.end
	res.HW = l.hw
	bound := l.log.end
	if upTo >= 0 {
		bound = min(bound, upTo)
	}
	batches := l.log.Read(fetchOffset, bound, maxBytes)
	p.updateFollowerFetchState(f, fetchOffset, now)

	for _, b := range batches {
		f.log.append(b)
		f.prod.update(b)
	}
	p.maybeFlush(f)
	res.Batches = len(batches)
	f.setHW(res.HW)
	return res, 0
}

// updateFollowerFetchState is Kafka's Replica.updateFetchStateOrThrow plus
// the ISR expansion and HW check that follow it.
func (p *Partition) updateFollowerFetchState(f *Replica, fetchOffset int64, now time.Time) {
	l := p.LeaderReplica()
	prev := f.remote
	switch {
	case fetchOffset >= l.log.end:
		f.remote.lastCaughtUp = later(prev.lastCaughtUp, now)
	case fetchOffset >= prev.lastFetchLeaderLEO:
		f.remote.lastCaughtUp = later(prev.lastCaughtUp, prev.lastFetchTime)
	}
	f.remote.leo = fetchOffset
	f.remote.lastFetchLeaderLEO = l.log.end
	f.remote.lastFetchTime = now
	p.maybeExpandISR(f)
	p.maybeIncrementHW(now)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// maybeExpandISR adds a follower whose LEO has reached both the leader's HW
// and the start of the current leader epoch (KAFKA-7128).
func (p *Partition) maybeExpandISR(f *Replica) {
	if p.InISR(f.Broker) || !f.online {
		return
	}
	l := p.LeaderReplica()
	if f.remote.leo >= l.hw && f.remote.leo >= p.epochStart {
		p.isr = p.inAssignmentOrder(append(p.isr, f.Broker))
		p.note(Change{Kind: ISRExpanded, Broker: f.Broker, Reason: ReasonCaughtUp})
	}
}

// truncateFollower finds where f diverges from leader l and cuts f there.
func (p *Partition) truncateFollower(f, l *Replica) {
	f.truncating = false
	if p.cfg.Truncation == TruncateToHW {
		p.truncate(f, f.hw, ReasonHighWatermark)
		return
	}
	// Each round is one OffsetsForLeaderEpoch request (KIP-279).
	for {
		leaderEpoch, leaderEnd := l.log.EndOffsetForEpoch(f.log.LatestEpoch())
		if leaderEnd < 0 {
			p.truncate(f, min(f.hw, f.log.end), ReasonLeaderEpoch)
			return
		}
		followerEpoch, followerEnd := f.log.EndOffsetForEpoch(leaderEpoch)
		if followerEnd < 0 {
			p.truncate(f, min(leaderEnd, f.log.end), ReasonLeaderEpoch)
			return
		}
		if followerEpoch != leaderEpoch {
			before := f.log.LatestEpoch()
			p.truncate(f, min(followerEnd, f.log.end), ReasonLeaderEpoch)
			if f.log.LatestEpoch() == before {
				return // nothing left to learn
			}
			continue
		}
		p.truncate(f, min(followerEnd, leaderEnd, f.log.end), ReasonLeaderEpoch)
		return
	}
}

// MaybeShrinkISR drops followers that have not caught up within
// replica.lag.time.max.ms (Kafka's maybeShrinkIsr, which the leader runs
// every lag/2) and returns the removed ids.
func (p *Partition) MaybeShrinkISR(now time.Time) []int32 {
	l := p.LeaderReplica()
	if l == nil || l.isolated || !l.online {
		// An isolated leader's AlterPartition never arrives; a crashed one
		// sends none: its ISR stands until the controller fences it.
		return nil
	}
	var out []int32
	for _, id := range p.isr {
		r := p.Replica(id)
		if r != l && !p.caughtUp(r, l.log.end, now) {
			out = append(out, id)
		}
	}
	if len(out) > 0 {
		p.isr = slices.DeleteFunc(p.isr, func(id int32) bool { return slices.Contains(out, id) })
		for _, id := range out {
			p.note(Change{Kind: ISRShrunk, Broker: id, Reason: ReasonLag})
		}
		p.maybeIncrementHW(now)
	}
	return out
}

// SetISR replaces the ISR (as an AlterPartition or an operator would).
// Unknown ids are ignored and the leader always stays in.
func (p *Partition) SetISR(isr []int32, now time.Time) {
	var next []int32
	for _, r := range p.replicas {
		if slices.Contains(isr, r.Broker) || r.Broker == p.leader {
			next = append(next, r.Broker)
		}
	}
	prev := p.isr
	for _, id := range p.isr {
		if !slices.Contains(next, id) {
			p.markOutOfSync(id)
		}
	}
	p.isr = next
	p.noteISRDiff(prev, ReasonManual)
	p.maybeIncrementHW(now)
}

// markOutOfSync forgets when a follower that was just pushed out of the ISR
// last caught up, so it no longer holds the HW back (as a shrink would).
func (p *Partition) markOutOfSync(id int32) {
	if r := p.Replica(id); r != nil && id != p.leader {
		r.remote.lastCaughtUp = time.Time{}
	}
}

func (p *Partition) inAssignmentOrder(ids []int32) []int32 {
	out := ids[:0:0]
	for _, r := range p.replicas {
		if slices.Contains(ids, r.Broker) {
			out = append(out, r.Broker)
		}
	}
	return out
}

// becomeLeader makes broker id leader with a new epoch (Kafka's makeLeader):
// the epoch starts at its LEO, it does not truncate, and its view of every
// follower is reset so the HW waits for fresh fetches.
func (p *Partition) becomeLeader(id int32, now time.Time) {
	p.epoch++
	p.leader = id
	l := p.Replica(id)
	l.truncating = false
	l.log.assignEpoch(p.epoch, l.log.end)
	p.epochStart = l.log.end
	for _, r := range p.replicas {
		if r == l {
			continue
		}
		if r.online {
			p.becomeFollower(r)
		} else {
			r.truncating = true // it will find out when it returns
		}
		r.remote = followerState{leo: -1, lastFetchLeaderLEO: -1}
		if p.InISR(r.Broker) {
			r.remote.lastCaughtUp = now
		}
	}
	p.maybeIncrementHW(now)
}

// ElectionError says why no leader could be elected.
type ElectionError int16

// Code is the Kafka error code for the failure.
func (e ElectionError) Code() int16 { return int16(e) }

// Elect moves leadership to broker id (Kafka's clean or unclean election
// for an explicit candidate). A clean election needs id online and in the
// ISR; an unclean one only online, and resets the ISR to id.
func (p *Partition) Elect(id int32, unclean bool, now time.Time) int16 {
	r := p.Replica(id)
	switch {
	case r == nil:
		return kerr.InvalidReplicaAssignment.Code
	case !r.online:
		return kerr.ReplicaNotAvailable.Code
	case !p.InISR(id) && !unclean:
		return kerr.EligibleLeadersNotAvailable.Code
	case id == p.leader:
		return kerr.ElectionNotNeeded.Code
	}
	old, prev, mark := p.leader, p.isr, len(p.changes)
	if !p.InISR(id) {
		p.isr = []int32{id}
	}
	p.becomeLeader(id, now)
	p.noteElection(mark, old, prev, unclean)
	return 0
}

// ChooseLeader is the controller's choice: the current leader if it is
// online and in the ISR, else the first replica in assignment order that is
// online and in the ISR; failing that, if unclean election is enabled, the
// first online replica. Broker exclude (or -1) is never chosen: it is the
// one shutting down. -1 if none.
func (p *Partition) ChooseLeader(exclude int32) (id int32, unclean bool) {
	ok := func(r *Replica) bool { return r.online && r.Broker != exclude }
	if l := p.LeaderReplica(); l != nil && ok(l) && p.InISR(l.Broker) {
		return l.Broker, false
	}
	for _, r := range p.replicas {
		if ok(r) && p.InISR(r.Broker) {
			return r.Broker, false
		}
	}
	if p.cfg.UncleanLeaderElection {
		for _, r := range p.replicas {
			if ok(r) {
				return r.Broker, true
			}
		}
	}
	return -1, false
}

// SetOnline records that broker id's replica went down or came back, and
// nothing else: the controller decides separately whether to fence it out
// of the ISR and whom to elect. A replica coming back must truncate before
// it fetches.
func (p *Partition) SetOnline(id int32, online bool, now time.Time) {
	r := p.Replica(id)
	if r == nil || r.online == online {
		return
	}
	r.online = online
	if online && id != p.leader {
		p.becomeFollower(r)
	}
}

// MakeLeaderless records that no replica can lead: leader -1 with a new
// epoch, the ISR left as it was (its last member may be dead), as Kafka's
// controller does when no eligible replica remains.
func (p *Partition) MakeLeaderless() {
	if p.leader < 0 {
		return
	}
	old := p.leader
	p.leader = -1
	p.epoch++
	p.note(Change{Kind: LeaderChanged, Broker: -1, OldLeader: old})
}

// Crash takes broker id's replica down the way a process crash does: it
// is offline and its in-memory HW is gone (a restart reloads the last
// checkpoint). With powerLoss it also loses every record past its recovery
// point, the unflushed page cache, and the epochs that started there.
func (p *Partition) Crash(id int32, powerLoss bool) {
	r := p.Replica(id)
	if r == nil {
		return
	}
	r.online = false
	if powerLoss && r.recoveryPoint < r.log.end {
		from := r.log.end
		r.log.truncateTo(r.recoveryPoint)
		r.prod.rebuild(&r.log)
		p.noteTruncation(r, from, ReasonPowerLoss)
	}
}

// Shutdown takes broker id's replica down cleanly: the log is flushed and
// the HW checkpointed, so a restart loses nothing.
func (p *Partition) Shutdown(id int32) {
	r := p.Replica(id)
	if r == nil {
		return
	}
	r.recoveryPoint = r.log.end
	r.checkpointHW = r.hw
	r.online = false
}

// Restart brings broker id's replica back after a stop: its HW is the last
// checkpointed one clamped to its log (Kafka's replication-offset-checkpoint,
// possibly stale), and it must find its divergence from the leader before it
// fetches.
func (p *Partition) Restart(id int32) {
	r := p.Replica(id)
	if r == nil || r.online {
		return
	}
	r.setHW(r.checkpointHW)
	r.online = true
	if id != p.leader {
		p.becomeFollower(r)
	}
}

// becomeFollower starts r's truncation. Under TruncateToHW it happens at
// once, as before Kafka 0.11 (makeFollower cut the log to the HW before any
// fetch); by epoch it needs the leader's answer, so it runs on r's next fetch.
func (p *Partition) becomeFollower(r *Replica) {
	if p.cfg.Truncation == TruncateToHW {
		p.truncate(r, r.hw, ReasonHighWatermark)
		r.truncating = false
		return
	}
	r.truncating = true
}

// Flush marks everything broker id's replica holds as on disk.
func (p *Partition) Flush(id int32) {
	if r := p.Replica(id); r != nil && r.online {
		r.recoveryPoint = r.log.end
	}
}

// CheckpointHW writes every online replica's HW to its checkpoint, which a
// restart reloads (Kafka does this every replica.high.watermark.checkpoint.interval.ms).
func (p *Partition) CheckpointHW() {
	for _, r := range p.replicas {
		if r.online {
			r.checkpointHW = r.hw
		}
	}
}

// maybeFlush applies flush.messages after an append.
func (p *Partition) maybeFlush(r *Replica) {
	if n := p.cfg.FlushMessages; n > 0 && r.log.end-r.recoveryPoint >= n {
		r.recoveryPoint = r.log.end
	}
}

// RemoveFromISR drops broker id from the ISR unless it is the last member,
// as the KRaft controller does when it fences a broker.
func (p *Partition) RemoveFromISR(id int32, now time.Time) {
	if !p.InISR(id) || len(p.isr) == 1 {
		return
	}
	p.isr = slices.DeleteFunc(p.isr, func(x int32) bool { return x == id })
	p.note(Change{Kind: ISRShrunk, Broker: id, Reason: ReasonFenced})
	p.markOutOfSync(id)
	p.maybeIncrementHW(now)
}

// ReadResult is what a consumer fetch from one replica returns.
type ReadResult struct {
	Batches          []*Batch
	HW               int64
	LastStableOffset int64
	LogStartOffset   int64
	// Aborted lists the aborted transactions overlapping the batches, by
	// first offset; read_committed reads only.
	Aborted []AbortedTxn
}

// Read serves a read_uncommitted consumer fetch from replica id: records
// up to that replica's HW (consumers never see past it), or
// OFFSET_OUT_OF_RANGE when the offset is below its log start or past its
// LEO. An offset in [HW, LEO] returns no records and no error. The caller
// has already checked that the replica may serve.
func (p *Partition) Read(id int32, offset int64, maxBytes int32) (ReadResult, int16) {
	return p.read(id, offset, maxBytes, false)
}

// ReadCommitted serves a read_committed fetch: as Read, but bounded by the
// replica's last stable offset, with the aborted transactions of the range
// so the consumer can drop their records.
func (p *Partition) ReadCommitted(id int32, offset int64, maxBytes int32) (ReadResult, int16) {
	return p.read(id, offset, maxBytes, true)
}

func (p *Partition) read(id int32, offset int64, maxBytes int32, committed bool) (ReadResult, int16) {
	r := p.Replica(id)
	if r == nil {
		return ReadResult{}, kerr.NotLeaderForPartition.Code
	}
	res := ReadResult{HW: r.hw, LastStableOffset: r.LSO(), LogStartOffset: r.log.start}
	if offset < r.log.start || offset > r.log.end {
		return res, kerr.OffsetOutOfRange.Code
	}
	bound := r.hw
	if committed {
		bound = res.LastStableOffset
	}
	res.Batches = r.log.Read(offset, bound, maxBytes)
	if committed && len(res.Batches) > 0 {
		res.Aborted = r.prod.txns.abortedIn(offset, res.Batches[len(res.Batches)-1].EndOffset())
	}
	return res, 0
}

// OffsetForLeaderEpoch answers an OffsetForLeaderEpoch request served by
// replica id: the end offset of the requested epoch in its log.
func (p *Partition) OffsetForLeaderEpoch(id int32, epoch int32) (int32, int64) {
	r := p.Replica(id)
	if r == nil {
		return -1, -1
	}
	return r.log.EndOffsetForEpoch(epoch)
}

// DeleteRecords advances the log start offset on every replica up to
// offset (clamped to the leader's HW, as Kafka requires) and returns the
// new low watermark.
func (p *Partition) DeleteRecords(offset int64) (int64, int16) {
	l := p.LeaderReplica()
	if l == nil {
		return -1, kerr.NotLeaderForPartition.Code
	}
	if offset == -1 {
		offset = l.hw
	}
	if offset > l.hw || offset < 0 {
		return -1, kerr.OffsetOutOfRange.Code
	}
	for _, r := range p.replicas {
		r.log.advanceStart(min(offset, r.log.end))
		r.setHW(r.hw)
	}
	return l.log.start, 0
}
