package replication

import "slices"

// Restoring a partition from disk after a restart of the whole process
// (fakekafka's --data-dir): every replica comes back with the log that was
// persisted, which is the leader's at the time of the last write.

// Restored is a partition's persisted state.
type Restored struct {
	Leader   int32
	Epoch    int32
	ISR      []int32
	LogStart int64
	HW       int64
	// Batches in offset order, with gaps where the cleaner removed
	// records; they become shared by every replica.
	Batches []*Batch
}

// Restore replaces the state of a freshly created partition with st: every
// replica holds the batches (its segments rolled again by the partition's
// segment config), the log start and the HW (clamped to the log), all of it
// flushed; the leader, its epoch (also cached at the LEO, in case no batch
// carries it) and the ISR are as persisted; producer state is rebuilt from
// the log, as Kafka does at startup.
func (p *Partition) Restore(st Restored) {
	for _, r := range p.replicas {
		r.log = Log{&logData{start: st.LogStart, end: st.LogStart}}
		r.log.active()
		for _, b := range st.Batches {
			if b.LastOffset < st.LogStart {
				continue
			}
			r.log.append(b, p.cfg.Segment)
		}
		r.log.assignEpoch(st.Epoch, r.log.end)
		r.setHW(st.HW)
		r.log.setRecoveryPoint(r.log.end)
		r.log.setCheckpointHW(r.log.hw)
		r.rebuildProducers()
		r.truncating = false
		r.remote = followerState{leo: -1, lastFetchLeaderLEO: -1}
	}
	p.epoch = st.Epoch
	p.leader = -1
	if st.Leader >= 0 && p.Replica(st.Leader) != nil {
		p.leader = st.Leader
	}
	if isr := slices.DeleteFunc(slices.Clone(st.ISR), func(id int32) bool { return p.Replica(id) == nil }); len(isr) > 0 {
		p.isr = p.inAssignmentOrder(isr)
	}
	if l := p.LeaderReplica(); l != nil {
		p.epochStart = l.log.end
		p.committed = l.log.hw
		p.extras().history = l.log.Epochs()
	}
	if p.changes != nil {
		p.extras().changes = nil
	}
}
