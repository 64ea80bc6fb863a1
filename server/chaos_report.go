package server

import (
	"cmp"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/replication"
)

// ChaosReport is a chaos run's report (GET /v1/chaos/report): the
// checker's findings per partition and group (chaos.Report, whose
// Violations method is the one call a test needs) and what the run did.
type ChaosReport struct {
	// Seed replays the run: the same seed, spec and client behaviour give
	// the same actions.
	Seed    uint64     `json:"seed"`
	Spec    chaos.Spec `json:"spec"`
	Running bool       `json:"running"`
	Started time.Time  `json:"started"`
	// Actions are the actions that ran so far, with their targets and
	// errors; Scheduled is the whole schedule.
	Actions   []ChaosAction  `json:"actions"`
	Scheduled []chaos.Action `json:"scheduled"`
	// FirstAnomaly describes the first loss of acknowledged records the
	// run saw as it happened, with the seed; "" if none.
	FirstAnomaly string `json:"first_anomaly,omitempty"`
	// ShareDeliveries and ShareAcks count the share-group records the
	// leaders acquired for members and the acknowledgements they applied.
	ShareDeliveries int `json:"share_deliveries"`
	ShareAcks       int `json:"share_acks"`
	chaos.Report
	// Violating is Violations(), in the JSON form.
	Violating []chaos.Violation `json:"violations"`
}

// ChaosReport checks what the active or last chaos run recorded against
// the partitions' logs as they are now. Call it after clients finished
// (and after StopChaos, so that stopped brokers are back and every
// partition has a leader); during a run, records may be lost later.
func (c *Cluster) ChaosReport() (*ChaosReport, error) {
	c.chaosMu.Lock()
	run := c.chaosLast
	c.chaosMu.Unlock()
	if run == nil {
		return nil, ErrNoChaos
	}
	c.drainChaosEvents(run)
	in := chaos.Input{
		Logs:               map[chaos.TP]chaos.Log{},
		Offsets:            map[chaos.GroupTP]int64{},
		Flushed:            c.cfg.FlushMessages == 1,
		LegacyHWTruncation: c.cfg.LegacyHWTruncation,
		Truncated:          run.full.Load(),
	}
	run.mu.Lock()
	parts := make([]*partition, 0, len(run.partitions))
	for p := range run.partitions {
		parts = append(parts, p)
	}
	in.Decisions = slices.Clone(run.decisions)
	slices.SortStableFunc(in.Decisions, func(a, b chaos.Decision) int { return cmp.Compare(a.Seq, b.Seq) })
	in.Commits = slices.Clone(run.commits)
	shareRec := shareRecording{deliveries: slices.Clone(run.share.deliveries), acks: slices.Clone(run.share.acks)}
	rep := &ChaosReport{Seed: run.seed, Spec: run.spec, Running: run.running, Started: run.started,
		Actions: slices.Clone(run.executed), Scheduled: slices.Clone(run.actions), FirstAnomaly: run.anomaly,
		ShareDeliveries: len(run.share.deliveries), ShareAcks: len(run.share.acks)}
	run.mu.Unlock()
	in.Share = c.shareInputs(shareRec) // group configs are read without run.mu

	for _, p := range parts {
		p.mu.Lock()
		if p.rec != nil && p.rec.run == run && !p.t.deleted.Load() {
			in.Writes = append(in.Writes, p.rec.writes...)
			in.Reads = append(in.Reads, p.rec.reads...)
			tp := chaos.TP{Topic: p.t.name, Partition: p.index}
			if l := p.st.LeaderReplica(); l != nil {
				in.Logs[tp] = finalLog(p.st.Leader(), l.Log().StartOffset(), l.Log().EndOffset(), l.Log().Batches())
			}
		}
		p.mu.Unlock()
	}
	groups := map[string]bool{}
	for _, cm := range in.Commits {
		groups[cm.Group] = true
	}
	for g := range groups {
		if st, ok := c.Group(g); ok {
			for _, o := range st.Offsets {
				in.Offsets[chaos.GroupTP{Group: g, TP: chaos.TP{Topic: o.Topic, Partition: o.Partition}}] = o.Offset
			}
		}
	}
	rep.Report = chaos.Check(in)
	rep.Violating = rep.Violations()
	if rep.Violating == nil {
		rep.Violating = []chaos.Violation{}
	}
	return rep, nil
}

// finalLog summarises a leader's log for the checker.
func finalLog(leader int32, start, end int64, batches []*replication.Batch) chaos.Log {
	l := chaos.Log{Leader: leader, Start: start, End: end, Batches: make([]chaos.LogBatch, len(batches))}
	for i, b := range batches {
		l.Batches[i] = chaos.LogBatch{Base: b.BaseOffset, End: b.EndOffset(), CRC: batchCRC(b.Raw), ProducerID: b.ProducerID,
			Transactional: b.Transactional, Control: b.Control, Commit: b.Commit}
	}
	return l
}
