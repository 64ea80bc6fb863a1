package matrix

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestJavaConsumerFetchSessions reads one partition with the Java consumer
// (kafka-clients, which uses fetch sessions by default) while its leader's
// broker stops and comes back and the partition then moves to another
// broker: the consumer holds sessions on the brokers it fetches from, meets
// FENCED_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER inside them, recovers, and
// reads every record exactly once. It needs the Java adapter
// (bash scripts/matrix-clients.sh java); absent, it is skipped unless
// MATRIX_CLIENTS is set, as in CI, where it must run.
func TestJavaConsumerFetchSessions(t *testing.T) {
	if err := KafkaClients.Available(); err != nil {
		if os.Getenv("MATRIX_CLIENTS") == "" {
			t.Skipf("%v (with MATRIX_CLIENTS set this fails)", err)
		}
		t.Fatal(err)
	}
	c := server.NewTestCluster(t, server.Config{Brokers: 4})
	must(t, c.CreateTopic("jfs", 1, 3, map[string]string{"min.insync.replicas": "2"}))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("jfs"), kgo.RequiredAcks(kgo.AllISRAcks()))
	must(t, err)
	defer prod.Close()
	s, err := KafkaClients.Consume(ctx, ConsumerConfig{Bootstrap: c.Bootstrap(), ClientID: "java-fetch-sessions", Topic: "jfs", Offset: 0})
	must(t, err)
	defer s.Close()

	var mu sync.Mutex
	seen := map[string]int{}
	var errs []error
	go func() {
		for {
			e, err := s.Next(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			if e.Err != nil {
				errs = append(errs, e.Err)
			} else {
				seen[e.Record.Value]++
			}
			mu.Unlock()
		}
	}()
	next := 0
	round := func(n int) {
		for range n {
			must(t, prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "r-%04d", next)}).FirstErr())
			next++
		}
		waitFor(t, 60*time.Second, fmt.Sprintf("%d records read", next), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) >= next
		})
	}
	sessions := func() int {
		n := 0
		for id := int32(1); id <= 4; id++ {
			n += c.FetchSessions(id)
		}
		return n
	}
	round(50)
	if sessions() == 0 {
		t.Fatal("the Java consumer opened no fetch session")
	}
	leader := partition(t, c, "jfs", 0).Leader
	must(t, c.StopBroker(leader, server.StopClean))
	round(50)
	must(t, c.StartBroker(leader))
	now := partition(t, c, "jfs", 0).Leader
	var target []int32
	for id := int32(1); id <= 4; id++ {
		if id != now {
			target = append(target, id)
		}
	}
	must(t, c.ReassignPartition("jfs", 0, target))
	waitFor(t, 30*time.Second, "jfs-0 to move", func() bool {
		ps := partition(t, c, "jfs", 0)
		return ps.Leader != now && ps.Leader >= 0 && len(c.Reassignments()) == 0
	})
	round(50)
	if sessions() == 0 {
		t.Fatal("no fetch session after the failovers")
	}
	mu.Lock()
	defer mu.Unlock()
	for v, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", v, n)
		}
	}
	if len(seen) != next {
		t.Errorf("read %d distinct records of %d", len(seen), next)
	}
	if len(errs) > 0 {
		t.Logf("errors the consumer surfaced: %v", errs)
	}
}
