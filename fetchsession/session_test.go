package fetchsession

import (
	"reflect"
	"testing"
)

// seqIDs returns a RandomID that hands out lo, lo+1, ... so ids are known.
func seqIDs() func(lo, hi int32) int32 {
	n := map[int32]int32{}
	return func(lo, hi int32) int32 {
		id := lo + n[lo]
		n[lo]++
		return id
	}
}

func newTestCache(slots int) *Cache {
	c := NewCache(slots)
	c.RandomID = seqIDs()
	return c
}

func named(topic string, p int32, offset int64) Fetch {
	return Fetch{Topic: topic, Partition: p, FetchOffset: offset, LogStartOffset: -1, MaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}
}

func withID(id byte, p int32, offset int64) Fetch {
	f := named("", p, offset)
	f.TopicID[15] = id
	return f
}

func res(hw, lso int64, records int) Result {
	return Result{HighWatermark: hw, LogStartOffset: lso, RecordsSize: records}
}

// names lists a context's partitions as topic-partition@offset.
func names(parts []Fetch) []string {
	var out []string
	for _, f := range parts {
		out = append(out, f.Topic+"-"+string(rune('0'+f.Partition))+"@"+itoa(f.FetchOffset))
	}
	return out
}

func itoa(n int64) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestNextEpoch(t *testing.T) {
	for _, c := range []struct{ in, want int32 }{{-1, -1}, {-7, -1}, {0, 1}, {1, 2}, {1<<31 - 2, 1<<31 - 1}, {1<<31 - 1, 1}} {
		if got := NextEpoch(c.in); got != c.want {
			t.Errorf("NextEpoch(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

// A session's life step by step: created by a full fetch at epoch 1,
// incremental fetches that add, change and forget partitions, answered
// with only what changed, and closed when emptied.
func TestSessionSteps(t *testing.T) {
	c := newTestCache(DefaultSlots)
	req := []Fetch{named("a", 0, 0), named("a", 1, 0), named("b", 0, 5)}
	ctx := c.NewContext(12, 0, 0, false, req, nil, 1000, nil)
	if ctx.Kind != Full || len(ctx.Partitions) != 3 {
		t.Fatalf("epoch 0: %+v", ctx)
	}
	id := c.CreateSession(false, false, ctx.Partitions, []Result{res(10, 0, 100), res(0, 0, 0), res(5, 5, 0)}, 1000)
	if id != 1 { // shard 0's first id
		t.Fatalf("session id %d, want 1", id)
	}
	s := c.Get(id)
	if s.Epoch() != 1 || c.Len() != 1 {
		t.Fatalf("epoch %d, %d sessions", s.Epoch(), c.Len())
	}

	// Epoch 1: a-0 moved to offset 10 (it returned records); nothing
	// else is listed. Every partition of the session is read, in order.
	ctx = c.NewContext(12, id, 1, false, []Fetch{named("a", 0, 10)}, nil, 2000, nil)
	if ctx.Kind != Incremental || s.Epoch() != 2 {
		t.Fatalf("epoch 1: kind %d, session epoch %d", ctx.Kind, s.Epoch())
	}
	if got, want := names(ctx.Partitions), []string{"a-0@10", "a-1@0", "b-0@5"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	// Nothing new: a-0 HW 10 as cached, a-1 0, b-0 5 with log start 5.
	must := make([]bool, 3)
	if code := s.Respond(1, ctx.Partitions, []Result{res(10, 0, 0), res(0, 0, 0), res(5, 5, 0)}, must, true); code != 0 {
		t.Fatal(code)
	}
	if want := []bool{false, false, false}; !reflect.DeepEqual(must, want) {
		t.Fatalf("answered %v, want none", must)
	}

	// Epoch 2: records on a-1 (HW to 3), b-0's log start moves to 6.
	ctx = c.NewContext(12, id, 2, false, nil, nil, 3000, ctx.Partitions)
	if err := s.Respond(2, ctx.Partitions, []Result{res(10, 0, 0), res(3, 0, 70), res(5, 6, 0)}, must, true); err != 0 {
		t.Fatal(err)
	}
	if want := []bool{false, true, true}; !reflect.DeepEqual(must, want) {
		t.Fatalf("answered %v, want %v", must, want)
	}
	// a-1 returned records: it moves to the end of the order.
	if got, want := s.Partitions(), []Key{{Topic: "a"}, {Topic: "b"}, {Topic: "a", Partition: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}

	// Epoch 3: the client moved a-1 to 3, forgets b-0 and adds c-0.
	ctx = c.NewContext(12, id, 3, false, []Fetch{named("a", 1, 3), named("c", 0, 0)}, []Fetch{named("b", 0, 0)}, 4000, ctx.Partitions)
	if got, want := names(ctx.Partitions), []string{"a-0@10", "a-1@3", "c-0@0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	must = make([]bool, 3)
	// c-0 is new (never answered): sent even with HW 0? Its cached HW is
	// -1, so yes. a-1 gets an error: sent, and sent again once it clears.
	results := []Result{res(10, 0, 0), {HighWatermark: -1, LogStartOffset: -1, ErrorCode: 6}, res(0, 0, 0)}
	if err := s.Respond(3, ctx.Partitions, results, must, true); err != 0 {
		t.Fatal(err)
	}
	if want := []bool{false, true, true}; !reflect.DeepEqual(must, want) {
		t.Fatalf("answered %v, want %v", must, want)
	}
	ctx = c.NewContext(12, id, 4, false, nil, nil, 5000, ctx.Partitions)
	if err := s.Respond(4, ctx.Partitions, []Result{res(10, 0, 0), res(3, 0, 0), res(0, 0, 0)}, must, true); err != 0 {
		t.Fatal(err)
	}
	if want := []bool{false, true, false}; !reflect.DeepEqual(must, want) {
		t.Fatalf("after the error cleared: answered %v, want %v", must, want)
	}

	// Wrong epoch, no such session, topic ids on a name session.
	if ctx := c.NewContext(12, id, 4, false, nil, nil, 6000, nil); ctx.Kind != SessionError || ctx.ErrorCode != 71 {
		t.Fatalf("stale epoch: %+v", ctx)
	}
	if ctx := c.NewContext(12, id+1, 5, false, nil, nil, 6000, nil); ctx.Kind != SessionError || ctx.ErrorCode != 70 {
		t.Fatalf("unknown session: %+v", ctx)
	}
	if ctx := c.NewContext(13, id, 5, false, nil, nil, 6000, nil); ctx.Kind != SessionError || ctx.ErrorCode != 106 {
		t.Fatalf("v13 on a name session: %+v", ctx)
	}
	// The failed requests did not move the epoch.
	if s.Epoch() != 5 {
		t.Fatalf("epoch %d, want 5", s.Epoch())
	}

	// Forgetting every partition closes the session: sessionless.
	forget := []Fetch{named("a", 0, 0), named("a", 1, 0), named("c", 0, 0)}
	if ctx := c.NewContext(12, id, 5, false, nil, forget, 7000, nil); ctx.Kind != Sessionless || len(ctx.Partitions) != 0 {
		t.Fatalf("emptied: %+v", ctx)
	}
	if c.Len() != 0 || c.Get(id) != nil {
		t.Fatalf("%d sessions left", c.Len())
	}
}

// Full fetches: epoch 0 closes the named session and may open a new one,
// epoch -1 closes it and opens none; session 0 with -1 is a plain
// sessionless fetch.
func TestFullFetchClosesSession(t *testing.T) {
	c := newTestCache(DefaultSlots)
	req := []Fetch{withID(1, 0, 0)}
	id := c.CreateSession(false, true, req, []Result{res(0, 0, 0)}, 0)
	if ctx := c.NewContext(17, id, 0, false, req, nil, 1, nil); ctx.Kind != Full {
		t.Fatalf("epoch 0: %+v", ctx)
	}
	if c.Get(id) != nil {
		t.Fatal("the full fetch did not close the session it named")
	}
	id2 := c.CreateSession(false, true, req, []Result{res(0, 0, 0)}, 1)
	if id2 == id || id2 == 0 {
		t.Fatalf("second session id %d (first %d)", id2, id)
	}
	if ctx := c.NewContext(17, id2, -1, false, req, nil, 2, nil); ctx.Kind != Sessionless || c.Len() != 0 {
		t.Fatalf("epoch -1: %+v, %d sessions", ctx, c.Len())
	}
	if ctx := c.NewContext(17, 0, -1, false, req, nil, 2, nil); ctx.Kind != Sessionless || len(ctx.Partitions) != 1 {
		t.Fatalf("0/-1: %+v", ctx)
	}
	// An id beyond every shard's range: Kafka fails the request.
	if ctx := c.NewContext(17, 1<<31-1, 3, false, req, nil, 2, nil); ctx.Kind != SessionError || ctx.ErrorCode != -1 {
		t.Fatalf("id past the shards: %+v", ctx)
	}
	if ctx := c.NewContext(12, 5, 3, false, nil, nil, 2, nil); ctx.Kind != SessionError || ctx.ErrorCode != 70 {
		t.Fatalf("unknown id: %+v", ctx)
	}
	// A session with topic ids refuses a v12 incremental request.
	id3 := c.CreateSession(false, true, req, []Result{res(0, 0, 0)}, 3)
	if ctx := c.NewContext(12, id3, 1, false, nil, nil, 4, nil); ctx.ErrorCode != 106 {
		t.Fatalf("v12 on an id session: %+v", ctx)
	}
}

// Sessions go to the shards round robin, each with its own id range.
func TestShardsAndIDs(t *testing.T) {
	c := newTestCache(16) // 2 per shard
	req := []Fetch{named("a", 0, 0)}
	var got []int32
	for range 9 {
		got = append(got, c.CreateSession(false, false, req, []Result{res(0, 0, 0)}, 0))
	}
	want := []int32{1, idRange, 2 * idRange, 3 * idRange, 4 * idRange, 5 * idRange, 6 * idRange, 7 * idRange, 2}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	for _, id := range got {
		if c.Get(id) == nil {
			t.Fatalf("session %d not found", id)
		}
	}
	// Fewer than 8 slots: no shard has room, no session is ever made.
	small := newTestCache(7)
	for range 8 {
		if id := small.CreateSession(true, false, req, []Result{res(0, 0, 0)}, 0); id != 0 {
			t.Fatalf("7 slots made session %d", id)
		}
	}
}

// Eviction by Kafka's rules, in one shard of one slot (8 slots).
func TestEviction(t *testing.T) {
	one := []Fetch{named("a", 0, 0)}
	two := []Fetch{named("a", 0, 0), named("a", 1, 0)}
	r1, r2 := []Result{res(0, 0, 0)}, []Result{res(0, 0, 0), res(0, 0, 0)}
	// create makes a session in shard 0, which has the only slot.
	create := func(c *Cache, priv bool, parts []Fetch, r []Result, now int64) int32 {
		c.next.Store(0)
		return c.CreateSession(priv, false, parts, r, now)
	}

	t.Run("young consumer sessions are kept", func(t *testing.T) {
		c := newTestCache(8)
		a := create(c, false, one, r1, 0)
		// Same size, not privileged: never evicts.
		if id := create(c, false, one, r1, 1000); id != 0 {
			t.Fatalf("evicted for a same-size session: %d", id)
		}
		// Bigger, but the old one is younger than EvictionMs: only a
		// privileged session may evict it.
		if id := create(c, false, two, r2, 2000); id != 0 {
			t.Fatalf("a young session was evicted by a consumer: %d", id)
		}
		b := create(c, true, one, r1, 3000)
		if b == 0 || c.Get(a) != nil {
			t.Fatalf("a follower did not evict the consumer's session: %d", b)
		}
		// A young privileged session is not evictable by anyone.
		if id := create(c, true, two, r2, 4000); id != 0 {
			t.Fatalf("a young follower session was evicted: %d", id)
		}
	})

	t.Run("stale sessions go first", func(t *testing.T) {
		c := newTestCache(8)
		a := create(c, true, two, r2, 0)
		// Unused for more than EvictionMs: any new session takes the slot.
		if id := create(c, false, one, r1, EvictionMs); id != 0 {
			t.Fatalf("evicted at exactly EvictionMs: %d", id)
		}
		b := create(c, false, one, r1, EvictionMs+1)
		if b == 0 || c.Get(a) != nil {
			t.Fatal("the stale session stayed")
		}
	})

	t.Run("old sessions by size", func(t *testing.T) {
		c := newTestCache(8)
		a := create(c, false, one, r1, 0)
		// Used at EvictionMs+1 (older than EvictionMs by then): evictable by all.
		if ctx := c.NewContext(12, a, 1, false, nil, nil, EvictionMs+1, nil); ctx.Kind != Incremental {
			t.Fatalf("%+v", ctx)
		}
		if id := create(c, false, one, r1, EvictionMs+2); id != 0 {
			t.Fatal("a same-size session evicted an old one")
		}
		b := create(c, false, two, r2, EvictionMs+3)
		if b == 0 || c.Get(a) != nil {
			t.Fatal("a bigger session did not evict the old smaller one")
		}
	})

	t.Run("eviction sets are decided at the last use", func(t *testing.T) {
		c := newTestCache(8)
		a := create(c, false, one, r1, 0)
		// Not touched since creation: at creation it was young, so a
		// consumer cannot evict it even long after (unless it is stale).
		if id := create(c, false, two, r2, EvictionMs); id != 0 {
			t.Fatal("evicted a session filed as young")
		}
		if c.Get(a) == nil {
			t.Fatal("session gone")
		}
	})
}

// A duplicate request: the session moved on between the request and its
// answer, which then carries INVALID_FETCH_SESSION_EPOCH.
func TestRespondAfterEpochMoved(t *testing.T) {
	c := newTestCache(DefaultSlots)
	req := []Fetch{named("a", 0, 0)}
	id := c.CreateSession(false, false, req, []Result{res(0, 0, 0)}, 0)
	first := c.NewContext(12, id, 1, false, nil, nil, 1, nil)
	second := c.NewContext(12, id, 2, false, nil, nil, 2, nil)
	must := []bool{true}
	if code := first.Session.Respond(first.ReqEpoch, first.Partitions, []Result{res(1, 0, 10)}, must, true); code != 71 || must[0] {
		t.Fatalf("first answer: %d %v", code, must)
	}
	if code := second.Session.Respond(second.ReqEpoch, second.Partitions, []Result{res(1, 0, 10)}, must, true); code != 0 || !must[0] {
		t.Fatalf("second answer: %d %v", code, must)
	}
}

// Respond without update (the quota's sizing pass) changes nothing.
func TestRespondWithoutUpdate(t *testing.T) {
	c := newTestCache(DefaultSlots)
	id := c.CreateSession(false, false, []Fetch{named("a", 0, 0), named("a", 1, 0)}, []Result{res(0, 0, 0), res(0, 0, 0)}, 0)
	ctx := c.NewContext(12, id, 1, false, nil, nil, 1, nil)
	must := make([]bool, 2)
	results := []Result{res(5, 0, 50), res(0, 0, 0)}
	for range 2 {
		ctx.Session.Respond(1, ctx.Partitions, results, must, false)
		if want := []bool{true, false}; !reflect.DeepEqual(must, want) {
			t.Fatalf("answered %v, want %v", must, want)
		}
	}
	if got := ctx.Session.Partitions(); got[0].Partition != 0 {
		t.Fatalf("order changed without update: %v", got)
	}
}
