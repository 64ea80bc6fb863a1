package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DescribeShareGroupOffsets' lag stays exact while a franz-go share
// consumer works: the partition's leader writes how many records past the
// start offset are done (WriteShareGroupState v1's DeliveryCompleteCount),
// so lag = latest offset - start offset - that count.
func TestShareLagExactAfterLeaderWrites(t *testing.T) {
	e := newShareEnv(t, Config{})
	const g = "lag-share"
	if err := e.c.AlterGroupConfig(g, map[string]string{"share.auto.offset.reset": "earliest"}, nil); err != nil {
		t.Fatal(err)
	}
	e.produceTo(0, 10)
	cl := newClient(t, e.c, kgo.ShareGroup(g), kgo.ConsumeTopics("t"), kgo.FetchMaxWait(100*time.Millisecond))
	ctx := testContext(t)
	poll := func() []*kgo.Record {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		return cl.PollFetches(pctx).Records()
	}
	lag := func(want string) {
		t.Helper()
		gc := e.groupCoordinator(g)
		got := ""
		waitFor(t, 10*time.Second, "lag "+want, func() bool {
			d := e.describeOffsets(gc, g, nil)
			if d.ErrorCode != 0 || len(d.Topics) != 1 || len(d.Topics[0].Partitions) != 2 {
				got = fmt.Sprintf("%+v", d)
				return false
			}
			p0, p1 := d.Topics[0].Partitions[0], d.Topics[0].Partitions[1]
			got = fmt.Sprintf("p0 start %d lag %d, p1 start %d lag %d", p0.StartOffset, p0.Lag, p1.StartOffset, p1.Lag)
			return got == want
		})
	}
	var got []*kgo.Record
	waitFor(t, 30*time.Second, "ten records", func() bool { got = append(got, poll()...); return len(got) >= 10 })
	// 0 released, 1-4 accepted, 5 rejected, 6-9 held: the start stays at
	// 0 and 5 records past it are done.
	got[0].Ack(kgo.AckRelease)
	for _, r := range got[1:5] {
		r.Ack(kgo.AckAccept)
	}
	got[5].Ack(kgo.AckReject)
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	lag("p0 start 0 lag 5, p1 start 0 lag 0")
	// 0 comes again; franz-go accepts 6-9 as it polls (implicit ACCEPT)
	// and 0 here: everything is done, the start moves to 10.
	var again []*kgo.Record
	waitFor(t, 30*time.Second, "offset 0 again", func() bool { again = append(again, poll()...); return len(again) >= 1 })
	if again[0].Offset != 0 || again[0].DeliveryCount() != 2 {
		t.Fatalf("redelivered offset %d count %d", again[0].Offset, again[0].DeliveryCount())
	}
	again[0].Ack(kgo.AckAccept)
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	lag("p0 start 10 lag 0, p1 start 0 lag 0")
	// New records: the lag counts them.
	e.produceTo(0, 3)
	lag("p0 start 10 lag 3, p1 start 0 lag 0")
}
