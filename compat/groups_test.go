package compat

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/fakekafka/fakekafka/server"
	kafkago "github.com/segmentio/kafka-go"
)

// Classic consumer groups through sarama's ConsumerGroup and kafka-go's
// Reader: three members share 12 partitions, a fourth joins, one leaves,
// every record is consumed once, and a member started afterwards resumes
// from the commits.

// groupCluster allows the short sessions these tests use.
func groupCluster(t *testing.T) *server.Cluster {
	c := server.NewTestCluster(t, server.Config{GroupMinSessionTimeout: 100 * time.Millisecond})
	if err := c.CreateTopic("work", 12, 3, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// deliveries counts the records each value was processed (and, for
// kafka-go, committed) in.
type deliveries struct {
	mu   sync.Mutex
	seen map[string]int
}

func (d *deliveries) add(v string) {
	d.mu.Lock()
	if d.seen == nil {
		d.seen = map[string]int{}
	}
	d.seen[v]++
	d.mu.Unlock()
}

func (d *deliveries) distinct() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}

func (d *deliveries) exactlyOnce(t *testing.T, n int) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	var bad []string
	for i := range n {
		if k := d.seen["v"+strconv.Itoa(i)]; k != 1 {
			bad = append(bad, fmt.Sprintf("v%d×%d", i, k))
		}
	}
	if len(d.seen) != n || len(bad) > 0 {
		t.Fatalf("%d distinct values, want %d; not exactly once: %v", len(d.seen), n, bad[:min(len(bad), 10)])
	}
}

func (d *deliveries) wait(t *testing.T, n int) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d records consumed", n), func() bool { return d.distinct() >= n })
}

// waitUntil polls cond for up to 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}

// waitGroup waits until the group is Stable with n members sharing all 12
// partitions of "work".
func waitGroup(t *testing.T, c *server.Cluster, group string, n int) server.GroupState {
	t.Helper()
	var gs server.GroupState
	waitUntil(t, fmt.Sprintf("%d members sharing 12 partitions", n), func() bool {
		var ok bool
		gs, ok = c.Group(group)
		if !ok || gs.State != "Stable" || len(gs.Members) != n {
			return false
		}
		total := 0
		for _, m := range gs.Members {
			k := len(m.Assignment["work"])
			if k < 12/n || k > (12+n-1)/n {
				return false
			}
			total += k
		}
		return total == 12
	})
	return gs
}

// waitCommitted waits until every partition of "work" has a commit at its
// high watermark.
func waitCommitted(t *testing.T, c *server.Cluster, group string) {
	t.Helper()
	waitUntil(t, "commits at the high watermark", func() bool {
		gs, ok := c.Group(group)
		if !ok || len(gs.Offsets) != 12 {
			return false
		}
		for _, o := range gs.Offsets {
			if o.Lag != 0 {
				return false
			}
		}
		return true
	})
}

type valueProducer struct {
	t    *testing.T
	p    sarama.SyncProducer
	next int
}

func newValueProducer(t *testing.T, c *server.Cluster) *valueProducer {
	p, err := sarama.NewSyncProducer(c.Bootstrap(), saramaConfig(sarama.WaitForAll))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &valueProducer{t: t, p: p}
}

func (vp *valueProducer) produce(n int) {
	vp.t.Helper()
	var msgs []*sarama.ProducerMessage
	for range n {
		v := "v" + strconv.Itoa(vp.next)
		vp.next++
		msgs = append(msgs, &sarama.ProducerMessage{Topic: "work", Key: sarama.StringEncoder(v), Value: sarama.StringEncoder(v)})
	}
	if err := vp.p.SendMessages(msgs); err != nil {
		vp.t.Fatal(err)
	}
}

// saramaMember is one sarama ConsumerGroup member. It marks each message
// once processed and commits in Cleanup, which sarama runs before it
// rejoins, so a partition that moves is picked up where it was left.
type saramaMember struct {
	group  sarama.ConsumerGroup
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

type saramaHandler struct{ d *deliveries }

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error { return nil }

func (saramaHandler) Cleanup(s sarama.ConsumerGroupSession) error {
	s.Commit()
	return nil
}

func (h saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.d.add(string(m.Value))
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

func startSaramaMember(t *testing.T, c *server.Cluster, name string, d *deliveries) *saramaMember {
	t.Helper()
	cfg := saramaConfig(sarama.WaitForAll)
	cfg.ClientID = name
	cfg.Consumer.Group.Session.Timeout = memberSession
	cfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Timeout = memberSession
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 50 * time.Millisecond
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Consumer.Return.Errors = false
	g, err := sarama.NewConsumerGroup(c.Bootstrap(), "g", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &saramaMember{group: g, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{"work"}, saramaHandler{d}); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				t.Logf("%s: %v", name, err)
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *saramaMember) stop() {
	m.once.Do(func() {
		m.cancel()
		<-m.done
		m.group.Close() // leaves the group
	})
}

// TestSaramaConsumerGroup: sarama members share 12 partitions (range
// balancer), across a member joining and one leaving every record is
// consumed exactly once, and a new member resumes from the commits.
func TestSaramaConsumerGroup(t *testing.T) {
	runGroupStory(t, func(t *testing.T, c *server.Cluster, name string, d *deliveries) stopper {
		return startSaramaMember(t, c, name, d)
	})
}

// kafkaGoMember is one kafka-go Reader in a group. It counts a message
// only once its synchronous commit succeeded: a commit refused during a
// rebalance means the message is delivered again, as at-least-once allows.
type kafkaGoMember struct {
	r      *kafkago.Reader
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func startKafkaGoMember(t *testing.T, c *server.Cluster, name string, d *deliveries) *kafkaGoMember {
	t.Helper()
	r := kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: c.Bootstrap(), GroupID: "g", Topic: "work",
		Dialer:            &kafkago.Dialer{ClientID: name, Timeout: 5 * time.Second},
		MaxWait:           100 * time.Millisecond,
		HeartbeatInterval: 100 * time.Millisecond,
		SessionTimeout:    memberSession,
		RebalanceTimeout:  memberSession,
		JoinGroupBackoff:  50 * time.Millisecond,
		StartOffset:       kafkago.FirstOffset,
		CommitInterval:    0, // synchronous commits
	})
	ctx, cancel := context.WithCancel(context.Background())
	m := &kafkaGoMember{r: r, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			msg, err := r.FetchMessage(ctx)
			if err != nil {
				return
			}
			if err := r.CommitMessages(ctx, msg); err != nil {
				t.Logf("%s: commit of %s/%d@%d: %v", name, msg.Topic, msg.Partition, msg.Offset, err)
				continue
			}
			d.add(string(msg.Value))
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *kafkaGoMember) stop() {
	m.once.Do(func() {
		m.cancel()
		<-m.done
		m.r.Close() // leaves the group
	})
}

// TestKafkaGoReaderGroup: kafka-go Readers with a GroupID share 12
// partitions, across a member joining and one leaving every record is
// committed exactly once, and a new Reader resumes from the commits.
func TestKafkaGoReaderGroup(t *testing.T) {
	runGroupStory(t, func(t *testing.T, c *server.Cluster, name string, d *deliveries) stopper {
		return startKafkaGoMember(t, c, name, d)
	})
}

// memberSession is the members' session and rebalance timeouts. Every
// member leaves with LeaveGroup, so nothing waits them out; they are long
// so that a member starved for a few seconds on a loaded machine is not
// expelled, which would legitimately deliver its uncommitted records
// twice. A local CI run saw two duplicates once with 3 s (each the first
// record of its partition), the likeliest cause but not confirmed: a
// failure now logs the group's events.
const memberSession = 10 * time.Second

// stopper is a group member that can leave.
type stopper interface{ stop() }

// runGroupStory is the shared group test: three members share 12
// partitions, a fourth joins, one leaves, every record is consumed exactly
// once; then all leave and a new member resumes from the commits.
func runGroupStory(t *testing.T, start func(*testing.T, *server.Cluster, string, *deliveries) stopper) {
	c := groupCluster(t)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, e := range c.Events(0) {
			if e.Group == "g" {
				t.Logf("event %d %s: member %s generation %d %s %s", e.Seq, e.Type, e.Member, e.Generation, e.Reason, e.Detail)
			}
		}
	})
	p := newValueProducer(t, c)
	var d deliveries
	a := start(t, c, "a", &d)
	b := start(t, c, "b", &d)
	cc := start(t, c, "c", &d)
	waitGroup(t, c, "g", 3)
	p.produce(300)
	d.wait(t, 300)

	dd := start(t, c, "d", &d)
	waitGroup(t, c, "g", 4)
	p.produce(300)
	d.wait(t, 600)

	a.stop()
	waitGroup(t, c, "g", 3)
	p.produce(300)
	d.wait(t, 900)
	waitCommitted(t, c, "g")
	d.exactlyOnce(t, 900)

	for _, m := range []stopper{b, cc, dd} {
		m.stop()
	}
	start(t, c, "e", &d)
	waitGroup(t, c, "g", 1)
	p.produce(100)
	d.wait(t, 1000)
	waitCommitted(t, c, "g")
	d.exactlyOnce(t, 1000)
}
