package server

// What a chaos run records of share groups (KIP-932) for chaos.CheckShare:
// every record a share partition's leader acquired for a member, and every
// acknowledgement it applied and wrote through the persister. Both are
// recorded under the share partition's lock, in the order the state
// machine saw them (shareSeq), which is the order the rules need.

import (
	"cmp"
	"slices"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/share"
)

// shareRecording is a run's share-group record, guarded by chaosRun.mu.
type shareRecording struct {
	deliveries []chaos.ShareDelivery
	acks       []chaos.ShareAck
}

// recordShareDeliveries notes what sp's leader acquired for member at now.
// Callers hold sp.mu.
func (c *Cluster) recordShareDeliveries(sp *sharePartition, member string, now time.Time, got []share.AcquiredRange) {
	run := c.chaos.Load()
	if run == nil || len(got) == 0 {
		return
	}
	tp := chaos.TP{Topic: sp.p.t.name, Partition: sp.p.index}
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, a := range got {
		for off := a.First; off <= a.Last; off++ {
			if !run.take() {
				return
			}
			run.share.deliveries = append(run.share.deliveries, chaos.ShareDelivery{Group: sp.key.Group, TP: tp, Offset: off,
				DeliveryCount: a.DeliveryCount, Member: member, At: now, Seq: run.shareSeq.Add(1)})
		}
	}
}

// recordShareAcks notes acknowledgements sp's leader applied and
// persisted for member. Callers hold sp.mu.
func (c *Cluster) recordShareAcks(sp *sharePartition, member string, now time.Time, batches []share.AckBatch) {
	run := c.chaos.Load()
	if run == nil {
		return
	}
	tp := chaos.TP{Topic: sp.p.t.name, Partition: sp.p.index}
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, b := range batches {
		for off := b.First; off <= b.Last; off++ {
			t := b.Types[0]
			if len(b.Types) > 1 {
				t = b.Types[off-b.First]
			}
			if !run.take() {
				return
			}
			run.share.acks = append(run.share.acks, chaos.ShareAck{Group: sp.key.Group, TP: tp, Offset: off, Type: int8(t),
				Member: member, At: now, Seq: run.shareSeq.Add(1)})
		}
	}
}

// shareInputs splits a run's share recording by share group, each with
// the group's lock duration and delivery limit.
func (c *Cluster) shareInputs(rec shareRecording) []chaos.ShareInput {
	by := map[string]*chaos.ShareInput{}
	group := func(g string) *chaos.ShareInput {
		if in := by[g]; in != nil {
			return in
		}
		lim := c.shareLimits(g)
		in := &chaos.ShareInput{LockDuration: lim.LockDuration, DeliveryLimit: lim.DeliveryCountLimit}
		by[g] = in
		return in
	}
	for _, d := range rec.deliveries {
		in := group(d.Group)
		in.Deliveries = append(in.Deliveries, d)
	}
	for _, a := range rec.acks {
		in := group(a.Group)
		in.Acks = append(in.Acks, a)
	}
	names := make([]string, 0, len(by))
	for g := range by {
		names = append(names, g)
	}
	slices.SortFunc(names, cmp.Compare)
	out := make([]chaos.ShareInput, 0, len(names))
	for _, g := range names {
		out = append(out, *by[g])
	}
	return out
}
