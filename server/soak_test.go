package server

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The soak test is not part of the default suite: run it with a duration,
//
//	go test ./server -run TestSoak -soak 10m -timeout 30m -v
//
// and optionally -soak-seed N to replay a run's pauses.
var (
	soakFor  = flag.Duration("soak", 0, "run TestSoak for this long (0 skips it)")
	soakSeed = flag.Uint64("soak-seed", 0, "TestSoak's random seed (0: from the clock)")
)

// TestSoak runs idempotent acks=all producers, a two-member consumer group
// and random follower pauses (some past replica.lag.time.max.ms, 2 s here,
// on the data topic and on __consumer_offsets) for -soak, checking the
// replication invariants all along. At the end every follower is resumed
// and it checks that every ISR is whole again, every replica has the
// leader's LEO and HW, every acknowledged record is in the log exactly
// once, the group is Stable with both members and its commits reach every
// partition's end.
func TestSoak(t *testing.T) {
	if *soakFor == 0 {
		t.Skip("run with -soak DURATION, e.g. go test ./server -run TestSoak -soak 10m -timeout 30m -v")
	}
	seed := *soakSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("soak: %v, seed %d (replay with -soak-seed %d)", *soakFor, seed, seed)
	const (
		topic      = "soak"
		partitions = 6
		lag        = 2 * time.Second
	)
	c := NewTestCluster(t, Config{MinInsyncReplicas: 2, ReplicaLagTimeMax: lag, GroupMinSessionTimeout: 100 * time.Millisecond})
	if err := c.CreateTopic(topic, partitions, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	// Producers: every acknowledged value is remembered.
	var ackMu sync.Mutex
	acked := map[string]bool{}
	var prodWG sync.WaitGroup
	for i := range 4 {
		cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
		prodWG.Add(1)
		go func() {
			defer prodWG.Done()
			for n := 0; ctx.Err() == nil; {
				var rs []*kgo.Record
				for range 50 {
					v := "p" + strconv.Itoa(i) + "-" + strconv.Itoa(n)
					rs = append(rs, &kgo.Record{Key: []byte(v), Value: []byte(v)})
					n++
				}
				for _, r := range cl.ProduceSync(ctx, rs...) {
					if r.Err == nil {
						ackMu.Lock()
						acked[string(r.Record.Value)] = true
						ackMu.Unlock()
					}
				}
			}
		}()
	}

	l := newLedger()
	startGroupConsumer(t, c, "soak-g", topic, "a", l)
	startGroupConsumer(t, c, "soak-g", topic, "b", l)

	// Invariants, checked on every snapshot: the leader's HW never passes an
	// ISR member's LEO nor goes back, no follower's HW passes the leader's.
	var shrinks, expands, checks atomic.Int64
	var invWG sync.WaitGroup
	invWG.Add(1)
	go func() {
		defer invWG.Done()
		lastHW := map[string]int64{}
		lastISR := map[string]int{}
		for ctx.Err() == nil {
			for _, ts := range c.State().Topics {
				for _, ps := range ts.Partitions {
					key := ts.Name + "/" + strconv.Itoa(int(ps.Partition))
					if ps.HighWatermark < lastHW[key] {
						t.Errorf("%s: HW went back from %d to %d", key, lastHW[key], ps.HighWatermark)
					}
					lastHW[key] = ps.HighWatermark
					for _, r := range ps.Replicas {
						if r.InSync && r.LogEndOffset < ps.HighWatermark {
							t.Errorf("%s: HW %d past ISR member %d's LEO %d", key, ps.HighWatermark, r.Broker, r.LogEndOffset)
						}
						if r.HighWatermark > ps.HighWatermark {
							t.Errorf("%s: replica %d's HW %d past the leader's %d", key, r.Broker, r.HighWatermark, ps.HighWatermark)
						}
					}
					if n, ok := lastISR[key]; ok && len(ps.ISR) < n {
						shrinks.Add(1)
					} else if ok && len(ps.ISR) > n {
						expands.Add(1)
					}
					lastISR[key] = len(ps.ISR)
				}
			}
			checks.Add(1)
			time.Sleep(50 * time.Millisecond) // sampling interval, not synchronisation
		}
	}()

	// Pauses: every 200-800 ms a random follower of a random partition of
	// the data topic or __consumer_offsets stops fetching for 0.2-5 s.
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	type paused struct {
		topic     string
		partition int32
		broker    int32
		until     time.Time
	}
	var pausedNow []paused
	var pauses, longPauses int
	end := time.Now().Add(*soakFor)
	nextReport := time.Now().Add(time.Minute)
	for now := time.Now(); now.Before(end); now = time.Now() {
		keep := pausedNow[:0]
		for _, p := range pausedNow {
			if now.After(p.until) {
				if err := c.ResumeReplica(p.topic, p.partition, p.broker); err != nil {
					t.Fatal(err)
				}
				continue
			}
			keep = append(keep, p)
		}
		pausedNow = keep

		name, n := topic, int32(partitions)
		if c.topic(offsetsTopic) != nil && rng.IntN(3) == 0 {
			name, n = offsetsTopic, int32(c.cfg.OffsetsTopicPartitions)
		}
		index := rng.Int32N(n)
		if ps, ok := c.Partition(name, index); ok && ps.Leader > 0 {
			var followers []int32
			for _, r := range ps.Replicas {
				if r.Broker != ps.Leader && !r.Paused {
					followers = append(followers, r.Broker)
				}
			}
			if len(followers) > 0 {
				b := followers[rng.IntN(len(followers))]
				d := 200*time.Millisecond + time.Duration(rng.Int64N(int64(4800*time.Millisecond)))
				if err := c.PauseReplica(name, index, b); err != nil {
					t.Fatal(err)
				}
				pausedNow = append(pausedNow, paused{name, index, b, now.Add(d)})
				pauses++
				if d > lag {
					longPauses++
				}
			}
		}
		if now.After(nextReport) {
			ackMu.Lock()
			n := len(acked)
			ackMu.Unlock()
			t.Logf("soak: %v left; %d acknowledged, %d consumed; %d pauses (%d past the lag time); %d ISR shrinks and %d expansions seen",
				time.Until(end).Round(time.Second), n, l.distinct(), pauses, longPauses, shrinks.Load(), expands.Load())
			nextReport = now.Add(time.Minute)
		}
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond) // the schedule's pace, not synchronisation
	}

	// Heal, stop producing, and check the end state.
	for _, p := range pausedNow {
		if err := c.ResumeReplica(p.topic, p.partition, p.broker); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	prodWG.Wait()
	invWG.Wait()
	waitFor(t, 30*time.Second, "every ISR whole and every replica at the leader's LEO and HW", func() bool {
		for _, ts := range c.State().Topics {
			for _, ps := range ts.Partitions {
				if len(ps.ISR) != 3 {
					return false
				}
				for _, r := range ps.Replicas {
					if r.LogEndOffset != leo(ps) || r.HighWatermark != ps.HighWatermark || ps.HighWatermark != leo(ps) {
						return false
					}
				}
			}
		}
		return true
	})
	ackMu.Lock()
	defer ackMu.Unlock()
	waitFor(t, 60*time.Second, fmt.Sprintf("the group to consume all %d acknowledged records", len(acked)), func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for v := range acked {
			if l.seen[v] == 0 {
				return false
			}
		}
		return true
	})
	waitGroup(t, c, "soak-g", "Stable with both members", func(gs GroupState) bool { return gs.State == "Stable" && len(gs.Members) == 2 })
	waitGroup(t, c, "soak-g", "commits at every partition's end", committedThrough(topic, partitions))

	// The log holds every acknowledged value exactly once: idempotence
	// held through every retry the pauses caused.
	inLog := map[string]int{}
	cons := newClient(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var total int64
	for _, ps := range c.State().Topics {
		if ps.Name == topic {
			for _, p := range ps.Partitions {
				total += p.HighWatermark
			}
		}
	}
	rctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for n := int64(0); n < total; {
		fs := cons.PollFetches(rctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("reading the log back: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			inLog[string(r.Value)]++
			n++
		})
	}
	for v := range acked {
		if inLog[v] != 1 {
			t.Errorf("acknowledged %s is in the log %d times", v, inLog[v])
		}
	}
	delivered := 0
	l.mu.Lock()
	for _, k := range l.seen {
		delivered += k
	}
	l.mu.Unlock()
	t.Logf("soak: done after %v: %d acknowledged, %d in the log, %d consumed (%d deliveries); %d pauses (%d past the lag time); %d ISR shrinks and %d expansions seen over %d snapshots",
		*soakFor, len(acked), total, l.distinct(), delivered, pauses, longPauses, shrinks.Load(), expands.Load(), checks.Load())
}
