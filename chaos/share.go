package chaos

// The share-group (KIP-932) rules: what a share partition's leader
// handed out and what acknowledgements it confirmed, checked for three
// properties Kafka guarantees — an accepted (or rejected) record is never
// delivered again, a record's delivery count never goes backwards (and
// rises after a confirmed release), and a record its member never
// acknowledged comes back once its acquisition lock has run out.

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// ShareDelivery is one record a ShareFetch handed to a member.
type ShareDelivery struct {
	Group         string
	TP            TP
	Offset        int64
	DeliveryCount int16
	Member        string
	At            time.Time // the cluster's clock
	Seq           uint64
}

// ShareAck is an acknowledgement the leader confirmed (no error).
type ShareAck struct {
	Group  string
	TP     TP
	Offset int64
	Type   int8 // 0 gap, 1 accept, 2 release, 3 reject, 4 renew
	Member string
	At     time.Time
	Seq    uint64
}

// ShareInput is one run's share-group record.
type ShareInput struct {
	Deliveries []ShareDelivery
	Acks       []ShareAck
	// LockDuration is share.record.lock.duration.ms; DeliveryLimit
	// share.delivery.count.limit (a record delivered that often is
	// archived, not given back).
	LockDuration  time.Duration
	DeliveryLimit int16
}

// ShareViolation is one broken rule.
type ShareViolation struct {
	Rule   string `json:"rule"` // accepted_redelivered, delivery_count_backwards, lock_not_released
	Group  string `json:"group"`
	TP     TP     `json:"tp"`
	Offset int64  `json:"offset"`
	Detail string `json:"detail"`
	// Allowed says Kafka's guarantees permit it: the run had a power loss
	// without flush or an unclean election on __share_group_state or on
	// the partition itself, which may lose the share coordinator's state.
	Allowed bool   `json:"allowed"`
	Why     string `json:"why,omitempty"`
}

type shareKey struct {
	group  string
	tp     TP
	offset int64
}

// shareFindings applies the share-group rules to every group of in and
// says which findings the run's unsafe decisions allow.
func (cx checker) shareFindings() []ShareViolation {
	out := []ShareViolation{}
	unsafe := false // the share coordinator's state may be lost
	unclean := map[TP]bool{}
	for _, d := range cx.in.Decisions {
		switch {
		case d.Kind == DecisionPowerLoss && !cx.in.Flushed:
			unsafe = true
		case d.Kind == DecisionElection && d.Unclean:
			unclean[d.TP] = true
			unsafe = unsafe || d.Topic == "__share_group_state"
		}
	}
	for _, si := range cx.in.Share {
		for _, v := range CheckShare(si) {
			if unsafe || unclean[v.TP] {
				v.Allowed, v.Why = true, "after an unclean election or power loss, which may lose the share-partition state"
			}
			out = append(out, v)
		}
	}
	return out
}

// CheckShare applies the share-group rules.
func CheckShare(in ShareInput) []ShareViolation {
	type event struct {
		seq uint64
		d   *ShareDelivery
		a   *ShareAck
	}
	byKey := map[shareKey][]event{}
	for i := range in.Deliveries {
		d := &in.Deliveries[i]
		k := shareKey{d.Group, d.TP, d.Offset}
		byKey[k] = append(byKey[k], event{seq: d.Seq, d: d})
	}
	for i := range in.Acks {
		a := &in.Acks[i]
		k := shareKey{a.Group, a.TP, a.Offset}
		byKey[k] = append(byKey[k], event{seq: a.Seq, a: a})
	}
	var out []ShareViolation
	add := func(k shareKey, rule, format string, args ...any) {
		out = append(out, ShareViolation{Rule: rule, Group: k.group, TP: k.tp, Offset: k.offset, Detail: fmt.Sprintf(format, args...)})
	}
	for k, evs := range byKey {
		slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.seq, b.seq) })
		var last *ShareDelivery
		done := false     // accepted or rejected
		released := false // a confirmed release since the last delivery
		for _, e := range evs {
			switch {
			case e.a != nil:
				switch e.a.Type {
				case 1, 3, 0:
					done = true
				case 2:
					released = true
				}
			case done:
				add(k, "accepted_redelivered", "delivered again (count %d to %s) after it was acknowledged", e.d.DeliveryCount, e.d.Member)
			case last != nil && (e.d.DeliveryCount < last.DeliveryCount || released && e.d.DeliveryCount <= last.DeliveryCount):
				add(k, "delivery_count_backwards", "delivery count %d after %d", e.d.DeliveryCount, last.DeliveryCount)
			}
			if e.d != nil {
				last, released = e.d, false
			}
		}
	}
	out = append(out, lockRule(in)...)
	slices.SortFunc(out, func(a, b ShareViolation) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.TP.Topic, b.TP.Topic), cmp.Compare(a.TP.Partition, b.TP.Partition),
			cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Rule, b.Rule))
	})
	return out
}

// lockRule: a delivery its member never acknowledged must come again
// before any later delivery of the partition that happens once its lock
// has run out (a leader hands out the lowest available offsets first),
// unless it reached the delivery limit.
func lockRule(in ShareInput) []ShareViolation {
	var out []ShareViolation
	acked := map[shareKey][]ShareAck{}
	for _, a := range in.Acks {
		k := shareKey{a.Group, a.TP, a.Offset}
		acked[k] = append(acked[k], a)
	}
	ds := slices.Clone(in.Deliveries)
	slices.SortStableFunc(ds, func(a, b ShareDelivery) int { return cmp.Compare(a.Seq, b.Seq) })
	for i, d := range ds {
		if in.DeliveryLimit > 0 && d.DeliveryCount >= in.DeliveryLimit {
			continue
		}
		k := shareKey{d.Group, d.TP, d.Offset}
		deadline := d.At.Add(in.LockDuration)
		// The first later delivery of the partition past the deadline.
		for _, later := range ds[i+1:] {
			if later.Group != d.Group || later.TP != d.TP {
				continue
			}
			if later.Offset == d.Offset {
				break // it came again
			}
			if later.At.Before(deadline) || later.Offset < d.Offset {
				continue
			}
			settled := slices.ContainsFunc(acked[k], func(a ShareAck) bool {
				return a.Seq > d.Seq && a.Seq < later.Seq && a.Member == d.Member && a.Type != 4
			})
			if !settled {
				out = append(out, ShareViolation{Rule: "lock_not_released", Group: d.Group, TP: d.TP, Offset: d.Offset,
					Detail: fmt.Sprintf("held by %s since %s (lock %s), offset %d delivered at %s before it came back",
						d.Member, d.At.Format(time.RFC3339Nano), in.LockDuration, later.Offset, later.At.Format(time.RFC3339Nano))})
			}
			break
		}
	}
	return out
}
