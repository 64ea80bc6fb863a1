package server

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fastPersister is the cluster's persister with a short backoff, so that
// a test retrying through a failover takes milliseconds, not seconds.
func fastPersister(c *Cluster) *sharePersister {
	p := c.newSharePersister().(*sharePersister)
	p.backoff, p.backoffMax = 5*time.Millisecond, 50*time.Millisecond
	p.attempts = 20
	return p
}

// stateIndex is the __share_group_state partition holding k's state.
func stateIndex(c *Cluster, k share.Key) int32 {
	sh, err := c.sc.rt.ShardFor(k.CoordinatorKey())
	if err != nil {
		panic(err)
	}
	return sh.Index()
}

func mustCode(t *testing.T, what string, code int16) {
	t.Helper()
	if code != 0 {
		t.Fatalf("%s: %v", what, kerr.ErrorForCode(code))
	}
}

// TestShareStateSurvivesCoordinatorFailover: crash the broker leading the
// state partition; the new leader replays it (snapshot plus updates) and
// reads answer the last committed state exactly.
func TestShareStateSurvivesCoordinatorFailover(t *testing.T) {
	e := newShareEnv(t, Config{ShareSnapshotUpdateRecordsPerSnapshot: 2})
	p := fastPersister(e.c)
	k := e.key("fo", 0)
	mustCode(t, "initialize", p.Initialize(k, 2, 0))
	if _, code := p.Read(k, 7); code != 0 {
		t.Fatalf("read: %d", code)
	}
	// Five writes: updates and snapshots interleave (2 updates a snapshot).
	for i := range int64(5) {
		mustCode(t, "write", p.Write(k, share.PartitionState{StateEpoch: 2, LeaderEpoch: 7, StartOffset: i,
			Batches: []share.StateBatch{sb(i, i+3, share.Available, int16(i+1))}}))
	}
	// Overlaps go to the higher delivery count: the last write's batch.
	want := share.PartitionState{StateEpoch: 2, LeaderEpoch: 7, StartOffset: 4,
		Batches: []share.StateBatch{sb(4, 7, share.Available, 5)}}
	if got, code := p.Read(k, 7); code != 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("before failover: %+v (%d), want %+v", got, code, want)
	}
	before := e.c.ShareStates()

	idx := stateIndex(e.c, k)
	old, _ := e.c.Partition(shareStateTopic, idx)
	if err := e.c.StopBroker(old.Leader, StopCrash); err != nil {
		t.Fatal(err)
	}
	now, _ := e.c.Partition(shareStateTopic, idx)
	if now.Leader == old.Leader || now.Leader < 0 {
		t.Fatalf("leader %d after stopping %d", now.Leader, old.Leader)
	}
	if co := e.coordinator(k); co != now.Leader {
		t.Fatalf("FindCoordinator %d, leader %d", co, now.Leader)
	}
	if got, code := p.Read(k, 7); code != 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("after failover: %+v (%d), want %+v", got, code, want)
	}
	after := e.c.ShareStates()
	for i := range after {
		after[i].Coordinator = before[i].Coordinator
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("state after failover %+v\nbefore %+v", after, before)
	}
	loaded := false
	for _, ev := range e.c.Events(0) {
		if ev.Type == EventShareCoordinatorLoaded && ev.Broker == now.Leader && ev.Partition == idx && ev.Epoch == now.LeaderEpoch {
			loaded = ev.Detail == "1 share partitions"
		}
	}
	if !loaded {
		t.Fatal("no share_coordinator_loaded event of the new leader with 1 share partition")
	}
	// The old share-partition leader is still fenced on the new coordinator.
	if code := p.Write(k, share.PartitionState{StateEpoch: 2, LeaderEpoch: 6, StartOffset: 4}); code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale leader after failover: %d", code)
	}
	// And writes go on.
	mustCode(t, "write after failover", p.Write(k, share.PartitionState{StateEpoch: 2, LeaderEpoch: 7, StartOffset: 6}))
	if got, _ := p.Read(k, 7); got.StartOffset != 6 || !slices.Equal(got.Batches, []share.StateBatch{sb(6, 7, share.Available, 5)}) {
		t.Fatalf("after a write on the new coordinator: %+v", got)
	}
}

// TestShareStateSurvivesRestart: a full restart with --data-dir replays
// __share_group_state from disk.
func TestShareStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	c1, err := NewCluster(Config{DataDir: dir, ShareStatePartitions: 2, ShareSnapshotUpdateRecordsPerSnapshot: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.CreateTopic("t", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	id := c1.topic("t").id
	p := fastPersister(c1)
	keys := []share.Key{{Group: "a", TopicID: id, Partition: 0}, {Group: "b", TopicID: id, Partition: 1}}
	for i, k := range keys {
		mustCode(t, "initialize", p.Initialize(k, int32(i+1), 10))
		for j := range int64(4) {
			mustCode(t, "write", p.Write(k, share.PartitionState{StateEpoch: int32(i + 1), LeaderEpoch: 3, StartOffset: 10 + j,
				Batches: []share.StateBatch{sb(10+j, 20, share.Available, int16(j+1))}}))
		}
	}
	before := c1.ShareStates()
	if len(before) != 2 {
		t.Fatalf("%d share partitions", len(before))
	}
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}

	c2 := NewTestCluster(t, Config{DataDir: dir, ShareStatePartitions: 2, ShareSnapshotUpdateRecordsPerSnapshot: 3})
	if c2.topic("t").id != id {
		t.Fatal("topic id changed")
	}
	after := c2.ShareStates()
	for i := range after {
		after[i].Coordinator = before[i].Coordinator
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("after restart %+v\nbefore %+v", after, before)
	}
	p2 := fastPersister(c2)
	for i, k := range keys {
		got, code := p2.Read(k, 3)
		want := share.PartitionState{StateEpoch: int32(i + 1), LeaderEpoch: 3, StartOffset: 13, Batches: []share.StateBatch{sb(13, 20, share.Available, 4)}}
		if code != 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s after restart: %+v (%d), want %+v", k.Group, got, code, want)
		}
	}
}

// TestShareStateMinISR: with the state partition's ISR below
// min.insync.replicas (2) a write fails as Kafka's coordinator answers it
// (COORDINATOR_NOT_AVAILABLE) and changes nothing; the persister retries
// it, and it succeeds once the followers are back in the ISR.
func TestShareStateMinISR(t *testing.T) {
	e := newShareEnv(t, Config{})
	k := e.key("isr", 0)
	p := fastPersister(e.c)
	mustCode(t, "initialize", p.Initialize(k, 0, 0))
	mustCode(t, "write", p.Write(k, share.PartitionState{LeaderEpoch: 0, StartOffset: 1}))

	idx := stateIndex(e.c, k)
	ps, _ := e.c.Partition(shareStateTopic, idx)
	var followers []int32
	for _, rs := range ps.Replicas {
		if r := rs.Broker; r != ps.Leader {
			followers = append(followers, r)
			if err := e.c.PauseReplica(shareStateTopic, idx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.c.SetISR(shareStateTopic, idx, []int32{ps.Leader}); err != nil {
		t.Fatal(err)
	}
	// Over the wire: one answer, no retry.
	w := e.write(ps.Leader, k, 0, 0, 5)
	if w.ErrorCode != kerr.CoordinatorNotAvailable.Code || msgOf(w.ErrorMessage) != "Unable to write share group state: The coordinator is not available." {
		t.Fatalf("write below min ISR: %d %s", w.ErrorCode, msgOf(w.ErrorMessage))
	}
	if r := e.read(ps.Leader, k, 0); r.ErrorCode != 0 || r.StartOffset != 1 {
		t.Fatalf("after the failed write: %+v", r)
	}
	// The persister retries, and heals on its third attempt.
	var attempts atomic.Int32
	p.attempted = func(n int, code int16) {
		attempts.Store(int32(n))
		if n == 2 {
			if code != kerr.CoordinatorNotAvailable.Code {
				t.Errorf("attempt 2: %d", code)
			}
			for _, f := range followers {
				if err := e.c.ResumeReplica(shareStateTopic, idx, f); err != nil {
					t.Error(err)
				}
			}
			waitFor(t, 10*time.Second, "the followers back in the ISR", func() bool {
				ps, _ := e.c.Partition(shareStateTopic, idx)
				return len(ps.ISR) == 3
			})
		}
	}
	mustCode(t, "write through the persister", p.Write(k, share.PartitionState{LeaderEpoch: 0, StartOffset: 5}))
	if n := attempts.Load(); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	if got, _ := p.Read(k, 0); got.StartOffset != 5 {
		t.Fatalf("start offset %d", got.StartOffset)
	}
}

// TestSharePersisterGivesUp: with nothing to heal the outage, the
// persister stops after its attempts with the last error, as Kafka's
// does after 5.
func TestSharePersisterGivesUp(t *testing.T) {
	e := newShareEnv(t, Config{})
	k := e.key("down", 1)
	p := fastPersister(e.c)
	p.attempts = 5
	mustCode(t, "initialize", p.Initialize(k, 0, 0))
	idx := stateIndex(e.c, k)
	ps, _ := e.c.Partition(shareStateTopic, idx)
	for _, rs := range ps.Replicas {
		if r := rs.Broker; r != ps.Leader {
			scMust(t, e.c.PauseReplica(shareStateTopic, idx, r))
		}
	}
	scMust(t, e.c.SetISR(shareStateTopic, idx, []int32{ps.Leader}))
	var n int
	p.attempted = func(i int, _ int16) { n = i }
	if code := p.Write(k, share.PartitionState{StartOffset: 3}); code != kerr.CoordinatorNotAvailable.Code || n != 5 {
		t.Fatalf("code %d after %d attempts", code, n)
	}
	// Errors the persister does not retry come back at once.
	p.attempted = func(i int, _ int16) { n = i }
	if code := p.Write(share.Key{Group: "never", TopicID: e.id, Partition: 0}, share.PartitionState{}); code != kerr.InvalidRequest.Code || n != 1 {
		t.Fatalf("uninitialized write: code %d after %d attempts", code, n)
	}
}

// TestShareStateManyWritesWithMoves runs many writes on several share
// partitions while the state partitions' leadership moves (clean
// elections and crashed brokers), and checks against a model that every
// committed write is there, exactly, at the end and after a reload.
func TestShareStateManyWritesWithMoves(t *testing.T) {
	e := newShareEnv(t, Config{ShareStatePartitions: 2, ShareSnapshotUpdateRecordsPerSnapshot: 7})
	p := fastPersister(e.c)
	var keys []share.Key
	for g := range 3 {
		for part := range int32(2) {
			keys = append(keys, e.key(fmt.Sprintf("many-%d", g), part))
		}
	}
	model := map[share.Key]share.PartitionState{}
	for _, k := range keys {
		mustCode(t, "initialize", p.Initialize(k, 1, 0))
		model[k] = share.PartitionState{StateEpoch: 1, LeaderEpoch: 0, StartOffset: 0}
	}
	const rounds = 60
	var down int32
	for round := range rounds {
		for i, k := range keys {
			m := model[k]
			// Each round acknowledges offsets and redelivers some.
			start := m.StartOffset + int64(i%3)
			batches := []share.StateBatch{sb(start, start+4, share.Available, int16(round%4+1)), sb(start+5, start+6, share.Archived, 1)}
			w := share.PartitionState{StateEpoch: 1, LeaderEpoch: 0, StartOffset: start, Batches: batches}
			mustCode(t, fmt.Sprintf("round %d write %s/%d", round, k.Group, k.Partition), p.Write(k, w))
			m.StartOffset = start
			m.Batches = share.CombineBatches(m.Batches, batches, start)
			model[k] = m
		}
		switch round % 10 {
		case 3: // a clean election to another ISR member
			for idx := range int32(2) {
				ps, _ := e.c.Partition(shareStateTopic, idx)
				for _, r := range ps.ISR {
					if r != ps.Leader {
						if _, err := e.c.ElectLeader(shareStateTopic, idx, r, false); err != nil {
							t.Fatal(err)
						}
						break
					}
				}
			}
		case 6: // crash the leader of partition 0; writes go on without it
			ps, _ := e.c.Partition(shareStateTopic, 0)
			down = ps.Leader
			scMust(t, e.c.StopBroker(down, StopCrash))
		case 9: // and it comes back
			scMust(t, e.c.StartBroker(down))
			waitFor(t, 20*time.Second, "the restarted broker back in the ISR", func() bool {
				for idx := range int32(2) {
					if ps, _ := e.c.Partition(shareStateTopic, idx); len(ps.ISR) != 3 {
						return false
					}
				}
				return true
			})
		}
	}
	check := func(when string) {
		for _, k := range keys {
			got, code := p.Read(k, 0)
			want := model[k]
			if code != 0 || got.StartOffset != want.StartOffset || got.StateEpoch != want.StateEpoch || !slices.Equal(got.Batches, want.Batches) {
				t.Fatalf("%s: %s/%d: %+v (%d), want %+v", when, k.Group, k.Partition, got, code, want)
			}
		}
	}
	check("at the end")
	loads := 0
	for _, ev := range e.c.Events(0) {
		if ev.Type == EventShareCoordinatorLoaded {
			loads++
		}
	}
	if loads < 14 { // 2 first loads, 12 elections, a crash
		t.Fatalf("the state partitions were loaded %d times", loads)
	}
	// Every state partition moves once more: the new leaders replay it all.
	for idx := range int32(2) {
		ps, _ := e.c.Partition(shareStateTopic, idx)
		scMust(t, e.c.StopBroker(ps.Leader, StopClean))
		check(fmt.Sprintf("after moving partition %d", idx))
		scMust(t, e.c.StartBroker(ps.Leader))
		waitFor(t, 20*time.Second, "the broker back in the ISR", func() bool {
			ps2, _ := e.c.Partition(shareStateTopic, idx)
			return len(ps2.ISR) == 3
		})
	}
}

// TestShareStateConcurrentWritesWithMoves: share partitions written at
// once from many goroutines (several per state partition) while the state
// partitions' leaders move keep every committed write. Each writer asks
// for a move every 10 writes and waits for it, so the moves interleave
// with the writes of the others.
func TestShareStateConcurrentWritesWithMoves(t *testing.T) {
	e := newShareEnv(t, Config{ShareStatePartitions: 2, ShareSnapshotUpdateRecordsPerSnapshot: 5})
	p := fastPersister(e.c)
	const writers, writes = 8, 40
	var mu sync.Mutex
	moved := sync.NewCond(&mu)
	moves := 0
	stop := make(chan struct{})
	want := make(chan struct{}, writers*writes/10) // never full: a send holds mu
	moverDone := make(chan error, 1)
	go func() { // the mover: clean elections, alternating the partitions
		for {
			select {
			case <-stop:
				moverDone <- nil
				return
			case <-want:
			}
			mu.Lock()
			idx := int32(moves % 2)
			mu.Unlock()
			ps, _ := e.c.Partition(shareStateTopic, idx)
			for _, r := range ps.ISR {
				if r != ps.Leader {
					if _, err := e.c.ElectLeader(shareStateTopic, idx, r, false); err != nil {
						moverDone <- err
						return
					}
					break
				}
			}
			mu.Lock()
			moves++
			moved.Broadcast()
			mu.Unlock()
		}
	}()
	type result struct {
		k    share.Key
		want share.PartitionState
		err  error
	}
	results := make(chan result, writers)
	for w := range writers {
		k := e.key(fmt.Sprintf("conc-%d", w), int32(w%2))
		mustCode(t, "initialize", p.Initialize(k, 3, 0))
		go func() {
			m := share.PartitionState{StateEpoch: 3, StartOffset: 0}
			for i := range writes {
				if i%10 == 9 {
					mu.Lock()
					want <- struct{}{}
					for target := moves + 1; moves < target; {
						moved.Wait()
					}
					mu.Unlock()
				}
				start := int64(i)
				bs := []share.StateBatch{sb(start, start+2, share.Acknowledged, int16(i%3+1))}
				if code := p.Write(k, share.PartitionState{StateEpoch: 3, LeaderEpoch: 1, StartOffset: start, Batches: bs}); code != 0 {
					results <- result{k: k, err: fmt.Errorf("write %d: %v", i, kerr.ErrorForCode(code))}
					return
				}
				m.StartOffset, m.Batches = start, share.CombineBatches(m.Batches, bs, start)
			}
			results <- result{k: k, want: m}
		}()
	}
	var got []result
	for range writers {
		got = append(got, <-results)
	}
	close(stop)
	if err := <-moverDone; err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.err != nil {
			t.Fatalf("%s: %v", r.k.Group, r.err)
		}
		st, code := p.Read(r.k, 1)
		if code != 0 || st.StartOffset != r.want.StartOffset || !slices.Equal(st.Batches, r.want.Batches) {
			t.Fatalf("%s: %+v (%d), want %+v", r.k.Group, st, code, r.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if moves < 3 {
		t.Fatalf("%d moves", moves)
	}
	t.Logf("%d writes while the state partitions' leaders moved %d times", writers*writes, moves)
}

// TestShareStateWriteTimeout: with the state partition's followers stuck
// but still in the ISR, a write waits for them up to
// share.coordinator.write.timeout.ms (5 s, on the cluster clock) and then
// answers COORDINATOR_NOT_AVAILABLE, changing nothing the coordinator
// answers. Once the followers catch up, the timed-out record is in the
// committed log: the next coordinator to load the partition replays it,
// as a coordinator reloading its log does.
func TestShareStateWriteTimeout(t *testing.T) {
	e := newShareEnv(t, Config{Clock: clock.NewManual(time.Time{})})
	k := e.key("slow", 0)
	co := e.coordinator(k)
	if p := e.initialize(co, k, 0, 0); p.ErrorCode != 0 {
		t.Fatalf("initialize: %d", p.ErrorCode)
	}
	idx := stateIndex(e.c, k)
	ps, _ := e.c.Partition(shareStateTopic, idx)
	for _, rs := range ps.Replicas {
		if rs.Broker != ps.Leader {
			scMust(t, e.c.PauseReplica(shareStateTopic, idx, rs.Broker))
		}
	}
	answer := make(chan kmsg.WriteShareGroupStateResponseTopicPartition, 1)
	go func() {
		req := kmsg.NewPtrWriteShareGroupStateRequest()
		req.GroupID = k.Group
		req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: k.TopicID,
			Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{{Partition: 0, StartOffset: 4}}}}
		resp, err := e.cl.Broker(int(co)).Request(e.ctx, req)
		if err != nil {
			answer <- kmsg.WriteShareGroupStateResponseTopicPartition{ErrorCode: -1}
			return
		}
		answer <- resp.(*kmsg.WriteShareGroupStateResponse).Topics[0].Partitions[0]
	}()
	// The record is on the leader, not committed: the write waits.
	waitFor(t, 10*time.Second, "the write appended on the leader", func() bool {
		p, _ := e.c.Partition(shareStateTopic, idx)
		for _, r := range p.Replicas {
			if r.Broker == p.Leader {
				return r.LogEndOffset > p.HighWatermark
			}
		}
		return false
	})
	var got kmsg.WriteShareGroupStateResponseTopicPartition
	advanced := time.Duration(0)
	waitFor(t, 10*time.Second, "the write to time out", func() bool {
		select {
		case got = <-answer:
			return true
		default:
		}
		if advanced < 20*time.Second { // never near replica.lag.time.max.ms (30 s)
			scMust(t, e.c.AdvanceClock(time.Second))
			advanced += time.Second
		}
		return false
	})
	if advanced < 5*time.Second {
		t.Fatalf("answered after %v, before the write timeout", advanced)
	}
	if got.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("write past the timeout: %d", got.ErrorCode)
	}
	if s := e.summary(co, k); s.StartOffset != 0 {
		t.Fatalf("start offset %d after the timed-out write", s.StartOffset)
	}
	for _, rs := range ps.Replicas {
		if rs.Broker != ps.Leader {
			scMust(t, e.c.ResumeReplica(shareStateTopic, idx, rs.Broker))
		}
	}
	waitFor(t, 10*time.Second, "the followers caught up", func() bool {
		p, _ := e.c.Partition(shareStateTopic, idx)
		return p.HighWatermark == p.Replicas[0].LogEndOffset
	})
	// The coordinator that answered never replayed the record (its state
	// is what it answered); a new load replays it, committed after all.
	t.Logf("the coordinator that timed out answers start offset %d after healing", e.summary(co, k).StartOffset)
	scMust(t, e.c.StopBroker(co, StopClean))
	if s := e.summary(e.coordinator(k), k); s.StartOffset != 4 {
		t.Fatalf("new coordinator: start offset %d", s.StartOffset)
	}
}
