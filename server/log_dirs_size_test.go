package server

import (
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// partitionSizes is DescribeLogDirs' size of topic/0 on brokers 1-3.
func partitionSizes(t *testing.T, adm *kadm.Client, topic string) [3]int64 {
	t.Helper()
	all, err := adm.DescribeAllLogDirs(testContext(t), kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	var out [3]int64
	for i := range out {
		id := int32(i + 1)
		p, ok := all[id][LogDir(id)].Topics[topic][0]
		if !ok {
			t.Fatalf("broker %d does not report %s/0", id, topic)
		}
		out[i] = p.Size
	}
	return out
}

func same(n int64) [3]int64 { return [3]int64{n, n, n} }

// TestDescribeLogDirsSizeAfterDeleteRecords: DescribeLogDirs sizes a
// partition as Kafka does, by its segment files. DeleteRecords only moves
// the log start, so the size stays; the next retention check (30 s after
// start, log.initial.task.delay.ms) deletes the segments wholly below the
// log start; the segment holding it keeps its bytes below it.
func TestDescribeLogDirsSizeAfterDeleteRecords(t *testing.T) {
	c := NewTestCluster(t, Config{Clock: clock.NewManual(time.Unix(1_800_000_000, 0))})
	// segment.ms of a minute and records 2 minutes apart: one segment each.
	if err := c.CreateTopic("sz", 1, 3, map[string]string{"segment.ms": "60000"}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(cl)
	var sizes []int64 // after each record
	for i := range 3 {
		produceAt(t, cl, "sz", 1, 10, c.Now().Add(time.Duration(i*2-10)*time.Minute))
		waitFor(t, 10*time.Second, "every replica holding the record", func() bool {
			s := partitionSizes(t, adm, "sz")
			return s[0] > 0 && s == same(s[0]) && (i == 0 || s[0] > sizes[i-1])
		})
		sizes = append(sizes, partitionSizes(t, adm, "sz")[0])
	}
	total, last := sizes[2], sizes[2]-sizes[1]
	deleteTo(t, adm, "sz", 2)
	if got := partitionSizes(t, adm, "sz"); got != same(total) {
		t.Fatalf("after DeleteRecords to 2: sizes %v, want %d (nothing deleted yet)", got, total)
	}
	if err := c.AdvanceClock(30*time.Second - time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := partitionSizes(t, adm, "sz"); got != same(total) {
		t.Fatalf("before the first retention check: sizes %v, want %d", got, total)
	}
	if err := c.AdvanceClock(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := partitionSizes(t, adm, "sz"); got != same(last) {
		t.Fatalf("after the retention check: sizes %v, want %d (the segments at 0 and 1 deleted)", got, last)
	}
	// To the end: the active segment holds the log start, nothing goes.
	deleteTo(t, adm, "sz", 3)
	if err := c.AdvanceClock(5 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := partitionSizes(t, adm, "sz"); got != same(last) {
		t.Fatalf("after DeleteRecords to the end and a check: sizes %v, want %d", got, last)
	}
}

// deleteTo deletes topic/0's records below offset.
func deleteTo(t *testing.T, adm *kadm.Client, topic string, offset int64) {
	t.Helper()
	rs, err := adm.DeleteRecords(testContext(t), kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: offset}}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := rs.Lookup(topic, 0); r.Err != nil || r.LowWatermark != offset {
		t.Fatalf("DeleteRecords to %d: low watermark %d, %v", offset, r.LowWatermark, r.Err)
	}
}
