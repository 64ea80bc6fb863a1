package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
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

// Three franz-go share consumers on one partition, concurrently, with the
// race detector: every record is delivered to one member at a time and
// accepted exactly once.
func TestShareFranzGoConcurrentMembers(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("q", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	const records = 300
	var clients []*kgo.Client
	for range 3 {
		clients = append(clients, newClient(t, c, kgo.ShareGroup("sg-many"), kgo.ConsumeTopics("q"),
			kgo.FetchMaxWait(50*time.Millisecond), kgo.ShareMaxRecords(7), kgo.ShareMaxRecordsStrict()))
	}
	poll := func(cl *kgo.Client) []*kgo.Record {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		return cl.PollFetches(pctx).Records()
	}
	waitFor(t, 30*time.Second, "three members and the share partition", func() bool {
		for _, cl := range clients {
			poll(cl)
		}
		gs, ok := c.Group("sg-many")
		return ok && len(gs.Members) == 3 && len(gs.SharePartitions) == 1
	})
	shareProduce(t, c, "q", records)
	type got struct {
		member int
		offset int64
	}
	results := make(chan got, 4*records)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, r := range poll(cl) {
					r.Ack(kgo.AckAccept)
					results <- got{i, r.Offset}
				}
				cl.FlushAcks(ctx)
			}
		}()
	}
	seen := map[int64]int{}
	byMember := map[int]int{}
	waitFor(t, 60*time.Second, "every record", func() bool {
		for {
			select {
			case g := <-results:
				seen[g.offset]++
				byMember[g.member]++
				continue
			default:
			}
			break
		}
		gs, _ := c.Group("sg-many")
		return len(seen) == records && len(gs.SharePartitions) == 1 && gs.SharePartitions[0].StartOffset == records
	})
	close(done)
	wg.Wait()
	for off, n := range seen {
		if n != 1 {
			t.Errorf("offset %d delivered %d times", off, n)
		}
	}
	t.Logf("records per member: %v", byMember) // how they spread is the clients' timing
}
