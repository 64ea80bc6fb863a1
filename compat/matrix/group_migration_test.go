package matrix

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The Java consumer (kafka-clients, group.protocol=consumer and classic)
// moving one group between protocols beside franz-go classic members:
// upgrade and downgrade, a rolling move classic → consumer → classic, and
// a static member restarting. One JVM at a time. The Java adapter must be
// built (bash scripts/matrix-clients.sh java); without it the test skips,
// unless MATRIX_REQUIRE_JAVA=1 (as CI sets) makes that a failure.

// migrationWorld is one cluster, its topic and what every member consumed.
type migrationWorld struct {
	t    *testing.T
	c    *server.Cluster
	prod *kgo.Client
	next int

	mu   sync.Mutex
	seen map[string]int
	// owners records, per partition, the members the coordinator had it
	// assigned to at one time; shared means two at once.
	shared []string
}

const migTopic, migGroup = "mig", "mig"

func newMigrationWorld(t *testing.T) *migrationWorld {
	if err := KafkaClients.Available(); err != nil {
		if os.Getenv("MATRIX_REQUIRE_JAVA") != "" {
			t.Fatalf("%v (MATRIX_REQUIRE_JAVA is set)", err)
		}
		t.Skipf("%v (MATRIX_REQUIRE_JAVA=1 makes this a failure)", err)
	}
	c := server.NewTestCluster(t, server.Config{GroupMinSessionTimeout: 100 * time.Millisecond,
		ConsumerGroupHeartbeatInterval: 100 * time.Millisecond})
	must(t, c.CreateTopic(migTopic, 6, 3, nil))
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic(migTopic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	must(t, err)
	t.Cleanup(prod.Close)
	w := &migrationWorld{t: t, c: c, prod: prod, seen: map[string]int{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go w.watchOwners(stop, done)
	t.Cleanup(func() { close(stop); <-done })
	return w
}

// watchOwners samples the coordinator's assignments: no partition may be
// assigned to two members at once.
func (w *migrationWorld) watchOwners(stop, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		gs, ok := w.c.Group(migGroup)
		if !ok {
			continue
		}
		owner := map[int32]string{}
		for _, m := range gs.Members {
			for _, p := range m.Assignment[migTopic] {
				if o, dup := owner[p]; dup {
					w.mu.Lock()
					w.shared = append(w.shared, fmt.Sprintf("partition %d: %s and %s (%s)", p, o, m.MemberID, gs.Type))
					w.mu.Unlock()
				}
				owner[p] = m.MemberID
			}
		}
	}
}

func (w *migrationWorld) produce(n int) {
	w.t.Helper()
	var rs []*kgo.Record
	for range n {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "v%d", w.next)})
		w.next++
	}
	must(w.t, w.prod.ProduceSync(context.Background(), rs...).FirstErr())
}

func (w *migrationWorld) add(v string) {
	w.mu.Lock()
	w.seen[v]++
	w.mu.Unlock()
}

// waitAll waits until every record produced was consumed.
func (w *migrationWorld) waitAll(what string) {
	w.t.Helper()
	waitFor(w.t, 30*time.Second, what, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.seen) == w.next
	})
}

func (w *migrationWorld) groupType() string {
	gs, _ := w.c.Group(migGroup)
	return gs.Type
}

// franz starts a franz-go classic member (cooperative-sticky).
func (w *migrationWorld) franz(name string) (stop func()) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.c.Bootstrap()...), kgo.ClientID(name), kgo.ConsumerGroup(migGroup),
		kgo.ConsumeTopics(migTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.SessionTimeout(6*time.Second),
		kgo.HeartbeatInterval(100*time.Millisecond), kgo.AutoCommitInterval(100*time.Millisecond))
	must(w.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			fs.EachRecord(func(r *kgo.Record) { w.add(string(r.Value)) })
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			cl.Close() // commits and leaves
		})
	}
	w.t.Cleanup(stop)
	return stop
}

// java starts a Java member with settings (group.protocol, ...).
func (w *migrationWorld) java(name string, settings map[string]string) (stop func()) {
	s, err := KafkaClients.JoinGroup(context.Background(), GroupConfig{Bootstrap: w.c.Bootstrap(), ClientID: name,
		Group: migGroup, Topic: migTopic, Settings: settings})
	must(w.t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			e, err := s.Next(context.Background())
			if err != nil {
				return
			}
			if e.Err != nil {
				w.t.Logf("%s: %v", name, e.Err)
				continue
			}
			w.add(e.Record.Value)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if err := s.Close(); err != nil {
				w.t.Errorf("%s: %v", name, err)
			}
			<-done
		})
	}
	w.t.Cleanup(stop)
	return stop
}

// check ends a story: nothing shared, every record consumed, and the
// committed offsets reach every partition's end.
func (w *migrationWorld) check() {
	w.t.Helper()
	w.mu.Lock()
	shared := slices.Clone(w.shared)
	w.mu.Unlock()
	if len(shared) > 0 {
		w.t.Errorf("partitions assigned twice at once: %v", shared)
	}
	var last []server.GroupOffsetState
	if !waitUntil(20*time.Second, func() bool {
		gs, _ := w.c.Group(migGroup)
		last = gs.Offsets
		total := int64(0)
		for _, o := range gs.Offsets {
			if o.Topic == migTopic && o.Offset != o.HighWatermark {
				return false
			}
			total += o.Offset
		}
		return total == int64(w.next) // every record's partition has a commit at its end
	}) {
		w.t.Errorf("committed offsets %+v, %d records produced", last, w.next)
	}
}

func TestJavaGroupMigration(t *testing.T) {
	t.Run("upgrade and downgrade", func(t *testing.T) {
		w := newMigrationWorld(t)
		w.produce(60)
		stopA := w.franz("franz-classic")
		w.waitAll("the classic member to consume")
		if typ := w.groupType(); typ != "classic" {
			t.Fatalf("group type %q", typ)
		}
		stopJ := w.java("java-consumer", map[string]string{"group.protocol": "consumer"})
		waitFor(t, 30*time.Second, "the group to upgrade and both members to own partitions", func() bool {
			gs, _ := w.c.Group(migGroup)
			owning := 0
			for _, m := range gs.Members {
				if len(m.Assignment[migTopic]) > 0 {
					owning++
				}
			}
			return gs.Type == "consumer" && owning == 2
		})
		w.produce(60)
		w.waitAll("records produced into the mixed group")
		stopJ()
		waitFor(t, 30*time.Second, "the group to downgrade", func() bool { return w.groupType() == "classic" })
		w.produce(60)
		w.waitAll("records produced after the downgrade")
		stopA()
		w.check()
	})

	t.Run("rolling classic to consumer and back", func(t *testing.T) {
		w := newMigrationWorld(t)
		stopA := w.franz("franz-classic")
		w.produce(30)
		stop := w.java("java-classic-1", map[string]string{"group.protocol": "classic"})
		w.waitAll("a Java classic member beside franz-go")
		stop()
		stop = w.java("java-consumer", map[string]string{"group.protocol": "consumer"})
		waitFor(t, 30*time.Second, "the upgrade", func() bool { return w.groupType() == "consumer" })
		w.produce(30)
		w.waitAll("the Java consumer-protocol member rolled in")
		stop()
		waitFor(t, 30*time.Second, "the downgrade", func() bool { return w.groupType() == "classic" })
		stop = w.java("java-classic-2", map[string]string{"group.protocol": "classic"})
		w.produce(30)
		w.waitAll("a Java classic member again")
		stop()
		stopA()
		w.check()
	})

	t.Run("static member restarts", func(t *testing.T) {
		w := newMigrationWorld(t)
		w.produce(30)
		static := map[string]string{"group.protocol": "consumer", "group.instance.id": "inst-1"}
		stop := w.java("java-static-1", static)
		w.waitAll("the static member to consume")
		before, _ := w.c.Group(migGroup)
		if len(before.Members) != 1 || len(before.Members[0].Assignment[migTopic]) != 6 {
			t.Fatalf("before: %+v", before.Members)
		}
		// A second member with the live instance id is refused.
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = 1, migGroup, "other-member-id-0000000000000000", 0, 30000
		inst := "inst-1"
		hb.InstanceID, hb.SubscribedTopicNames, hb.Topics = &inst, []string{migTopic}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if code := w.rawHeartbeat(hb); code != kerr.UnreleasedInstanceID.Code {
			t.Fatalf("a second member with a live instance id: %v", kerr.ErrorForCode(code))
		}
		stop() // the Java consumer leaves with epoch -2
		waitFor(t, 20*time.Second, "the static member to leave with epoch -2", func() bool {
			gs, _ := w.c.Group(migGroup)
			return len(gs.Members) == 1 && gs.Members[0].MemberEpoch != nil && *gs.Members[0].MemberEpoch == -2
		})
		w.produce(30)
		stop = w.java("java-static-2", static)
		w.waitAll("the restarted static member to consume")
		after, _ := w.c.Group(migGroup)
		if len(after.Members) != 1 || after.Members[0].MemberID == before.Members[0].MemberID ||
			!maps.EqualFunc(after.Members[0].Assignment, before.Members[0].Assignment, slices.Equal) || after.Generation != before.Generation {
			t.Fatalf("after the restart: epoch %d members %+v, before epoch %d %+v", after.Generation, after.Members, before.Generation, before.Members)
		}
		stop()
		w.check()
	})
}

// rawHeartbeat sends one ConsumerGroupHeartbeat to the group's coordinator.
func (w *migrationWorld) rawHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) int16 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.c.Bootstrap()...))
	must(w.t, err)
	defer cl.Close()
	resp, err := req.RequestWith(context.Background(), cl)
	must(w.t, err)
	return resp.ErrorCode
}
