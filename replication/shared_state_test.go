package replication

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// TestMain checks, after every test of the package has run, that nothing
// wrote to the frozen states every idle log and partition shares: a write
// that skipped own or extras would corrupt every idle partition at once.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := sharedStateIntact(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		code = 1
	}
	os.Exit(code)
}

func sharedStateIntact() error {
	if !reflect.DeepEqual(emptyLog, logData{}) {
		return fmt.Errorf("the shared empty log was written: %+v", emptyLog)
	}
	if want := (logData{epochs: []EpochEntry{{0, 0}}}); !reflect.DeepEqual(firstLeaderLog, want) || cap(firstLeaderLog.epochs) != 1 {
		return fmt.Errorf("the shared first leader's log was written: %+v", firstLeaderLog)
	}
	if want := (partitionExtras{history: []EpochEntry{{0, 0}}}); !reflect.DeepEqual(newPartitionExtras, want) {
		return fmt.Errorf("the shared partition extras were written: %+v", newPartitionExtras)
	}
	return nil
}

// The sizes an idle partition is made of (BenchmarkPartitionMemory in
// server measures the sum): a change here is a change in bytes per
// partition, so make it on purpose.
func TestStructSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"Replica", unsafe.Sizeof(Replica{}), 48},
		{"followerState", unsafe.Sizeof(followerState{}), 32},
		{"Log", unsafe.Sizeof(Log{}), 8},
		{"Partition", unsafe.Sizeof(Partition{}), 88},
	} {
		if c.got != c.want {
			t.Errorf("unsafe.Sizeof(%s) = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// sharesIdleState reports whether p holds nothing of its own beyond its
// replicas' identities and follower views.
func sharesIdleState(p *Partition) error {
	if p.partitionExtras != &newPartitionExtras {
		return fmt.Errorf("extras of its own: %+v", *p.partitionExtras)
	}
	for _, r := range p.replicas {
		want := &emptyLog
		if r.Broker == p.leader {
			want = &firstLeaderLog
		}
		if r.log.logData != want {
			return fmt.Errorf("replica %d has a log of its own: %+v", r.Broker, *r.log.logData)
		}
	}
	return nil
}

// A new partition and everything an idle one goes through (follower
// fetches, ISR checks, HW checkpoints, flushes, retention and cleaner
// passes, a clean shutdown and restart of a follower) keep the shared
// states; the first write gives the replicas that take it logs of their
// own and leaves other partitions alone.
func TestIdlePartitionSharesState(t *testing.T) {
	cfg := &Config{MinInsyncReplicas: 2, Retention: RetentionConfig{Delete: true, Ms: 1, Bytes: 0}, Compaction: CompactionConfig{Compact: true}}
	p := NewPartitionShared([]int32{1, 2, 3}, cfg, t0)
	other := NewPartitionShared([]int32{2, 3, 1}, cfg, t0)
	if err := sharesIdleState(p); err != nil {
		t.Fatalf("new partition: %v", err)
	}
	for i := range 10 {
		now := t0.Add(time.Duration(i) * time.Second)
		fetch(t, p, 2, now)
		fetch(t, p, 3, now)
		if out := p.MaybeShrinkISR(now); out != nil {
			t.Fatalf("idle ISR shrink removed %v", out)
		}
		p.CheckpointHW()
		p.Flush(1)
		p.ApplyRetention(now.Add(time.Hour))
		p.Clean(now, true)
		if p.HasChanges() || p.TakeChanges() != nil {
			t.Fatal("an idle partition recorded changes")
		}
		p.Replica(1).Log().EachSegment(func(int64, []*Batch) {})
		_ = p.Replica(2).Log().SegmentBase(0)
	}
	p.Shutdown(3)
	p.Restart(3)
	fetch(t, p, 3, t0.Add(time.Minute))
	if err := sharesIdleState(p); err != nil {
		t.Fatalf("idle partition: %v", err)
	}
	if v, _ := p.FollowerView(3); v.LEO != 0 || !v.LastFetch.Equal(t0.Add(time.Minute)) {
		t.Fatalf("view of 3 after its fetch: %+v", v)
	}

	mustAppend(t, p, batch(2), 1)
	fetch(t, p, 2, t0.Add(time.Minute))
	if p.Replica(1).Log().logData.shared() || p.Replica(2).Log().logData.shared() || !p.Replica(3).Log().logData.shared() {
		t.Fatal("after an append fetched by 2: want logs of their own on 1 and 2 only")
	}
	if got := p.Replica(1).Log().Epochs(); !slices.Equal(got, []EpochEntry{{0, 0}}) || p.Replica(2).LEO() != 2 {
		t.Fatalf("leader epochs %v, follower 2 LEO %d", got, p.Replica(2).LEO())
	}
	if err := sharesIdleState(other); err != nil {
		t.Fatalf("another partition after writes to the first: %v", err)
	}
	if err := sharedStateIntact(); err != nil {
		t.Fatal(err)
	}
}

// What an idle partition costs, counted exactly: a rf=3 partition is four
// allocations (the partition, its three replicas in one, the replica
// pointers and the ISR) of 280 bytes in all, and an idle round (both
// followers fetch, the leader checks the ISR, HWs are checkpointed)
// allocates nothing.
func TestIdlePartitionAllocations(t *testing.T) {
	cfg := &Config{MinInsyncReplicas: 2}
	replicas := []int32{1, 2, 3}
	if n := testing.AllocsPerRun(100, func() { NewPartitionShared(replicas, cfg, t0) }); n != 4 {
		t.Errorf("a new partition takes %v allocations, want 4", n)
	}
	const count = 1000
	ps := make([]*Partition, count)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range ps {
		ps[i] = NewPartitionShared(replicas, cfg, t0)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / count; per > 280 {
		t.Errorf("a new rf=3 partition takes %d bytes, want at most 280", per)
	}
	p := ps[0]
	now := t0
	round := func() {
		now = now.Add(500 * time.Millisecond)
		for _, id := range []int32{2, 3} {
			if _, code := p.ReplicaFetch(id, 1<<20, now); code != 0 {
				t.Fatalf("fetch by %d: %d", id, code)
			}
		}
		p.MaybeShrinkISR(now)
		p.CheckpointHW()
	}
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Errorf("an idle round takes %v allocations, want none", n)
	}
	if err := sharesIdleState(p); err != nil {
		t.Fatal(err)
	}
}
