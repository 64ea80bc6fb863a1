package chaos

import (
	"cmp"
	"fmt"
	"slices"
)

// Report is what Check found, per partition and per group.
type Report struct {
	Partitions []PartitionReport `json:"partitions"`
	// Offsets are committed group offsets that went backwards.
	Offsets []OffsetRewind `json:"offsets"`
	// Share are share-group (KIP-932) findings: accepted records delivered
	// again, delivery counts going backwards, locks that were not released.
	Share []ShareViolation `json:"share"`
	// Truncated says the recording hit its bound: the report covers only
	// what was recorded before.
	Truncated bool `json:"truncated,omitempty"`
}

// PartitionReport is one partition's findings.
type PartitionReport struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// AckedBatches and AckedRecords count the acknowledged writes;
	// ServedRanges the consumer fetches that returned records.
	AckedBatches int   `json:"acked_batches"`
	AckedRecords int64 `json:"acked_records"`
	ServedRanges int   `json:"served_ranges"`
	// Leaderless says the partition had no leader when checked: its
	// acknowledged writes could not be verified.
	Leaderless bool `json:"leaderless,omitempty"`

	Lost           []Loss           `json:"lost"`
	Duplicates     []Duplicate      `json:"duplicates"`
	ReadThenLost   []ReadLoss       `json:"read_then_lost"`
	ServedAboveHW  []ReadLoss       `json:"served_above_hw"`
	AbortedVisible []AbortedVisible `json:"aborted_visible"`
}

// Loss is a run of acknowledged batches that are no longer in the log.
type Loss struct {
	From       int64 `json:"from"`
	To         int64 `json:"to"`
	Batches    int   `json:"batches"`
	Acks       int16 `json:"acks"`
	ProducerID int64 `json:"producer_id"`
	// Cause is the decision that lost them (an election, a power loss, a
	// truncation) and the chaos action that led to it.
	Cause string `json:"cause"`
	// Allowed says Kafka's guarantees permit the loss; Why says which.
	Allowed bool   `json:"allowed"`
	Why     string `json:"why"`
}

// Duplicate is a batch appended more than once.
type Duplicate struct {
	Offsets    []int64 `json:"offsets"` // the base offset of each copy
	ProducerID int64   `json:"producer_id"`
	Allowed    bool    `json:"allowed"`
	Why        string  `json:"why"`
}

// ReadLoss is a consumer fetch whose records later vanished, or that
// served past the HW (or LSO for read_committed).
type ReadLoss struct {
	From          int64  `json:"from"`
	To            int64  `json:"to"`
	HW            int64  `json:"hw"`
	LSO           int64  `json:"lso"`
	ReadCommitted bool   `json:"read_committed,omitempty"`
	Cause         string `json:"cause,omitempty"`
	Allowed       bool   `json:"allowed"`
	Why           string `json:"why"`
}

// AbortedVisible is an aborted transaction's records served to a
// read_committed consumer before the abort was stable.
type AbortedVisible struct {
	ProducerID int64 `json:"producer_id"`
	First      int64 `json:"first_offset"`
	Marker     int64 `json:"marker_offset"`
	ServedFrom int64 `json:"served_from"`
	ServedTo   int64 `json:"served_to"`
	LSO        int64 `json:"lso"`
}

// OffsetRewind is a group's committed offset going backwards.
type OffsetRewind struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	From      int64  `json:"from"`
	To        int64  `json:"to"`
	// Lost says the coordinator lost an acknowledged commit (the offset
	// now committed is below it); otherwise a client committed lower.
	Lost    bool   `json:"lost"`
	Allowed bool   `json:"allowed"`
	Why     string `json:"why"`
}

// Violation is a finding Kafka's guarantees do not allow.
type Violation struct {
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Detail    string `json:"detail"`
}

func (v Violation) String() string {
	if v.Group != "" {
		return fmt.Sprintf("%s: group %s %s/%d: %s", v.Kind, v.Group, v.Topic, v.Partition, v.Detail)
	}
	return fmt.Sprintf("%s: %s/%d: %s", v.Kind, v.Topic, v.Partition, v.Detail)
}

// Violations lists every finding Kafka would not allow: the one call a
// test needs after a run. Empty means nothing was lost, duplicated or read
// and lost beyond what Kafka's guarantees permit.
func (r Report) Violations() []Violation {
	var out []Violation
	for _, p := range r.Partitions {
		add := func(kind, detail string) {
			out = append(out, Violation{Topic: p.Topic, Partition: p.Partition, Kind: kind, Detail: detail})
		}
		for _, l := range p.Lost {
			if !l.Allowed {
				add("lost", fmt.Sprintf("acks=%d offsets [%d, %d) lost: %s (%s)", l.Acks, l.From, l.To, l.Cause, l.Why))
			}
		}
		for _, d := range p.Duplicates {
			if !d.Allowed {
				add("duplicate", fmt.Sprintf("batch at offsets %v: %s", d.Offsets, d.Why))
			}
		}
		for _, l := range p.ReadThenLost {
			if !l.Allowed {
				add("read_then_lost", fmt.Sprintf("served [%d, %d) then lost: %s (%s)", l.From, l.To, l.Cause, l.Why))
			}
		}
		for _, l := range p.ServedAboveHW {
			add("served_above_hw", fmt.Sprintf("served [%d, %d) with HW %d, LSO %d", l.From, l.To, l.HW, l.LSO))
		}
		for _, a := range p.AbortedVisible {
			add("aborted_visible", fmt.Sprintf("producer %d's aborted records [%d, %d) served to read_committed below LSO %d", a.ProducerID, a.First, a.Marker, a.LSO))
		}
	}
	for _, o := range r.Offsets {
		if !o.Allowed {
			out = append(out, Violation{Topic: o.Topic, Partition: o.Partition, Group: o.Group, Kind: "offset_lost", Detail: fmt.Sprintf("committed %d, now %d: %s", o.From, o.To, o.Why)})
		}
	}
	for _, v := range r.Share {
		if !v.Allowed {
			out = append(out, Violation{Topic: v.TP.Topic, Partition: v.TP.Partition, Group: v.Group, Kind: v.Rule,
				Detail: fmt.Sprintf("offset %d: %s", v.Offset, v.Detail)})
		}
	}
	return out
}

// Check reads what a run recorded and reports every loss, duplicate,
// vanished read, aborted read and offset rewind, with whether Kafka's
// guarantees allowed it.
func Check(in Input) Report {
	rep := Report{Truncated: in.Truncated}
	byTP := map[TP]*PartitionReport{}
	part := func(tp TP) *PartitionReport {
		if p := byTP[tp]; p != nil {
			return p
		}
		p := &PartitionReport{Topic: tp.Topic, Partition: tp.Partition, Lost: []Loss{}, Duplicates: []Duplicate{},
			ReadThenLost: []ReadLoss{}, ServedAboveHW: []ReadLoss{}, AbortedVisible: []AbortedVisible{}}
		byTP[tp] = p
		return p
	}
	cx := checker{in: in}
	writes := map[TP][]Write{}
	for _, w := range in.Writes {
		writes[w.TP] = append(writes[w.TP], w)
	}
	for tp, ws := range writes {
		p := part(tp)
		log, ok := in.Logs[tp]
		p.Leaderless = !ok
		for _, w := range ws {
			if w.Acked {
				p.AckedBatches++
				p.AckedRecords += w.End - w.Base
			}
		}
		if ok {
			p.Lost = cx.losses(tp, ws, log)
			p.Duplicates = duplicates(ws, log)
		}
	}
	reads := map[TP][]Read{}
	for _, r := range in.Reads {
		reads[r.TP] = append(reads[r.TP], r)
	}
	for tp, rs := range reads {
		p := part(tp)
		p.ServedRanges = len(rs)
		log, ok := in.Logs[tp]
		p.Leaderless = !ok
		for _, r := range rs {
			bound := r.HW
			if r.ReadCommitted {
				bound = min(r.HW, r.LSO)
			}
			if r.End > bound {
				p.ServedAboveHW = append(p.ServedAboveHW, ReadLoss{From: r.From, To: r.End, HW: r.HW, LSO: r.LSO, ReadCommitted: r.ReadCommitted, Why: "a consumer was served records the HW did not cover"})
			}
			if ok && r.LastBase >= log.Start && !log.has(r.LastBase, r.LastCRC) {
				cause, allowed, why := cx.explain(tp, r.Seq, -1, r.LastBase)
				p.ReadThenLost = append(p.ReadThenLost, ReadLoss{From: r.From, To: r.End, HW: r.HW, LSO: r.LSO, ReadCommitted: r.ReadCommitted, Cause: cause, Allowed: allowed, Why: why})
			}
		}
		if ok {
			p.AbortedVisible = abortedVisible(rs, log)
		}
	}
	for _, p := range byTP {
		rep.Partitions = append(rep.Partitions, *p)
	}
	slices.SortFunc(rep.Partitions, func(a, b PartitionReport) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	rep.Offsets = cx.rewinds()
	rep.Share = cx.shareFindings()
	return rep
}

type checker struct{ in Input }

// has says whether the log holds the batch at base with that CRC.
func (l Log) has(base int64, crc uint32) bool {
	i, ok := slices.BinarySearchFunc(l.Batches, base, func(b LogBatch, o int64) int { return cmp.Compare(b.Base, o) })
	return ok && l.Batches[i].CRC == crc
}

// losses finds the acknowledged writes missing from log, merging runs of
// consecutive batches with the same verdict.
func (cx checker) losses(tp TP, ws []Write, log Log) []Loss {
	out := []Loss{}
	for _, w := range ws {
		if !w.Acked || w.End <= log.Start || log.has(w.Base, w.CRC) {
			continue
		}
		cause, allowed, why := cx.explain(tp, w.Seq, w.Acks, w.Base)
		if n := len(out); n > 0 {
			l := &out[n-1]
			if l.To == w.Base && l.Acks == w.Acks && l.Cause == cause && l.Allowed == allowed && l.ProducerID == w.ProducerID {
				l.To, l.Batches = w.End, l.Batches+1
				continue
			}
		}
		out = append(out, Loss{From: w.Base, To: w.End, Batches: 1, Acks: w.Acks, ProducerID: w.ProducerID, Cause: cause, Allowed: allowed, Why: why})
	}
	return out
}

// explain finds why records of tp at offset, written or served at seq,
// vanished, and whether Kafka allows it: acks below all always; acks=all
// and served records only after an unclean election or a power loss
// without flush (or pre-KIP-101 truncation). acks -1 is also what a read
// is judged by: a consumer only sees what acks=all made safe.
func (cx checker) explain(tp TP, seq uint64, acks int16, offset int64) (cause string, allowed bool, why string) {
	var first *Decision
	unclean, power := false, false
	for i := range cx.in.Decisions {
		d := &cx.in.Decisions[i]
		if d.Seq <= seq {
			continue
		}
		switch {
		case d.Kind == DecisionElection && d.TP == tp:
			unclean = unclean || d.Unclean
			if first == nil {
				first = d
			}
		case d.Kind == DecisionTruncated && d.TP == tp && d.To <= offset && offset < d.From && first == nil:
			first = d
		case d.Kind == DecisionPowerLoss:
			power = true
		}
	}
	cause = "no leader change or truncation recorded"
	if first != nil {
		cause = cx.describe(first)
	}
	switch {
	case acks == 0 || acks == 1:
		return cause, true, fmt.Sprintf("acks=%d: only the leader had the records when it acknowledged them", acks)
	case unclean:
		return cause, true, "an unclean election elected a replica without them"
	case power && !cx.in.Flushed:
		return cause, true, "a power loss dropped unflushed records"
	case cx.in.LegacyHWTruncation:
		return cause, true, "pre-KIP-101 truncation to the high watermark"
	}
	return cause, false, "Kafka never loses records acknowledged to acks=all or served to consumers without an unclean election or power loss"
}

// describe says what d was and which chaos action ran last before it.
func (cx checker) describe(d *Decision) string {
	var s string
	switch d.Kind {
	case DecisionElection:
		kind := "clean"
		if d.Unclean {
			kind = "unclean"
		}
		s = fmt.Sprintf("%s election of broker %d", kind, d.Broker)
	case DecisionTruncated:
		s = fmt.Sprintf("broker %d truncated from %d to %d (%s)", d.Broker, d.From, d.To, d.Detail)
	}
	for i := len(cx.in.Decisions) - 1; i >= 0; i-- {
		a := cx.in.Decisions[i]
		if a.Kind == DecisionAction && a.Seq < d.Seq {
			return s + " after chaos " + a.Detail
		}
	}
	return s
}

// duplicates finds writes appended more than once and still in the log:
// the same batch (producer id, epoch and sequence, record count and CRC)
// at different offsets. A non-idempotent producer's retry does that
// legitimately; an idempotent producer's never. The CRC alone does not
// name a batch: it is linear, so batches that differ in a regular way
// (the next sequence, value and timestamp) collide far more often than
// one in 2^32 — a run of 10,000 single-record batches found such pairs.
func duplicates(ws []Write, log Log) []Duplicate {
	type key struct {
		crc     uint32
		pid     int64
		epoch   int16
		seq     int32
		records int64
	}
	copies := map[key][]int64{}
	var order []key
	for _, w := range ws {
		if !log.has(w.Base, w.CRC) {
			continue
		}
		k := key{w.CRC, w.ProducerID, w.ProducerEpoch, w.Sequence, w.End - w.Base}
		if len(copies[k]) == 0 {
			order = append(order, k)
		}
		if !slices.Contains(copies[k], w.Base) {
			copies[k] = append(copies[k], w.Base)
		}
	}
	out := []Duplicate{}
	for _, k := range order {
		if offs := copies[k]; len(offs) > 1 {
			d := Duplicate{Offsets: offs, ProducerID: k.pid, Allowed: k.pid < 0, Why: "a non-idempotent producer retried a write whose acknowledgement was lost"}
			if k.pid >= 0 {
				d.Why = "an idempotent producer's batch was appended twice"
			}
			out = append(out, d)
		}
	}
	return out
}

// abortedVisible finds read_committed fetches that served records of a
// transaction whose abort marker was at or above the LSO they were served
// with: the consumer took them as committed.
func abortedVisible(rs []Read, log Log) []AbortedVisible {
	type txn struct{ pid, first, marker int64 }
	var aborted []txn
	open := map[int64]int64{}
	for _, b := range log.Batches {
		switch {
		case b.Control:
			if first, ok := open[b.ProducerID]; ok && !b.Commit {
				aborted = append(aborted, txn{b.ProducerID, first, b.Base})
			}
			delete(open, b.ProducerID)
		case b.Transactional:
			if _, ok := open[b.ProducerID]; !ok {
				open[b.ProducerID] = b.Base
			}
		}
	}
	out := []AbortedVisible{}
	for _, r := range rs {
		if !r.ReadCommitted {
			continue
		}
		for _, t := range aborted {
			if t.first < r.End && r.From < t.marker && t.marker >= r.LSO {
				out = append(out, AbortedVisible{ProducerID: t.pid, First: t.first, Marker: t.marker, ServedFrom: r.From, ServedTo: r.End, LSO: r.LSO})
			}
		}
	}
	return out
}

// rewinds finds group offsets that went backwards: a client committing
// lower than before (its choice, allowed), or the offset now committed
// below the last one the coordinator acknowledged (lost, unless an unclean
// election or power loss made that possible).
func (cx checker) rewinds() []OffsetRewind {
	out := []OffsetRewind{}
	high, last := map[GroupTP]int64{}, map[GroupTP]int64{}
	var order []GroupTP
	for _, c := range cx.in.Commits {
		k := GroupTP{c.Group, c.TP}
		h, seen := high[k]
		if !seen {
			order = append(order, k)
		}
		if seen && c.Offset < h {
			out = append(out, OffsetRewind{Group: c.Group, Topic: c.Topic, Partition: c.Partition, From: h, To: c.Offset, Allowed: true, Why: "the client committed a lower offset"})
		}
		if !seen || c.Offset > h {
			high[k] = c.Offset
		}
		last[k] = c.Offset
	}
	unsafe := false
	for _, d := range cx.in.Decisions {
		if d.Kind == DecisionPowerLoss && !cx.in.Flushed || d.Kind == DecisionElection && d.Unclean && d.Topic == "__consumer_offsets" {
			unsafe = true
		}
	}
	for _, k := range order {
		now, ok := cx.in.Offsets[k]
		if ok && now < last[k] {
			r := OffsetRewind{Group: k.Group, Topic: k.Topic, Partition: k.Partition, From: last[k], To: now, Lost: true, Allowed: unsafe,
				Why: "the coordinator lost an acknowledged commit"}
			if unsafe {
				r.Why += " after an unclean election or power loss"
			}
			out = append(out, r)
		}
	}
	return out
}
