package server

import (
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
)

// recordingListener notes the changes it hears of, by name.
type recordingListener struct {
	name  string
	heard *[]string
	last  partitionChange
}

func (l *recordingListener) partitionChanged(_ *partition, ch partitionChange) {
	*l.heard = append(*l.heard, l.name)
	l.last = ch
}

// bareListenerPartition is a one-replica partition of a cluster that has
// only the listeners a test registers.
func bareListenerPartition(t *testing.T) (*Cluster, *partition) {
	t.Helper()
	c := &Cluster{}
	tp := &topic{name: "t", c: c}
	p := &partition{t: tp, st: replication.NewPartition([]int32{1}, replication.Config{MinInsyncReplicas: 1}, time.Unix(0, 0)), partitionExtras: &idlePartition}
	return c, p
}

func oneRecordBatch(t testing.TB) *replication.Batch {
	raw, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone, []protocol.Record{{Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	return &replication.Batch{Raw: raw, LastOffset: 0, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1}
}

// Listeners of every change hear of every mutation, first and in
// registration order; the others only of those that moved a field they
// want, with the fields that moved and the HW before and after.
func TestPartitionListenersHearWhatTheyWant(t *testing.T) {
	c, p := bareListenerPartition(t)
	var heard []string
	every := &recordingListener{name: "every", heard: &heard}
	hw := &recordingListener{name: "hw", heard: &heard}
	epoch := &recordingListener{name: "epoch", heard: &heard}
	c.onPartitionChange(movedHW, hw)
	c.onPartitionChange(anyChange, every)
	c.onPartitionChange(movedEpoch|movedLeader, epoch)

	p.mutate(func() {}) // nothing moves
	if !slices.Equal(heard, []string{"every"}) || every.last.moved != 0 || every.last.fetcher != -1 {
		t.Fatalf("a change that moved nothing: heard by %v, %+v", heard, every.last)
	}
	heard = nil
	p.mutate(func() { p.st.Append(oneRecordBatch(t), 1, time.Unix(0, 0)) })
	if !slices.Equal(heard, []string{"every", "hw"}) {
		t.Fatalf("an append: heard by %v", heard)
	}
	if ch := hw.last; ch.moved != movedLEO|movedHW|movedLSO || ch.hwFrom != 0 || ch.hw != 1 || ch.lso != 1 {
		t.Fatalf("an append: %+v", ch)
	}
	heard = nil
	p.mutateBy(2, func() { p.st.MakeLeaderless() })
	if !slices.Equal(heard, []string{"every", "hw", "epoch"}) || epoch.last.fetcher != 2 || epoch.last.hw != -1 {
		t.Fatalf("the partition going leaderless: heard by %v, %+v", heard, epoch.last)
	}
}

// Telling the listeners allocates nothing: the produce path runs it for
// every partition of every request.
func TestPartitionMutateAllocatesNothing(t *testing.T) {
	c, p := bareListenerPartition(t)
	c.onPartitionChange(anyChange, &waitersListener{})
	c.onPartitionChange(waitedFields, &waitersListener{})
	allocs := testing.AllocsPerRun(100, func() {
		p.mutate(func() { p.st.MaybeShrinkISR(time.Unix(0, 0)) })
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per mutation", allocs)
	}
}
