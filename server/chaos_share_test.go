package server

import (
	"context"
	"sync"
	"testing"
	"time"

	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shareChaosLock is the share groups' lock duration in chaos runs: short,
// so that held records come back within a 4 s run.
const shareChaosLock = 500 * time.Millisecond

// shareChaosConfig gives c's share groups the chaos runs' settings: they
// start at the earliest offset and lock records for shareChaosLock. Call
// it before any share request.
func shareChaosConfig(c *Cluster) {
	c.shares.testConfig = func(_ string, gc *grp.Config) {
		gc.ShareAutoOffsetReset = "earliest"
		gc.ShareRecordLockDuration = shareChaosLock
		gc.ShareHeartbeatInterval = 200 * time.Millisecond // the worker gets partitions soon after it joins
	}
}

// shareWorkload consumes topic in share group group with franz-go until
// ctx ends: a worker that accepts most records, releases every seventh
// on its first delivery and rejects every thirteenth, and a member that
// takes records once, never acknowledges them and leaves once their locks
// ran out, so the worker gets its partitions and those records again. The
// returned func waits for both and says how many records the worker saw.
func shareWorkload(t *testing.T, c *Cluster, ctx context.Context, group, topic string) func() int {
	fast := kgo.MetadataMinAge(100 * time.Millisecond)
	worker := newClient(t, c, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond), fast)
	staller, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.ShareMaxRecords(5), kgo.ShareMaxRecordsStrict(), fast)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	seen := 0
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			for _, r := range worker.PollFetches(ctx).Records() {
				seen++
				switch {
				case r.Offset%7 == 3 && r.DeliveryCount() == 1:
					r.Ack(kgo.AckRelease)
				case r.Offset%13 == 5:
					r.Ack(kgo.AckReject)
				default:
					r.Ack(kgo.AckAccept)
				}
			}
			worker.FlushAcks(ctx)
		}
	}()
	go func() {
		defer wg.Done()
		defer staller.Close()
		// Poll until it holds something, then hold it past its lock.
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			n := len(staller.PollFetches(pctx).Records())
			cancel()
			if n > 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(3 * shareChaosLock):
		}
	}()
	return func() int {
		wg.Wait()
		return seen
	}
}
