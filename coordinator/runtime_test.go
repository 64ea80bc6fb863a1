package coordinator

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/coordinator/coordinatortest"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
)

// kv is a test state: the last value per key, pending transactional
// values per producer.
type kv struct {
	e       Epoch
	mu      sync.Mutex
	values  map[string]string
	pending map[int64]map[string]string
	replays []int64 // offsets replayed, -1 for live writes
	lives   []any   // what live writes handed WriteLive
}

func newKV(_ int32, e Epoch) *kv {
	return &kv{e: e, values: map[string]string{}, pending: map[int64]map[string]string{}}
}

func (s *kv) Replay(b Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replays = append(s.replays, b.Offset)
	if b.Live != nil {
		s.lives = append(s.lives, b.Live)
	}
	if b.Control {
		if b.Commit {
			for k, v := range s.pending[b.ProducerID] {
				s.values[k] = v
			}
		}
		delete(s.pending, b.ProducerID)
		return
	}
	for _, r := range b.Records {
		switch {
		case b.Transactional:
			if s.pending[b.ProducerID] == nil {
				s.pending[b.ProducerID] = map[string]string{}
			}
			s.pending[b.ProducerID][string(r.Key)] = string(r.Value)
		case r.Value == nil:
			delete(s.values, string(r.Key))
		default:
			s.values[string(r.Key)] = string(r.Value)
		}
	}
}

func (s *kv) get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[k]
	return v, ok
}

type rig struct {
	logs  []*coordinatortest.MemLog
	rt    *Runtime[*kv]
	clk   *clock.Clock
	loads []Epoch
	down  map[int32]bool
}

func newRig(t *testing.T, shards int) *rig {
	r := &rig{clk: clock.NewManual(time.Unix(1000, 0)), down: map[int32]bool{}}
	for i := range shards {
		r.logs = append(r.logs, &coordinatortest.MemLog{Part: int32(i), Lead: 1, Epoch: 0})
	}
	var mu sync.Mutex
	r.rt = New(Config[*kv]{
		Topic: "__test",
		Open: func() ([]PartitionLog, error) {
			out := make([]PartitionLog, len(r.logs))
			for i, l := range r.logs {
				out[i] = l
			}
			return out, nil
		},
		NewState: newKV,
		Loaded: func(_ *Shard[*kv], e Epoch, _ *kv) {
			mu.Lock()
			r.loads = append(r.loads, e)
			mu.Unlock()
		},
		Alive:        func(b int32) bool { return !r.down[b] },
		Clock:        r.clk,
		WriteTimeout: time.Second,
	})
	return r
}

func put(k, v string) Record { return Record{Key: []byte(k), Value: []byte(v)} }

func TestLoadAtEpoch(t *testing.T) {
	r := newRig(t, 1)
	sh := r.rt.Shard(0)
	st, e, code := sh.Acquire(1)
	if code != 0 || e != (Epoch{1, 0}) {
		t.Fatalf("Acquire: %v %v", e, code)
	}
	if code := sh.Write(e, NoProducer, []Record{put("a", "1"), put("b", "2")}); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if v, _ := st.get("a"); v != "1" || !slices.Equal(st.replays, []int64{-1}) {
		t.Fatalf("live replay: a=%q replays %v", v, st.replays)
	}
	// Acquiring again at the same epoch does not load again.
	if st2, _, _ := sh.Acquire(1); st2 != st || len(r.loads) != 1 {
		t.Fatalf("reloaded at the same epoch: loads %v", r.loads)
	}
	// Broker 2 is not the coordinator; after an election it is, and
	// loads the log at the new epoch.
	if _, _, code := sh.Acquire(2); code != kerr.NotCoordinator.Code {
		t.Fatalf("Acquire on a follower: %v", kerr.ErrorForCode(code))
	}
	r.logs[0].Elect(2)
	if sh.Current(e) {
		t.Fatal("the old load is still current after the election")
	}
	st2, e2, code := sh.Acquire(2)
	if code != 0 || e2 != (Epoch{2, 1}) || st2 == st {
		t.Fatalf("Acquire after election: %v %v", e2, code)
	}
	if v, _ := st2.get("b"); v != "2" || !slices.Equal(st2.replays, []int64{0}) {
		t.Fatalf("loaded: b=%q replays %v", v, st2.replays)
	}
	if !slices.Equal(r.loads, []Epoch{{1, 0}, {2, 1}}) {
		t.Fatalf("loads %v", r.loads)
	}
	// The old load cannot write any more.
	if code := sh.Write(e, NoProducer, []Record{put("c", "3")}); code != kerr.NotCoordinator.Code {
		t.Fatalf("stale write: %v", kerr.ErrorForCode(code))
	}
	if r.logs[0].Appends != 1 {
		t.Fatalf("the stale write was appended: %d appends", r.logs[0].Appends)
	}
	r.logs[0].Elect(-1)
	if _, _, code := sh.Acquire(2); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("Acquire without leader: %v", kerr.ErrorForCode(code))
	}
}

func TestFailedWriteLeavesNothingApplied(t *testing.T) {
	r := newRig(t, 1)
	sh := r.rt.Shard(0)
	st, e, _ := sh.Acquire(1)
	for _, c := range []struct{ append, want int16 }{
		{kerr.NotEnoughReplicas.Code, kerr.CoordinatorNotAvailable.Code},
		{kerr.RequestTimedOut.Code, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotLeaderForPartition.Code, kerr.NotCoordinator.Code},
		{kerr.InvalidProducerEpoch.Code, kerr.ProducerFenced.Code},
		{kerr.CorruptMessage.Code, kerr.CorruptMessage.Code},
	} {
		r.logs[0].Fail = c.append
		if code := sh.Write(e, NoProducer, []Record{put("a", "1")}); code != c.want {
			t.Errorf("append %v: answered %v, want %v", kerr.ErrorForCode(c.append), kerr.ErrorForCode(code), kerr.ErrorForCode(c.want))
		}
	}
	if _, ok := st.get("a"); ok || len(st.replays) != 0 {
		t.Fatalf("a failed write was applied: replays %v", st.replays)
	}
	// Leadership moving during the wait: committed in the log, but not
	// replayed into the old load; the next load reads it.
	r.logs[0].Fail = 0
	r.logs[0].MoveTo = &[2]int32{1, 5}
	if code := sh.Write(e, NoProducer, []Record{put("a", "1")}); code != kerr.NotCoordinator.Code {
		t.Fatalf("write across a move: %v", kerr.ErrorForCode(code))
	}
	if len(st.replays) != 0 {
		t.Fatalf("replayed into the old load: %v", st.replays)
	}
	st2, _, _ := sh.Acquire(1)
	if v, _ := st2.get("a"); v != "1" {
		t.Fatalf("the next load lacks the committed write: %q", v)
	}
}

func TestTransactionalWriteAndMarkers(t *testing.T) {
	r := newRig(t, 1)
	sh := r.rt.Shard(0)
	st, e, _ := sh.Acquire(1)
	if code := sh.Write(e, Producer{7, 0}, []Record{put("a", "1")}); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if code := sh.Write(e, Producer{8, 0}, []Record{put("b", "2")}); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if _, ok := st.get("a"); ok {
		t.Fatal("a pending offset is visible before its marker")
	}
	r.logs[0].Marker(7, true)
	sh.Marker(7, 0, true)
	r.logs[0].Marker(8, false)
	sh.Marker(8, 0, false)
	if v, _ := st.get("a"); v != "1" {
		t.Fatalf("committed: a=%q", v)
	}
	if _, ok := st.get("b"); ok {
		t.Fatal("aborted b is visible")
	}
	// A new load replays the same from the log, markers included.
	r.logs[0].Elect(1)
	st2, _, _ := sh.Acquire(1)
	if v, _ := st2.get("a"); v != "1" || len(st2.pending) != 0 {
		t.Fatalf("reloaded: a=%q pending %v", v, st2.pending)
	}
	if _, ok := st2.get("b"); ok {
		t.Fatal("reloaded: aborted b is visible")
	}
	// A marker before any load is kept for the load to read.
	r2 := newRig(t, 1)
	r2.rt.Shard(0).Marker(7, 0, true)
}

func TestStaleEpochTimers(t *testing.T) {
	r := newRig(t, 1)
	sh := r.rt.Shard(0)
	_, e, _ := sh.Acquire(1)
	var fired, stale []string
	sh.AfterFunc(e, time.Second, func() { fired = append(fired, "first") }, func() { stale = append(stale, "first") })
	sh.AfterFunc(e, 3*time.Second, func() { fired = append(fired, "second") }, func() { stale = append(stale, "second") })
	sh.AfterFunc(e, 4*time.Second, func() { fired = append(fired, "third") }, nil)
	r.clk.Advance(time.Second)
	r.logs[0].Elect(1) // a new epoch on the same broker
	_, e2, _ := sh.Acquire(1)
	sh.AfterFunc(e2, 2*time.Second, func() { fired = append(fired, "new") }, nil)
	r.clk.Advance(5 * time.Second)
	if !slices.Equal(fired, []string{"first", "new"}) || !slices.Equal(stale, []string{"second"}) {
		t.Fatalf("fired %v, stale %v", fired, stale)
	}
}

func TestShardsAndCoordinator(t *testing.T) {
	r := newRig(t, 3)
	ss, err := r.rt.Shards()
	if err != nil || len(ss) != 3 || ss[2].Index() != 2 {
		t.Fatalf("shards %v %v", ss, err)
	}
	for _, key := range []string{"", "group-a", "txn-1", "\U0001F600 emoji"} {
		sh, _ := r.rt.ShardFor(key)
		if int(sh.Index()) != Partition(key, 3) {
			t.Errorf("%q: shard %d, want %d", key, sh.Index(), Partition(key, 3))
		}
	}
	if b, code := r.rt.Coordinator("group-a"); b != 1 || code != 0 {
		t.Fatalf("Coordinator: %d %v", b, code)
	}
	r.down[1] = true
	if b, code := r.rt.Coordinator("group-a"); b != -1 || code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("Coordinator of a stopped broker: %d %v", b, code)
	}
	if r.rt.Shard(3) != nil || r.rt.Shard(-1) != nil {
		t.Fatal("a shard past the topic's partitions")
	}
	if _, _, ok := r.rt.Shard(0).Loaded(); ok {
		t.Fatal("loaded before any Acquire")
	}

	bad := New(Config[*kv]{Topic: "__bad", Open: func() ([]PartitionLog, error) { return nil, errors.New("no brokers") }})
	if _, err := bad.ShardFor("x"); err == nil || bad.Shard(0) != nil {
		t.Fatal("a topic that cannot be created has shards")
	}
	if b, code := bad.Coordinator("x"); b != -1 || code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("Coordinator without topic: %d %v", b, code)
	}
	empty := New(Config[*kv]{Topic: "__empty", Open: func() ([]PartitionLog, error) { return nil, nil }})
	if _, err := empty.Shards(); err == nil || !strings.Contains(err.Error(), "no partitions") {
		t.Fatalf("empty topic: %v", err)
	}
}

// Java's String.hashCode of known strings, and Kafka's abs for the shard.
func TestJavaHash(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int32
	}{
		{"", 0}, {"a", 97}, {"hello", 99162322}, {"polygenelubricants", math32Min}, {"\U0001F600", 31*0xD83D + 0xDE00},
	} {
		if got := JavaHash(c.s); got != c.want {
			t.Errorf("JavaHash(%q) = %d, want %d", c.s, got, c.want)
		}
	}
	if Partition("polygenelubricants", 7) != 0 {
		t.Error("MinInt32 hash is not shard 0")
	}
	if got := Partition("x", 50); got != int(JavaHash("x"))%50 {
		t.Errorf("Partition(x) = %d", got)
	}
}

const math32Min = -1 << 31

func TestLoadSkipsUnreadableBatches(t *testing.T) {
	r := newRig(t, 1)
	r.logs[0].Batches = append(r.logs[0].Batches, &replication.Batch{Raw: []byte{1, 2, 3}})
	sh := r.rt.Shard(0)
	st, _, code := sh.Acquire(1)
	if code != 0 || len(st.replays) != 0 {
		t.Fatalf("unreadable batch: %v replays %v", code, st.replays)
	}
}

// Concurrent writes of different keys on one shard all land, and loads
// racing them leave a consistent state (run with -race).
func TestConcurrentWritesAndLoads(t *testing.T) {
	r := newRig(t, 1)
	sh := r.rt.Shard(0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				_, e, code := sh.Acquire(1)
				if code != 0 {
					t.Error(kerr.ErrorForCode(code))
					return
				}
				k := string(rune('a' + i))
				if code := sh.Write(e, NoProducer, []Record{put(k, string(rune('0'+j%10)))}); code != 0 && code != kerr.NotCoordinator.Code {
					t.Error(kerr.ErrorForCode(code))
				}
			}
		}()
	}
	for range 10 {
		r.logs[0].Elect(1)
		sh.Acquire(1)
	}
	wg.Wait()
	r.logs[0].Elect(1)
	st, _, _ := sh.Acquire(1)
	for i := range 8 {
		if v, _ := st.get(string(rune('a' + i))); v != "9" {
			t.Errorf("key %c = %q after reload, want 9", 'a'+i, v)
		}
	}
}

func TestJavaHashMatchesStringHashCode(t *testing.T) {
	// Values printed by Java 17's String.hashCode.
	for s, want := range map[string]int32{"": 0, "a": 97, "group": 98629247, "my-consumer-group": 1513705513, "日本": 835047, "😀x": 54959989} {
		if got := JavaHash(s); got != want {
			t.Errorf("JavaHash(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestCoordinatorShardIsKafkas: a key's coordinator partition is Kafka's
// Utils.abs(hashCode) % partitions, which differs from masking the sign bit
// for every negative hash (Kafka 4.4 put "cg-txn" in partition 2 of 3; the
// mask gave 0). MinInt32 ("polygenelubricants") maps to 0.
func TestCoordinatorShardIsKafkas(t *testing.T) {
	for _, c := range []struct {
		key        string
		partitions int
		want       int
	}{{"cg-txn", 3, 2}, {"cg-txn", 50, 33}, {"cg-empty", 50, 10}, {"polygenelubricants", 50, 0}, {"group", 50, 47}} {
		if got := Partition(c.key, c.partitions); got != c.want {
			t.Errorf("Partition(%q, %d) = %d, want %d", c.key, c.partitions, got, c.want)
		}
	}
}

// WriteLive hands the writer's own form of the records to the live
// replay; a load replays the records alone.
func TestWriteLive(t *testing.T) {
	r := newRig(t, 1)
	sh := r.rt.Shard(0)
	st, e, _ := sh.Acquire(1)
	if code := sh.WriteLive(e, NoProducer, []Record{put("a", "1")}, "a=1"); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	if !slices.Equal(st.lives, []any{"a=1"}) {
		t.Fatalf("live replay got %v", st.lives)
	}
	r.logs[0].Elect(1)
	st2, _, _ := sh.Acquire(1)
	if len(st2.lives) != 0 {
		t.Fatalf("a load replayed %v", st2.lives)
	}
	if v, _ := st2.get("a"); v != "1" {
		t.Fatalf("loaded a=%q", v)
	}
}
