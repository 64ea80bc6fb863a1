package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceAt writes n records of size bytes to topic/0, one batch each, with
// the record timestamp ts.
func produceAt(t *testing.T, cl *kgo.Client, topic string, n, size int, ts time.Time) {
	t.Helper()
	for i := range n {
		r := &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%0*d", size, i)), Timestamp: ts}
		if err := cl.ProduceSync(testContext(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// logStarts is every replica's log start offset of topic/0.
func logStarts(t *testing.T, c *Cluster, topic string) []int64 {
	t.Helper()
	ps, ok := c.Partition(topic, 0)
	if !ok {
		t.Fatalf("no partition %s/0", topic)
	}
	var out []int64
	for _, r := range ps.Replicas {
		out = append(out, r.LogStartOffset)
	}
	return out
}

// A consumer that falls behind retention.ms: the old segments are deleted
// on the retention check after the hour passes on the cluster's clock, every
// replica's log start moves to 30, ListOffsets earliest says so, and a
// consumer at offset 0 gets OFFSET_OUT_OF_RANGE and resets per its
// auto.offset.reset: to the log start or to the end.
func TestConsumerBehindRetentionResets(t *testing.T) {
	c := NewTestCluster(t, Config{Clock: clock.NewManual(time.Time{})})
	// segment.ms of 10 minutes puts the records of T and of T+40min in
	// different segments.
	if err := c.CreateTopic("r", 1, 3, map[string]string{"retention.ms": "3600000", "segment.ms": "600000", "segment.bytes": "2000"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	t0 := c.Now()
	produceAt(t, cl, "r", 30, 100, t0)
	if err := c.AdvanceClock(40 * time.Minute); err != nil {
		t.Fatal(err)
	}
	produceAt(t, cl, "r", 20, 100, c.Now())
	if got := logStarts(t, c, "r"); got[0] != 0 {
		t.Fatalf("log starts %v before the hour", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	since := c.Events(0)
	// T+65min: the retention check at T+65 (every 5 min) sees the records
	// of T 65 min old.
	if err := c.AdvanceClock(25 * time.Minute); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "every replica following the log start", func() bool {
		s := logStarts(t, c, "r")
		return s[0] == 30 && s[1] == 30 && s[2] == 30
	})
	ev, err := c.WaitFor(ctx, func(e Event) bool {
		return e.Seq > seqOf(since) && e.Type == EventLogStartMoved && e.Topic == "r" && e.Reason == "retention"
	})
	if err != nil || ev.From != 0 || ev.To != 30 || ev.Broker != 1 {
		t.Fatalf("log_start_moved event %+v, %v", ev, err)
	}

	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup("r", 0); o.Offset != 30 {
		t.Fatalf("ListOffsets earliest %d, want 30", o.Offset)
	}

	// Fetching below the log start: OFFSET_OUT_OF_RANGE.
	raw := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"r": {0: kgo.NewOffset().At(0)}}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := raw.PollFetches(ctx)
	if r := firstRecord(t, fs); r.Offset != 30 || !strings.HasSuffix(string(r.Value), "0") {
		t.Fatalf("reset to earliest: first record at %d (%q), want 30", r.Offset, r.Value)
	}

	latest := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"r": {0: kgo.NewOffset().At(5)}}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	done := make(chan kgo.Fetches, 1)
	go func() { done <- latest.PollFetches(ctx) }()
	// The consumer resets to the end (50), then reads what comes next.
	waitFor(t, 10*time.Second, "the reset consumer to wait at the end", func() bool {
		produceAt(t, cl, "r", 1, 10, c.Now())
		select {
		case fs := <-done:
			if r := firstRecord(t, fs); r.Offset < 50 {
				t.Fatalf("reset to latest read offset %d", r.Offset)
			}
			return true
		default:
			return false
		}
	})

	// A direct fetch below the log start answers OFFSET_OUT_OF_RANGE.
	res, code := readAt(c, "r", 0, 10)
	if code != kerr.OffsetOutOfRange.Code || res != 30 {
		t.Fatalf("read at 10: code %d log start %d", code, res)
	}
}

func seqOf(es []Event) uint64 {
	if len(es) == 0 {
		return 0
	}
	return es[len(es)-1].Seq
}

func firstRecord(t *testing.T, fs kgo.Fetches) *kgo.Record {
	t.Helper()
	for _, e := range fs.Errors() {
		if !errors.Is(e.Err, context.Canceled) {
			t.Fatalf("fetch error: %v", e.Err)
		}
	}
	rs := fs.Records()
	if len(rs) == 0 {
		t.Fatal("no records")
	}
	return rs[0]
}

// readAt reads topic/p at offset from its leader, as a consumer fetch does,
// and returns the log start the answer carries and the error code.
func readAt(c *Cluster, topic string, p int32, offset int64) (int64, int16) {
	pt := c.topics.Load().byName[topic].partitions()[p]
	pt.mu.Lock()
	defer pt.mu.Unlock()
	res, code := pt.st.Read(pt.st.Leader(), offset, 1<<20)
	return res.LogStartOffset, code
}

// heapAfterGC is the live heap after a full collection.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// An hour of produce on the manual clock with retention.ms of 10 minutes:
// the log and the heap stay bounded by what retention keeps, not by what
// was produced (60 MB).
func TestRetentionBoundsMemoryOverAnHour(t *testing.T) {
	if testing.Short() {
		t.Skip("produces 60 MB")
	}
	c := NewTestCluster(t, Config{Clock: clock.NewManual(time.Time{}), RetentionCheckInterval: time.Minute})
	if err := c.CreateTopic("m", 1, 3, map[string]string{"retention.ms": "600000", "segment.ms": "60000"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.DefaultProduceTopic("m"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(2<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := make([]byte, 10_000)
	var heap20 uint64
	var maxSize int64
	for minute := range 60 {
		rs := make([]*kgo.Record, 100)
		for i := range rs {
			rs[i] = &kgo.Record{Value: value, Timestamp: c.Now()}
		}
		if err := cl.ProduceSync(testContext(t), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := c.AdvanceClock(time.Minute); err != nil {
			t.Fatal(err)
		}
		p := c.partition("m", 0)
		p.mu.Lock()
		for _, r := range p.st.Replicas() {
			maxSize = max(maxSize, r.Log().Size())
		}
		p.mu.Unlock()
		if minute == 19 {
			heap20 = heapAfterGC()
		}
	}
	// Followers drop what the leader dropped on their next fetch.
	waitFor(t, 10*time.Second, "followers at the leader's log start", func() bool {
		s := logStarts(t, c, "m")
		return s[0] > 0 && s[1] == s[0] && s[2] == s[0]
	})
	heap60 := heapAfterGC()
	// 11 one-minute segments of ~1 MB at most are kept at any time.
	if ps, _ := c.Partition("m", 0); ps.Replicas[0].Segments > 12 || ps.Replicas[0].LogBytes > 12<<20 {
		t.Fatalf("leader replica: %d segments, %d bytes", ps.Replicas[0].Segments, ps.Replicas[0].LogBytes)
	}
	if maxSize > 12<<20 {
		t.Fatalf("a replica's log reached %d bytes", maxSize)
	}
	t.Logf("heap after 20 min %d MB, after 60 min %d MB; largest log %d MB; 60 MB produced",
		heap20>>20, heap60>>20, maxSize>>20)
	if heap60 > heap20+16<<20 {
		t.Fatalf("heap grew from %d to %d bytes between minute 20 and minute 60", heap20, heap60)
	}
}
