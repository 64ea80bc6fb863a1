package server

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// dialFailures counts a franz-go client's failed connection attempts to
// one broker address.
type dialFailures struct {
	addr string
	n    atomic.Int64
}

func (d *dialFailures) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil && net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))) == d.addr {
		d.n.Add(1)
	}
}

// TestTimingKafkaCrashWaitsForSession: with Timing "kafka" a crashed
// leader keeps its partitions, as Kafka's controller does until
// broker.session.timeout.ms (9 s by default) passes: a franz-go producer
// retries against the dead broker (its record not written) until 9 s of the
// cluster's clock have passed, then writes to the new leader; an acks=all
// record to a partition the dead broker follows waits, the broker still in
// the ISR, until the fence drops it.
func TestTimingKafkaCrashWaitsForSession(t *testing.T) {
	c := manualCluster(t, Config{Timing: TimingKafka})
	if c.cfg.BrokerSessionTimeout != 9*time.Second || c.cfg.GroupInitialRebalanceDelay != 3*time.Second {
		t.Fatalf("timing kafka: session %v, initial rebalance delay %v; want 9s and 3s", c.cfg.BrokerSessionTimeout, c.cfg.GroupInitialRebalanceDelay)
	}
	if err := c.CreateTopic("tk", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	leader, _, _ := followers(t, c, "tk")
	// A partition the crashed broker follows: acks=all waits for it while
	// it stays in the ISR, until it is fenced.
	if err := c.CreateTopic("tkf", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	var followed int32 = -1
	for i := range int32(3) {
		if ps, _ := c.Partition("tkf", i); ps.Leader != leader {
			followed = i
			break
		}
	}
	if followed < 0 {
		t.Fatal("broker leads every partition of tkf")
	}
	dead := &dialFailures{addr: c.Bootstrap()[leader-1]}
	prod := newClient(t, c, kgo.DefaultProduceTopic("tk"), kgo.WithHooks(dead),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(20*time.Millisecond))
	ctx := testContext(t)
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := c.StopBroker(leader, StopCrash); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- prod.ProduceSync(ctx, &kgo.Record{Value: []byte("during")}).FirstErr() }()
	acksAll := make(chan error, 1)
	// Its own client, seeded with the live brokers: the first one is busy
	// retrying the dead leader.
	prod2 := newClient(t, c, kgo.SeedBrokers(liveBrokers(c)...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(20*time.Millisecond))
	go func() {
		acksAll <- prod2.ProduceSync(ctx, &kgo.Record{Topic: "tkf", Partition: followed, Value: []byte("followed")}).FirstErr()
	}()
	waitFor(t, 10*time.Second, "the acks=all record appended on its leader", func() bool {
		ps, _ := c.Partition("tkf", followed)
		for _, r := range ps.Replicas {
			if r.Broker == ps.Leader {
				return r.LogEndOffset == 1
			}
		}
		return false
	})
	waitFor(t, 10*time.Second, "the producer to fail connecting to the crashed leader three times", func() bool { return dead.n.Load() >= 3 })
	if err := c.AdvanceClock(9*time.Second - time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("tk", 0); ps.Leader != leader || len(ps.ISR) != 3 {
		t.Fatalf("8.999 s after the crash: leader %d ISR %v; want %d still leading", ps.Leader, ps.ISR, leader)
	}
	before := dead.n.Load()
	waitFor(t, 10*time.Second, "the producer to keep retrying the crashed leader", func() bool { return dead.n.Load() >= before+2 })
	select {
	case err := <-done:
		t.Fatalf("the record was answered (%v) while its leader was down and not fenced", err)
	case err := <-acksAll:
		t.Fatalf("the acks=all record was answered (%v) while a dead follower was in the ISR", err)
	default:
	}
	if ps, _ := c.Partition("tkf", followed); len(ps.ISR) != 3 || ps.HighWatermark != 0 {
		t.Fatalf("followed partition before the fence: ISR %v HW %d; want all three and 0", ps.ISR, ps.HighWatermark)
	}
	if err := c.AdvanceClock(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("tk", 0); ps.Leader == leader || ps.Leader < 0 {
		t.Fatalf("9 s after the crash: leader %d; want a new one", ps.Leader)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the record after the new leader: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the producer never wrote to the new leader")
	}
	select {
	case err := <-acksAll:
		if err != nil {
			t.Fatalf("the acks=all record after the fence: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the acks=all record was never acknowledged")
	}
	if ps, _ := c.Partition("tk", 0); ps.HighWatermark != 2 {
		t.Fatalf("high watermark %d, want 2 (before and during)", ps.HighWatermark)
	}
}

// TestTimingFastCrashMovesAtOnce: the default timing fences a crashed
// broker at once: its leadership moves without the clock moving.
func TestTimingFastCrashMovesAtOnce(t *testing.T) {
	c := manualCluster(t, Config{})
	if c.cfg.Timing != TimingFast || c.cfg.BrokerSessionTimeout != 0 || c.cfg.GroupInitialRebalanceDelay != 0 {
		t.Fatalf("default timing %q: session %v, delay %v", c.cfg.Timing, c.cfg.BrokerSessionTimeout, c.cfg.GroupInitialRebalanceDelay)
	}
	if err := c.CreateTopic("tf", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	leader, _, _ := followers(t, c, "tf")
	if err := c.StopBroker(leader, StopCrash); err != nil {
		t.Fatal(err)
	}
	if ps, _ := c.Partition("tf", 0); ps.Leader == leader || ps.Leader < 0 {
		t.Fatalf("right after the crash: leader %d; want a new one", ps.Leader)
	}
	prod := newClient(t, c, kgo.SeedBrokers(liveBrokers(c)...), kgo.DefaultProduceTopic("tf"))
	if err := prod.ProduceSync(testContext(t), &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestTimingConfig: Timing "kafka" fills only what is left zero, and
// anything else is refused.
func TestTimingConfig(t *testing.T) {
	cfg, err := Config{Timing: TimingKafka, BrokerSessionTimeout: 2 * time.Second}.withDefaults()
	if err != nil || cfg.BrokerSessionTimeout != 2*time.Second || cfg.GroupInitialRebalanceDelay != 3*time.Second {
		t.Fatalf("explicit session under timing kafka: %v, %v, %v", err, cfg.BrokerSessionTimeout, cfg.GroupInitialRebalanceDelay)
	}
	cfg, err = Config{Timing: TimingKafka, BrokerConfigs: map[string]string{"group.initial.rebalance.delay.ms": "500"}}.withDefaults()
	if err != nil || cfg.GroupInitialRebalanceDelay != 500*time.Millisecond || cfg.BrokerSessionTimeout != 9*time.Second {
		t.Fatalf("broker config under timing kafka: %v, %v, %v", err, cfg.GroupInitialRebalanceDelay, cfg.BrokerSessionTimeout)
	}
	cfg, err = Config{Timing: TimingKafka, BrokerConfigs: map[string]string{"broker.session.timeout.ms": "0"}}.withDefaults()
	if err != nil || cfg.BrokerSessionTimeout != 0 {
		t.Fatalf("broker.session.timeout.ms=0 named under timing kafka: %v, %v", err, cfg.BrokerSessionTimeout)
	}
	if _, err := (Config{Timing: "slow"}).withDefaults(); err == nil {
		t.Fatal("timing slow accepted")
	}
}
