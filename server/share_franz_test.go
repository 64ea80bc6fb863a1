package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// franz-go's share consumer (kgo.ShareGroup, v1.22.3): records come with
// delivery counts, a released record comes again with the next count, and
// every record ends accepted or rejected once.
func TestShareFranzGo(t *testing.T) {
	c, _ := newShareCluster(t)
	ctx := testContext(t)
	member := func() *kgo.Client {
		return newClient(t, c, kgo.ShareGroup("sg-franz"), kgo.ConsumeTopics("q"), kgo.FetchMaxWait(100*time.Millisecond))
	}
	a := member()
	poll := func(cl *kgo.Client, d time.Duration) []*kgo.Record {
		pctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return cl.PollFetches(pctx).Records()
	}
	waitFor(t, 30*time.Second, "the share partition initialised", func() bool {
		poll(a, 100*time.Millisecond)
		gs, ok := c.Group("sg-franz")
		return ok && len(gs.SharePartitions) == 1
	})
	shareProduce(t, c, "q", 4)
	var got []*kgo.Record
	waitFor(t, 30*time.Second, "records", func() bool {
		got = append(got, poll(a, 200*time.Millisecond)...)
		return len(got) >= 4
	})
	var seen []string
	for _, r := range got {
		seen = append(seen, fmt.Sprintf("%d/%d", r.Offset, r.DeliveryCount()))
	}
	if !slices.Equal(seen, []string{"0/1", "1/1", "2/1", "3/1"}) {
		t.Fatalf("first delivery: %v", seen)
	}
	got[0].Ack(kgo.AckAccept)
	got[1].Ack(kgo.AckRelease)
	got[2].Ack(kgo.AckReject)
	got[3].Ack(kgo.AckAccept)
	if err := a.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	var again []*kgo.Record
	waitFor(t, 30*time.Second, "the released record", func() bool {
		again = append(again, poll(a, 200*time.Millisecond)...)
		return len(again) > 0
	})
	if len(again) != 1 || again[0].Offset != 1 || again[0].DeliveryCount() != 2 {
		t.Fatalf("after the release: %v", again)
	}
	again[0].Ack(kgo.AckAccept)
	if err := a.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "everything acknowledged", func() bool {
		gs, _ := c.Group("sg-franz")
		return len(gs.SharePartitions) == 1 && gs.SharePartitions[0].StartOffset == 4 && len(gs.SharePartitions[0].InFlight) == 0
	})
}
