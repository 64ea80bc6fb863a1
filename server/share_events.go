package server

// The share-group events: membership changes as group events (Detail
// "share"), and the records a share partition's leader took back, one
// event per run of offsets with the same outcome.

import (
	"fmt"

	grp "github.com/fakekafka/fakekafka/group"
	"github.com/fakekafka/fakekafka/share"
)

// emitShareEvents reports what a share-group step changed; a member that
// left or expired has its acquisitions released. Callers hold g.Mu.
func (c *Cluster) emitShareEvents(g *group, member string, evs []grp.Event) {
	for _, ev := range evs {
		t := groupEventType(ev.Type)
		if ev.Group {
			c.emit(t, func(e *Event) {
				e.Group, e.Reason, e.Generation, e.Detail = g.ID, ev.Reason, ev.Epoch, "share: "+ev.Detail
			})
			continue
		}
		detail := ev.Detail
		if detail == "" {
			detail = "share"
		}
		c.emit(t, func(e *Event) {
			e.Group, e.Member, e.Reason, e.Detail, e.Generation = g.ID, ev.Member, ev.Reason, detail, g.Share.Epoch
		})
		if ev.Type == grp.MemberExpired {
			id, gid := ev.Member, g.ID
			c.goTracked(func() { c.releaseShareMemberEverywhere(gid, id) })
		}
	}
}

// emitShareChanges reports records released or archived in sp. Callers
// hold sp.mu.
func (c *Cluster) emitShareChanges(sp *sharePartition, changes []share.Change, reason string) {
	for i := 0; i < len(changes); {
		j := i + 1
		for j < len(changes) && changes[j].State == changes[i].State && changes[j].Offset == changes[j-1].Offset+1 {
			j++
		}
		run := changes[i:j]
		typ := EventShareRecordsReleased
		if run[0].State == share.Archived {
			typ = EventShareRecordsArchived
		}
		lo, hi := run[0].DeliveryCount, run[0].DeliveryCount
		for _, ch := range run {
			lo, hi = min(lo, ch.DeliveryCount), max(hi, ch.DeliveryCount)
		}
		detail := fmt.Sprintf("delivery count %d", lo)
		if lo != hi {
			detail = fmt.Sprintf("delivery counts %d-%d", lo, hi)
		}
		c.emit(typ, func(e *Event) {
			e.Group, e.Topic, e.Partition, e.Broker = sp.key.Group, sp.p.t.name, sp.p.index, sp.broker
			e.From, e.To, e.Reason, e.Detail = run[0].Offset, run[len(run)-1].Offset, reason, detail
		})
		i = j
	}
}
