package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// etl runs franz-go's GroupTransactSession consume-transform-produce from
// "in" to "out" until n input records are committed, calling during(i)
// before the i-th EndTxn. It returns how many transactions committed.
func etl(t *testing.T, c *Cluster, n int, during func(i int)) int {
	t.Helper()
	ctx := testContext(t)
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(c.Bootstrap()...),
		kgo.TransactionalID("etl"),
		kgo.ConsumerGroup("etl-group"),
		kgo.ConsumeTopics("in"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(10*time.Millisecond),
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.MaxBufferedRecords(1000),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	done, commits := 0, 0
	for i := 0; done < n; i++ {
		fs := sess.PollRecords(ctx, 40)
		if ctx.Err() != nil {
			t.Fatalf("etl: %d of %d committed when the test timed out", done, n)
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		for _, r := range recs {
			sess.Produce(ctx, &kgo.Record{Topic: "out", Key: r.Key, Value: append([]byte("out-"), r.Value...)}, nil)
		}
		during(i)
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Logf("end %d: %v (the session retries from the last committed offsets)", i, err)
		}
		if committed {
			done += len(recs)
			commits++
		}
	}
	if done != n {
		t.Fatalf("etl committed %d input records, want %d", done, n)
	}
	return commits
}

// TestTxnETLCoordinatorCrashMidCommit: consume-transform-produce with the
// transaction coordinator crashed between PrepareCommit and its markers
// (and later the output partition leader) loses and duplicates nothing.
func TestTxnETLCoordinatorCrashMidCommit(t *testing.T) {
	c := txnCluster(t, Config{OffsetsTopicPartitions: 3})
	for _, topic := range []string{"in", "out"} {
		if err := c.CreateTopic(topic, 3, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
			t.Fatal(err)
		}
	}
	const n = 600
	prod := newClient(t, c, kgo.DefaultProduceTopic("in"), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx := testContext(t)
	var in []*kgo.Record
	for i := range n {
		in = append(in, &kgo.Record{Key: []byte(strconv.Itoa(i % 7)), Value: []byte(fmt.Sprintf("v%04d", i))})
	}
	if err := prod.ProduceSync(ctx, in...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	var crashed []int32
	etl(t, c, n, func(i int) {
		switch i {
		case 2:
			c.CrashTransactionCoordinatorBeforeMarkers()
		case 5:
			// Restart the crashed coordinator and crash a leader of "out".
			for _, id := range crashed {
				if err := c.StartBroker(id); err != nil {
					t.Fatal(err)
				}
			}
			crashed = nil
			ps, _ := c.Partition("out", 0)
			if err := c.StopBroker(ps.Leader, StopCrash); err != nil {
				t.Fatal(err)
			}
			crashed = append(crashed, ps.Leader)
		}
		if i == 3 {
			for _, b := range c.State().Brokers {
				if !b.Up {
					crashed = append(crashed, b.ID)
				}
			}
			if len(crashed) != 1 {
				t.Fatalf("the coordinator did not crash: down %v", crashed)
			}
		}
	})

	// Bring the crashed broker back so every client can reach every broker.
	for _, id := range crashed {
		if err := c.StartBroker(id); err != nil {
			t.Fatal(err)
		}
	}
	// Every input value exactly once in the committed output.
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("out-v%04d", i)
	}
	got := consumeValues(t, c, "out", true, func(rs []*kgo.Record) bool { return len(rs) >= n })
	vs := values(got)
	slices.Sort(vs)
	if !slices.Equal(vs, want) {
		t.Fatalf("committed output: %d records, want each of %d once", len(vs), n)
	}
	// Nothing more arrives.
	extra := newClient(t, c, kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	// Read all n first (however slow the machine), then a quiet second
	// in which nothing more may arrive.
	seen := 0
	for seen < n && ctx.Err() == nil {
		seen += len(extra.PollFetches(ctx).Records())
	}
	quiet, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for quiet.Err() == nil {
		seen += len(extra.PollFetches(quiet).Records())
	}
	if seen != n {
		t.Fatalf("a second read_committed consumer saw %d records, want %d", seen, n)
	}
	// The group's committed offsets are the end of the input.
	offsets, err := kadm.NewClient(newClient(t, c)).FetchOffsets(ctx, "etl-group")
	if err != nil {
		t.Fatal(err)
	}
	sum := int64(0)
	offsets.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != n {
		t.Fatalf("committed input offsets add up to %d, want %d", sum, n)
	}
}
