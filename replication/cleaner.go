package replication

import (
	"time"

	"github.com/fakekafka/fakekafka/protocol"
)

// The log cleaner (cleanup.policy=compact): keeps the latest record of each
// key in the closed segments below the last stable offset, as Kafka's
// LogCleaner does. Offsets never move: removed records leave gaps, and a
// batch keeps its base offset, last offset, producer id, epoch and base
// sequence. Aborted transactional records go at once; tombstones and
// transaction markers go once their delete horizon (set by the first pass
// that sees them, delete.retention.ms later) has passed, a marker only when
// no record of its transaction is left.

// Kafka's defaults for the compaction configs.
const (
	DefaultMinCleanableDirtyRatio = 0.5
	DefaultDeleteRetentionMs      = 24 * 60 * 60 * 1000
)

// CompactionConfig is cleanup.policy=compact's settings.
type CompactionConfig struct {
	// Compact is whether cleanup.policy includes compact.
	Compact bool
	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio: a log is cleaned
	// when its dirty part is more than this share of its cleanable bytes.
	MinCleanableDirtyRatio float64
	// MinLagMs is min.compaction.lag.ms: records newer than this stay
	// uncompacted (the segment holding them is not cleaned).
	MinLagMs int64
	// MaxLagMs is max.compaction.lag.ms: a log whose oldest dirty record is
	// older than this is cleaned whatever its dirty ratio. 0: never.
	MaxLagMs int64
	// DeleteRetentionMs is delete.retention.ms: how long tombstones and
	// markers stay after the cleaner first sees them.
	DeleteRetentionMs int64
}

// CleanResult says what one cleaning pass did.
type CleanResult struct {
	Cleaned          bool    // a pass ran
	FirstDirty, End  int64   // the offsets it compacted up to End, [FirstDirty, End) being new
	DirtyRatio       float64 // before the pass
	BatchesRewritten int
	BatchesRemoved   int
	RecordsRemoved   int
	BytesBefore      int64 // the leader's log size
	BytesAfter       int64
}

// Clean runs the cleaner on the leader's log at now, if the policy is
// compact and the dirty ratio or max.compaction.lag.ms says so (force: in
// any case). A follower whose log below the cleaned range holds the same
// batches takes the same rewrite, so the replicas go on sharing batches; a
// follower whose log differs there (it was behind, or offline) and whose
// cleaning lags the leader's is cleaned on its own, as each Kafka broker
// runs its own cleaner.
func (p *Partition) Clean(now time.Time, force bool) CleanResult {
	l := p.LeaderReplica()
	cc := p.cfg.Compaction
	if l == nil || !cc.Compact {
		return CleanResult{}
	}
	res, c := planClean(l, now, cc, force)
	if c != nil {
		for _, r := range p.replicas {
			if r != l && sameBatches(&l.log, &r.log, res.End) {
				r.log.replace(c.replaced, res.End)
				r.log.rewrites().horizon = c.nextHorizon
			}
		}
		l.log.replace(c.replaced, res.End)
		l.log.rewrites().horizon = c.nextHorizon
		res.BytesAfter = l.log.Size()
	}
	for _, r := range p.replicas {
		if r != l && r.online && r.log.cleanedTo() < l.log.cleanedTo() {
			if _, rc := planClean(r, now, cc, true); rc != nil {
				r.log.replace(rc.replaced, rc.end)
				r.log.rewrites().horizon = rc.nextHorizon
			}
		}
	}
	return res
}

// planClean decides whether r's log needs a pass and runs the pass's
// rules, returning the rewrite to apply (nil: no pass).
func planClean(r *Replica, now time.Time, cc CompactionConfig, force bool) (CleanResult, *cleaning) {
	log := &r.log
	size := log.Size()
	res := CleanResult{BytesBefore: size, BytesAfter: size}
	res.FirstDirty = max(log.cleanedTo(), log.start)
	res.End = log.cleanableEnd(r.LSO(), now.UnixMilli()-cc.MinLagMs, cc.MinLagMs > 0)
	// A pass over nothing dirty still drops tombstones and markers whose
	// delete horizon has passed (KIP-534), or runs when forced.
	horizonDue := log.horizon() > 0 && now.UnixMilli() >= log.horizon()
	if res.End <= log.start || (res.End <= res.FirstDirty && !force && !horizonDue) {
		return res, nil
	}
	res.End = max(res.End, res.FirstDirty)
	var clean, dirty int64
	oldestDirty := int64(-1)
	log.each(log.start, res.End, func(b *Batch) {
		if b.BaseOffset < res.FirstDirty {
			clean += int64(len(b.Raw))
			return
		}
		if oldestDirty < 0 {
			oldestDirty = b.MaxTimestamp
		}
		dirty += int64(len(b.Raw))
	})
	if clean+dirty > 0 {
		res.DirtyRatio = float64(dirty) / float64(clean+dirty)
	}
	overdue := cc.MaxLagMs > 0 && oldestDirty >= 0 && now.UnixMilli()-oldestDirty > cc.MaxLagMs
	if !force && res.DirtyRatio <= cc.MinCleanableDirtyRatio && !overdue && !horizonDue {
		return res, nil
	}
	res.Cleaned = true
	c := newCleaning(log, res.FirstDirty, res.End, now.UnixMilli(), cc.DeleteRetentionMs)
	c.run(&res)
	return res, c
}

// sameBatches reports whether follower log f holds exactly leader log l's
// batches below end (the same pointers), so l's rewrite applies to it.
func sameBatches(l, f *Log, end int64) bool {
	if f.start != l.start || f.end < end {
		return false
	}
	var lb, fb []*Batch
	l.each(l.start, end, func(b *Batch) { lb = append(lb, b) })
	f.each(f.start, end, func(b *Batch) { fb = append(fb, b) })
	if len(lb) != len(fb) {
		return false
	}
	for i := range lb {
		if lb[i] != fb[i] {
			return false
		}
	}
	return true
}

// cleanableEnd is the end of the closed segments the cleaner may touch:
// below the active segment, the last stable offset and, with a minimum
// compaction lag, the first segment holding a record newer than lagMs.
func (l *Log) cleanableEnd(lso, lagMs int64, lag bool) int64 {
	end := l.start
	for i, s := range l.segs[:max(len(l.segs)-1, 0)] {
		next := l.segs[i+1].base
		if next > lso || (lag && s.maxTimestamp > lagMs) {
			break
		}
		end = next
	}
	return end
}

// each calls f for every batch with BaseOffset in [from, to).
func (l *Log) each(from, to int64, f func(*Batch)) {
	si, bi := l.locate(from)
	for ; si < len(l.segs); si, bi = si+1, 0 {
		for _, b := range l.segs[si].batches[bi:] {
			if b.BaseOffset >= to {
				return
			}
			f(b)
		}
	}
}

// replace swaps batches of the closed segments below end for their
// cleaned versions (nil: removed), leaving the active segment alone, drops
// closed segments left empty, and records the cleaner checkpoint.
func (l *Log) replace(m map[*Batch]*Batch, end int64) {
	if len(l.segs) == 0 {
		return
	}
	l.own()
	kept := l.segs[:0:0]
	for i, s := range l.segs {
		active := i == len(l.segs)-1
		if !active && l.segs[i+1].base <= end {
			s.rewrite(m)
			if len(s.batches) == 0 {
				continue
			}
		}
		kept = append(kept, s)
	}
	l.segs = kept
	l.rewrites().n++
	if l.end >= end {
		l.rewrites().cleanedTo = max(l.cleanedTo(), end)
	}
}

// rewrite replaces the segment's batches per m in a new slice, so readers
// holding the old one are undisturbed.
func (s *segment) rewrite(m map[*Batch]*Batch) {
	out := make([]*Batch, 0, len(s.batches))
	changed := false
	for _, b := range s.batches {
		nb, ok := m[b]
		if !ok {
			out = append(out, b)
			continue
		}
		changed = true
		if nb != nil {
			out = append(out, nb)
		}
	}
	if changed {
		s.batches = out
		s.recount()
	}
}

// cleaning is one pass over the leader's log.
type cleaning struct {
	log                *Log
	firstDirty, end    int64
	nowMs, retentionMs int64

	latest    map[string]int64 // key -> offset of its latest record in the dirty range
	aborted   map[*Batch]bool  // transactional data batches of aborted transactions
	lastOfPID map[int64]*Batch // each producer's last data batch in the log
	replaced  map[*Batch]*Batch
	// nextHorizon is the earliest delete horizon still ahead, when the
	// next pass has something to drop; 0 none.
	nextHorizon int64
}

func newCleaning(l *Log, firstDirty, end, nowMs, retentionMs int64) *cleaning {
	return &cleaning{log: l, firstDirty: firstDirty, end: end, nowMs: nowMs, retentionMs: retentionMs,
		latest: map[string]int64{}, aborted: map[*Batch]bool{}, lastOfPID: map[int64]*Batch{}, replaced: map[*Batch]*Batch{}}
}

func (c *cleaning) run(res *CleanResult) {
	c.scanTransactions()
	c.buildOffsetMap()
	retained := map[int64]bool{} // producer id -> its open transaction kept a record
	c.log.each(c.log.start, c.end, func(b *Batch) {
		if b.Control {
			c.cleanMarker(b, retained[b.ProducerID], res)
			delete(retained, b.ProducerID)
			return
		}
		kept := c.cleanData(b, res)
		if b.Transactional && kept {
			retained[b.ProducerID] = true
		}
	})
}

// scanTransactions finds the aborted transactions' data batches and each
// producer's last batch, over the whole log (a marker may lie past end).
func (c *cleaning) scanTransactions() {
	open := map[int64][]*Batch{}
	c.log.each(c.log.start, c.log.end, func(b *Batch) {
		switch {
		case b.Control:
			if !b.Commit {
				for _, d := range open[b.ProducerID] {
					c.aborted[d] = true
				}
			}
			delete(open, b.ProducerID)
		case b.ProducerID >= 0:
			c.lastOfPID[b.ProducerID] = b
			if b.Transactional {
				open[b.ProducerID] = append(open[b.ProducerID], b)
			}
		}
	})
}

// buildOffsetMap maps each key to its latest offset in the dirty range,
// skipping markers and aborted records.
func (c *cleaning) buildOffsetMap() {
	c.log.each(c.firstDirty, c.end, func(b *Batch) {
		if b.Control || c.aborted[b] {
			return
		}
		recs, err := protocol.Records(b.Raw)
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Key != nil {
				c.latest[string(r.Key)] = b.BaseOffset + int64(r.OffsetDelta)
			}
		}
	})
}

// horizon returns b's delete horizon, setting it on the first pass.
func (c *cleaning) horizon(b *Batch) (h int64, first bool) {
	if b.DeleteHorizon > 0 {
		return b.DeleteHorizon, false
	}
	return c.nowMs + c.retentionMs, true
}

// pending notes a delete horizon a kept tombstone or marker waits for.
func (c *cleaning) pending(h int64) {
	if c.nextHorizon == 0 || h < c.nextHorizon {
		c.nextHorizon = h
	}
}

// cleanMarker keeps a transaction marker until its transaction has no
// record left and its delete horizon has passed.
func (c *cleaning) cleanMarker(b *Batch, txnKept bool, res *CleanResult) {
	h, first := c.horizon(b)
	switch {
	case !txnKept && !first && c.nowMs >= h:
		c.replaced[b] = nil
		res.BatchesRemoved++
		res.RecordsRemoved++
		return
	case first:
		nb := *b
		nb.DeleteHorizon = h
		c.replaced[b] = &nb
	}
	c.pending(h)
}

// cleanData decides each record of data batch b and rewrites it if any
// go; it reports whether any record stays.
func (c *cleaning) cleanData(b *Batch, res *CleanResult) bool {
	recs, err := protocol.Records(b.Raw)
	if err != nil {
		return true // unreadable: leave it as it is
	}
	h, first := c.horizon(b)
	keep := recs[:0:0]
	tombstones := false
	for _, r := range recs {
		if c.retain(b, r, h, first) {
			keep = append(keep, r)
			tombstones = tombstones || r.Value == nil
		}
	}
	removed := len(recs) - len(keep)
	setHorizon := first && tombstones
	if tombstones {
		c.pending(h)
	}
	if removed == 0 && !setHorizon {
		return len(keep) > 0
	}
	if removed == 0 { // only the horizon is new: the bytes stay shared
		nb := *b
		nb.DeleteHorizon = h
		c.replaced[b] = &nb
		return true
	}
	res.RecordsRemoved += removed
	if len(keep) == 0 && c.lastOfPID[b.ProducerID] != b {
		c.replaced[b] = nil
		res.BatchesRemoved++
		return false
	}
	// An emptied batch that is its producer's last stays, empty, so the
	// producer's sequence state survives (Kafka does the same).
	nb, err := rebuild(b, keep)
	if err != nil {
		return true
	}
	if setHorizon {
		nb.DeleteHorizon = h
	}
	c.replaced[b] = nb
	res.BatchesRewritten++
	return len(keep) > 0
}

// retain is the rule for one record: aborted records go; a record goes if
// a later record has its key (or it has none); the latest record of a key
// goes too if it is a tombstone past its delete horizon.
func (c *cleaning) retain(b *Batch, r protocol.Record, horizon int64, first bool) bool {
	if c.aborted[b] || r.Key == nil {
		return false
	}
	off := b.BaseOffset + int64(r.OffsetDelta)
	if latest, ok := c.latest[string(r.Key)]; ok && off < latest {
		return false
	}
	if r.Value == nil && !first && c.nowMs >= horizon {
		return false
	}
	return true
}

// rebuild encodes the kept records into a new batch with b's header.
func rebuild(b *Batch, keep []protocol.Record) (*Batch, error) {
	h, err := protocol.ParseBatchHeader(b.Raw)
	if err != nil {
		return nil, err
	}
	raw, err := protocol.RebuildBatch(h, h.Compression(), keep)
	if err != nil {
		return nil, err
	}
	nh, _ := protocol.ParseBatchHeader(raw)
	nb := *b
	nb.Raw, nb.NumRecords, nb.MaxTimestamp = raw, nh.NumRecords, nh.MaxTimestamp
	return &nb, nil
}
