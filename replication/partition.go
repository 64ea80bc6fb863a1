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
	// Segment is when each replica's active segment rolls.
	Segment SegmentConfig
	// Retention is cleanup.policy=delete's limits (retention.go).
	Retention RetentionConfig
	// Compaction is cleanup.policy=compact's settings (cleaner.go).
	Compaction CompactionConfig
}

// DefaultReplicaLagTimeMax is Kafka's replica.lag.time.max.ms default.
const DefaultReplicaLagTimeMax = 30 * time.Second

// followerState is the leader's view of a follower (Kafka's Replica.scala),
// learnt only from the follower's fetches.
type followerState struct {
	leo                int64 // fetch offset of the latest fetch; -1 unknown
	lastFetchTime      instant
	lastFetchLeaderLEO int64
	lastCaughtUp       instant
}

// instant is a time as Unix nanoseconds, 0 for never (the zero time.Time):
// a third of a time.Time, which every replica of every partition keeps two
// of.
type instant int64

func instantOf(t time.Time) instant {
	if t.IsZero() {
		return 0
	}
	return instant(t.UnixNano())
}

func (i instant) time() time.Time {
	if i == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(i))
}

// Replica is one broker's copy of a partition. Its log holds its HW,
// recovery point and producer state too (logdata.go), so an idle replica
// is this struct alone.
type Replica struct {
	Broker int32
	online bool
	// truncating: it must find its divergence point before fetching.
	truncating bool
	isolated   bool // cut off from the other brokers and the controller
	log        Log

	remote followerState // valid while another replica leads
}

// Isolated reports whether the replica is cut off from the other brokers.
func (r *Replica) Isolated() bool { return r.isolated }

// RecoveryPoint is the offset below which the replica's log is flushed.
func (r *Replica) RecoveryPoint() int64 { return r.log.recoveryPoint }

// Log returns the replica's log (read-only use).
func (r *Replica) Log() *Log { return &r.log }

// LEO is the replica's log end offset.
func (r *Replica) LEO() int64 { return r.log.end }

// HW is the replica's own high watermark.
func (r *Replica) HW() int64 { return r.log.hw }

// LogStartOffset is the replica's log start offset.
func (r *Replica) LogStartOffset() int64 { return r.log.start }

// Online reports whether the replica's broker is up.
func (r *Replica) Online() bool { return r.online }

// setHW clamps to [log start, LEO], as UnifiedLog.updateHighWatermark does.
func (r *Replica) setHW(hw int64) { r.log.setHW(hw) }

func (r *Replica) truncateTo(offset int64) {
	if offset >= r.log.end {
		return
	}
	r.log.truncateTo(offset)
	r.setHW(r.log.hw)
	r.log.setRecoveryPoint(min(r.log.recoveryPoint, r.log.end))
	r.rebuildProducers()
}

// newReplica is an empty replica on broker id, as a new partition or a
// reassignment creates it.
func newReplica(id int32, online bool) *Replica {
	return &Replica{Broker: id, online: online, log: newLog()}
}

// Partition is one topic partition: its replicas in assignment order (also
// the election order), the leader, leader epoch and ISR.
type Partition struct {
	cfg        *Config // never modified: the partitions of a topic share one
	replicas   []*Replica
	leader     int32 // broker id, -1 when leaderless
	epoch      int32
	isr        []int32 // kept in assignment order
	epochStart int64   // leader's LEO when it took the current epoch
	committed  int64   // the highest HW any leader reached

	*partitionExtras // shared until first written (extras)
}

// partitionExtras is the state most partitions leave as it was at their
// creation most of the time. Every new partition points at one frozen
// value, newPartitionExtras, and gets its own copy on the first write.
type partitionExtras struct {
	zombie   *zombieLeader // nil: none
	reassign *reassignment // an ongoing reassignment (reassign.go), or nil
	changes  []Change      // since the last TakeChanges (changes.go)
	// history is the epoch cache of the leader that committed up to
	// committed. It is replaced, never modified in place, so it may be
	// shared.
	history []EpochEntry
}

// newPartitionExtras is a new partition's: no zombie, no reassignment, no
// changes, and its first leader's epoch cache (epoch 0 from offset 0).
var newPartitionExtras = partitionExtras{history: firstLeaderLog.epochs}

// extras returns the partition's extras for writing, copying the frozen
// shared value first.
func (p *Partition) extras() *partitionExtras {
	if p.partitionExtras == &newPartitionExtras {
		x := newPartitionExtras
		p.partitionExtras = &x
	}
	return p.partitionExtras
}

// zombieLeader is a deposed leader cut off from the controller and the
// other brokers: it still believes it leads at epoch with isr, so it keeps
// taking writes that can never commit.
type zombieLeader struct {
	broker, epoch int32
	isr           []int32
}

// NewPartition creates a partition whose first replica leads at epoch 0
// with every replica in the ISR, as a freshly created Kafka topic does.
func NewPartition(replicas []int32, cfg Config, now time.Time) *Partition {
	return NewPartitionShared(replicas, &cfg, now)
}

// NewPartitionShared is NewPartition with settings that the caller shares
// between partitions (every partition of a topic) and never modifies, so
// that ten thousand partitions hold one copy.
func NewPartitionShared(replicas []int32, cfg *Config, now time.Time) *Partition {
	p := &Partition{cfg: cfg, leader: -1, epoch: -1, partitionExtras: &newPartitionExtras}
	// One allocation for every replica: an idle partition's replicas
	// are most of its memory.
	rs := make([]Replica, len(replicas))
	p.replicas = make([]*Replica, len(replicas))
	for i, id := range replicas {
		rs[i] = Replica{Broker: id, online: true, log: newLog()}
		p.replicas[i] = &rs[i]
	}
	p.isr = slices.Clone(replicas)
	if len(replicas) > 0 {
		// The leader's epoch cache is now firstLeaderLog's, which is the
		// history newPartitionExtras holds.
		p.becomeLeader(replicas[0], now)
	}
	if p.partitionExtras != &newPartitionExtras {
		p.extras().changes = nil // creation is not news
	}
	return p
}

// Config returns the partition's settings.
func (p *Partition) Config() Config { return *p.cfg }

// SetConfig changes the settings (min.insync.replicas and friends); the HW
// is re-evaluated since a lower minimum may let it move.
func (p *Partition) SetConfig(cfg Config, now time.Time) { p.SetConfigShared(&cfg, now) }

// SetConfigShared is SetConfig with settings shared as NewPartitionShared's.
func (p *Partition) SetConfigShared(cfg *Config, now time.Time) {
	p.cfg = cfg
	p.maybeIncrementHW(now)
}

// Leader is the leader's broker id, or -1.
func (p *Partition) Leader() int32 { return p.leader }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 { return p.epoch }

// ISR returns a copy of the in-sync replica set, in assignment order.
func (p *Partition) ISR() []int32 { return slices.Clone(p.isr) }

// ISRSize is len(ISR()) without the copy.
func (p *Partition) ISRSize() int { return len(p.isr) }

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
		return l.log.hw
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
	// Timestamp is, for a duplicate, the max timestamp the first append
	// stored: Kafka answers it as the retry's LogAppendTime.
	Timestamp int64
	Required  int64
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
	dup, isDup, code := r.log.prod.check(b)
	if code != 0 {
		return AppendResult{}, code
	}
	if isDup {
		end := dup.firstOffset + int64(b.LastOffset-b.BaseOffset) + 1
		return AppendResult{BaseOffset: dup.firstOffset, LogStartOffset: r.log.start, Duplicate: true, Timestamp: dup.timestamp, Required: end}, 0
	}
	p.stamp(b, r.log.end, epoch)
	r.log.append(b, p.cfg.Segment)
	r.updateProducers(b)
	p.maybeFlush(r)
	return AppendResult{BaseOffset: b.BaseOffset, LogStartOffset: r.log.start, Required: b.EndOffset()}, 0
}

func (p *Partition) isZombie(broker int32) bool { return p.zombie != nil && broker == p.zombie.broker }

// ViewLeader is View(broker) without the copy of the ISR.
func (p *Partition) ViewLeader(broker int32) (leader, epoch int32) {
	if p.isZombie(broker) {
		return p.zombie.broker, p.zombie.epoch
	}
	return p.leader, p.epoch
}

// View is the partition as broker sees it: the truth, except for a zombie
// leader, which still sees itself leading at its old epoch with its old ISR.
func (p *Partition) View(broker int32) (leader, epoch int32, isr []int32) {
	if p.isZombie(broker) {
		return p.zombie.broker, p.zombie.epoch, slices.Clone(p.zombie.isr)
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
	if acks == -1 && len(p.zombie.isr) < p.EffectiveMinISR() {
		return AppendResult{}, kerr.NotEnoughReplicas.Code
	}
	return p.appendTo(p.Replica(broker), b, p.zombie.epoch)
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
		p.extras().zombie = &zombieLeader{broker: id, epoch: p.epoch, isr: p.ISR()}
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
	if p.isZombie(id) {
		p.extras().zombie = nil
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
	if p.isZombie(broker) && epoch == p.zombie.epoch {
		// Its followers left it and it cannot shrink the ISR without the
		// controller: the HW never gets there, the request expires.
		return false, kerr.RequestTimedOut.Code
	}
	if p.leader != broker || p.epoch != epoch {
		return true, kerr.NotLeaderForPartition.Code
	}
	if p.LeaderReplica().log.hw < required {
		return false, kerr.RequestTimedOut.Code
	}
	if p.UnderMinISR() {
		return true, kerr.NotEnoughReplicasAfterAppend.Code
	}
	return true, 0
}
