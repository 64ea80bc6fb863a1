package server

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A partition reassigned away from the broker that holds a session on it:
// the next incremental answer carries NOT_LEADER_OR_FOLLOWER with the new
// leader, on every fetch until the client forgets the partition.
func TestFetchSessionPartitionMovesAway(t *testing.T) {
	sc := newSessionCluster(t, Config{Brokers: 4}, 17)
	sc.produce(0, "a")
	full := sc.fetch(1, sc.request(0, 0, []part{{0, 1}, {1, 0}}, nil))
	sc.want("full", full, nil, true, answeredPart{0, 0, 1, 0}, answeredPart{1, 0, 0, 0})
	id := full.SessionID
	if err := sc.c.ReassignPartition("fs", 0, []int32{4, 2, 3}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "fs-0 to leave broker 1", func() bool {
		ps, _ := sc.c.Partition("fs", 0)
		return ps.Leader == 4 && len(ps.Replicas) == 3 && len(sc.c.Reassignments()) == 0
	})
	resp := sc.fetch(1, sc.request(id, 1, nil, nil))
	sc.want("moved", resp, nil, true, answeredPart{0, 0, -1, kerr.NotLeaderForPartition.Code})
	if l := resp.Topics[0].Partitions[0].CurrentLeader; l.LeaderID != 4 {
		t.Fatalf("current leader %+v", l)
	}
	sc.want("still moved", sc.fetch(1, sc.request(id, 2, nil, nil)), nil, true, answeredPart{0, 0, -1, kerr.NotLeaderForPartition.Code})
	// The client forgets it; the session goes on with fs-1.
	sc.want("forgotten", sc.fetch(1, sc.request(id, 3, nil, []int32{0})), nil, true)
	sc.produce(1, "b")
	sc.want("fs-1 goes on", sc.fetch(1, sc.request(id, 4, nil, nil)), nil, true, answeredPart{1, 1, 1, 0})
}

// TestFetchSessionFranzGoFailover consumes through franz-go, which uses
// fetch sessions by default, while leaders fail over (a leader's broker
// stops) and a partition moves to another broker: every record is read
// exactly once.
func TestFetchSessionFranzGoFailover(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 4})
	if err := c.CreateTopic("fsf", 3, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	prod := newClient(t, c, kgo.DefaultProduceTopic("fsf"), kgo.RequiredAcks(kgo.AllISRAcks()))
	cons := newClient(t, c, kgo.ConsumeTopics("fsf"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond))

	var mu sync.Mutex
	seen := map[string]int{}
	stop := make(chan struct{})
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			fs := cons.PollFetches(ctx)
			mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
			mu.Unlock()
		}
	}()
	next := 0
	produce := func(n int) {
		for range n {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "r-%04d", next)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			next++
		}
		waitFor(t, 30*time.Second, fmt.Sprintf("%d records consumed", next), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) == next
		})
	}
	sessions := func() int {
		n := 0
		for _, b := range c.brokers {
			n += b.sessions.Len()
		}
		return n
	}

	produce(100)
	if sessions() == 0 {
		t.Fatal("franz-go opened no fetch session")
	}
	ps, _ := c.Partition("fsf", 0)
	if err := c.StopBroker(ps.Leader, StopClean); err != nil {
		t.Fatal(err)
	}
	produce(100)
	if err := c.StartBroker(ps.Leader); err != nil {
		t.Fatal(err)
	}
	produce(50)
	ps1, _ := c.Partition("fsf", 1)
	target := slices.DeleteFunc([]int32{1, 2, 3, 4}, func(id int32) bool { return id == ps1.Leader })
	if err := c.ReassignPartition("fsf", 1, target); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "fsf-1 to move", func() bool {
		p, _ := c.Partition("fsf", 1)
		return p.Leader != ps1.Leader && len(c.Reassignments()) == 0 && !slices.Contains(replicaIDs(p), ps1.Leader)
	})
	produce(100)
	if sessions() == 0 {
		t.Fatal("no fetch session after the failovers")
	}
	close(stop)
	cons.Close() // ends the poll
	<-consumed
	mu.Lock()
	defer mu.Unlock()
	for v, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", v, n)
		}
	}
	if len(seen) != next {
		t.Fatalf("read %d distinct records of %d", len(seen), next)
	}
}
