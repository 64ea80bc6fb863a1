package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/transaction"
	"github.com/twmb/franz-go/pkg/kgo"
)

// evStory is the events after since about topic (and brokers), without the
// timing-dependent hw_advanced ones, in brief.
func evStory(c *Cluster, since uint64, topic string) []string {
	var out []string
	for _, e := range c.Events(since) {
		if e.Type == EventHWAdvanced || e.Topic != topic && !strings.HasPrefix(string(e.Type), "broker_") {
			continue
		}
		out = append(out, evLine(e))
	}
	return out
}

func evCheckStory(t *testing.T, c *Cluster, since uint64, topic string, want ...string) {
	t.Helper()
	if got := evStory(c, since, topic); !slices.Equal(got, want) {
		t.Errorf("events about %s:\n got %s\nwant %s", topic, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// lastSeq is the newest event's sequence number.
func evLastSeq(c *Cluster) uint64 {
	evs := c.Events(0)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

func TestEventsCrashStory(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopic("ev", 1, 3, nil))
	evs := c.Events(0)
	if len(evs) == 0 || evs[len(evs)-1].Type != EventTopicCreated || evs[len(evs)-1].Topic != "ev" {
		t.Fatalf("after CreateTopic the newest event is not topic_created ev: %v", evs)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d; sequence numbers start at 1 without gaps", i, e.Seq)
		}
	}
	since := evLastSeq(c)
	scMust(t, c.StopBroker(1, StopCrash))
	scMust(t, c.StartBroker(1))
	ctx := testContext(t)
	if _, err := c.WaitFor(ctx, ISRExpanded("ev", 0)); err != nil {
		t.Fatal(err)
	}
	scMust(t, c.ElectPreferredLeader("ev", 0))
	evCheckStory(t, c, since, "ev",
		"broker_stopped 1 crash",
		"broker_fenced 1",
		"isr_shrunk ev/0 broker 1 isr [2 3] (broker fenced)",
		"leader_elected ev/0 leader 2 (was 1) epoch 1 isr [2 3] (broker fenced)",
		"broker_started 1",
		"isr_expanded ev/0 broker 1 isr [1 2 3] (caught up)",
		"leader_elected ev/0 leader 1 (was 2) epoch 2 isr [1 2 3] (preferred)",
	)
}

func TestWaitForPastFutureAndTimeout(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	scMust(t, c.CreateTopic("w", 1, 3, nil))

	// Past: the creation is already in the ring.
	e, err := c.WaitFor(ctx, TopicCreated("w"))
	if err != nil || e.Topic != "w" || e.Type != EventTopicCreated {
		t.Fatalf("WaitFor a past event: %+v, %v", e, err)
	}

	// Future: the matcher sees only later events, in order.
	got := make(chan Event, 1)
	go func() {
		e, err := c.WaitFor(ctx, BrokerStopped(2))
		if err != nil {
			t.Error(err)
		}
		got <- e
	}()
	scMust(t, c.StopBroker(3, StopClean))
	scMust(t, c.StopBroker(2, StopPowerLoss))
	e = <-got
	if e.Broker != 2 || e.Mode != StopPowerLoss {
		t.Fatalf("WaitFor BrokerStopped(2) = %+v", e)
	}
	// The first match wins: broker 3's clean stop came before.
	e, err = c.WaitFor(ctx, OfType(EventBrokerStopped))
	if err != nil || e.Broker != 3 || e.Mode != StopClean {
		t.Fatalf("first broker_stopped: %+v, %v", e, err)
	}

	// Never: the context ends the wait with its cause.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.WaitFor(short, BrokerStopped(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFor a missing event: %v, want DeadlineExceeded", err)
	}

	// A closed cluster ends every wait.
	done := make(chan error, 1)
	go func() {
		_, err := c.WaitFor(ctx, BrokerStopped(1))
		done <- err
	}()
	c.Close()
	if err := <-done; err == nil {
		t.Fatal("WaitFor returned no error after Close")
	}
}

func TestEventRingIsBounded(t *testing.T) {
	c := NewTestCluster(t, Config{EventBuffer: 4})
	for i := range 6 {
		scMust(t, c.CreateTopic(fmt.Sprintf("r%d", i), 1, 1, nil))
	}
	evs := c.Events(0)
	var names []string
	for _, e := range evs {
		names = append(names, fmt.Sprintf("%d:%s", e.Seq, e.Topic))
	}
	if want := []string{"3:r2", "4:r3", "5:r4", "6:r5"}; !slices.Equal(names, want) {
		t.Fatalf("ring of 4 after 6 events holds %v, want %v", names, want)
	}
	if got := c.Events(5); len(got) != 1 || got[0].Seq != 6 {
		t.Fatalf("Events(5) = %v, want only seq 6", got)
	}
	if got := c.Events(6); len(got) != 0 {
		t.Fatalf("Events(6) = %v, want none", got)
	}
	if _, err := NewCluster(Config{EventBuffer: -1}); err == nil {
		t.Fatal("a negative event buffer was accepted")
	}
}

// A busy partition reports its HW in a few coalesced events, not one per
// produce, and the last one ends at the final HW.
func TestHWEventsAreCoalesced(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopic("hw", 1, 3, nil))
	cl := newClient(t, c, kgo.DefaultProduceTopic("hw"), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx := testContext(t)
	const n = 200
	for i := range n {
		scMust(t, cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint(i))).FirstErr())
	}
	e, err := c.WaitFor(ctx, HWReached("hw", 0, n))
	if err != nil {
		t.Fatal(err)
	}
	if e.To != n || e.Leader != 1 {
		t.Fatalf("final hw_advanced %+v, want to %d on leader 1", e, n)
	}
	var hws []Event
	for _, e := range c.Events(0) {
		if e.Type == EventHWAdvanced {
			hws = append(hws, e)
		}
	}
	if len(hws) >= n/2 {
		t.Fatalf("%d hw_advanced events for %d produces: not coalesced", len(hws), n)
	}
	for i, e := range hws {
		if i > 0 && e.From != hws[i-1].To {
			t.Errorf("hw_advanced %d goes %d->%d, but the previous one ended at %d", i, e.From, e.To, hws[i-1].To)
		}
	}
}

func TestEventJSONLeavesOutWhatDoesNotApply(t *testing.T) {
	e := newEvent(EventLogTruncated)
	e.Seq, e.Topic, e.Partition, e.Broker, e.From, e.To, e.Reason = 7, "t", 0, 2, 5, 0, "leader epoch"
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"seq":7,"time":"2026-01-02T03:04:05Z","type":"log_truncated","broker":2,"topic":"t","partition":0,"from":5,"to":0,"reason":"leader epoch"}`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Leader != -1 || back.Epoch != -1 || back.To != 0 || back.Broker != 2 || back.Partition != 0 {
		t.Fatalf("round trip %+v", back)
	}
	if back.ProducerID != -1 || back.ProducerEpoch != -1 {
		t.Fatalf("round trip of an event without a producer: %+v", back)
	}

	// A producer id and epoch of 0 are there; the transaction's fields too.
	e = newEvent(EventTxnStateChanged)
	e.Seq, e.TransactionalID, e.ProducerID, e.ProducerEpoch = 8, "tx", 0, 0
	e.PreviousState, e.State, e.Reason = "Empty", "Ongoing", TxnCauseAddPartitions
	e.Partitions = []transaction.Partition{{Topic: "t", Partition: 1}}
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if b, err = json.Marshal(e); err != nil {
		t.Fatal(err)
	}
	const wantTxn = `{"seq":8,"time":"2026-01-02T03:04:05Z","type":"txn_state_changed","reason":"AddPartitionsToTxn",` +
		`"transactional_id":"tx","producer_id":0,"producer_epoch":0,"state":"Ongoing","previous_state":"Empty","partitions":[{"topic":"t","partition":1}]}`
	if string(b) != wantTxn {
		t.Fatalf("JSON\n got %s\nwant %s", b, wantTxn)
	}
	back = Event{}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ProducerID != 0 || back.ProducerEpoch != 0 || back.Broker != -1 || len(back.Partitions) != 1 || back.State != "Ongoing" {
		t.Fatalf("round trip %+v", back)
	}
}

// evCheckStoryPrefix is evCheckStory for the first len(want) events, when
// what follows depends on timing.
func evCheckStoryPrefix(t *testing.T, c *Cluster, since uint64, topic string, want ...string) {
	t.Helper()
	got := evStory(c, since, topic)
	if len(got) > len(want) {
		got = got[:len(want)]
	}
	if !slices.Equal(got, want) {
		t.Errorf("events about %s:\n got %s\nwant %s", topic, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func TestEventsClassicGroup(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopic("gt", 2, 3, nil))
	ctx := testContext(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumerGroup("evg"), kgo.ConsumeTopics("gt"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // franz-go manages the group while polling
		defer close(done)
		for cl.PollFetches(ctx).Err0() == nil {
		}
	}()
	e, err := c.WaitFor(ctx, GroupRebalanced("evg"))
	if err != nil || e.Generation != 1 || e.Detail != "stable, 1 members" {
		t.Fatalf("group_rebalance_completed %+v, %v", e, err)
	}
	cl.Close()
	<-done
	left, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventGroupMemberLeft && e.Group == "evg" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(e Event) bool {
		return e.Type == EventGroupRebalanceCompleted && e.Group == "evg" && e.Detail == "empty"
	}); err != nil {
		t.Fatal(err)
	}
	var story []string
	for _, e := range c.Events(0) {
		if e.Group == "evg" {
			story = append(story, fmt.Sprintf("%s %d", e.Type, e.Generation))
		}
	}
	want := []string{
		"group_member_joined 0", "group_rebalance_started 0", "group_rebalance_completed 1",
		"group_member_left 1", "group_rebalance_started 1", "group_rebalance_completed 2",
	}
	if !slices.Equal(story, want) {
		t.Errorf("group story %q, want %q (member %s)", story, want, left.Member)
	}
}

func TestEventsFaultsConfigsAndIsolation(t *testing.T) {
	c := NewTestCluster(t, Config{})
	scMust(t, c.CreateTopic("f", 1, 3, nil))
	ctx := testContext(t)
	since := evLastSeq(c)

	rule, err := c.InjectFault(Fault{API: "Produce", Error: "NOT_ENOUGH_REPLICAS", Topic: "f", Count: 2})
	scMust(t, err)
	cl := newClient(t, c, fastRetries(kgo.DefaultProduceTopic("f"))...)
	scMust(t, cl.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr()) // retried past both hits
	if _, err := c.WaitFor(ctx, OfType(EventFaultExpired)); err != nil {
		t.Fatal(err)
	}
	c.RemoveFault(rule.ID())

	scMust(t, c.AlterTopicConfig("f", map[string]string{"min.insync.replicas": "2"}, nil))
	scMust(t, c.IsolateBroker(3))
	scMust(t, c.HealBroker(3))

	var got []string
	for _, e := range c.Events(since) {
		switch e.Type {
		case EventFaultAdded, EventFaultHit, EventFaultExpired, EventFaultRemoved:
			got = append(got, fmt.Sprintf("%s %v %s", e.Type, e.Fault == rule.ID(), e.Detail))
		case EventTopicConfigChanged:
			got = append(got, fmt.Sprintf("%s %s %v", e.Type, e.Topic, e.Configs))
		case EventBrokerIsolated, EventBrokerHealed, EventBrokerFenced:
			got = append(got, evLine(e))
		}
	}
	want := []string{
		"fault_added true Produce NOT_ENOUGH_REPLICAS, count 2",
		"fault_hit true Produce: Produce NOT_ENOUGH_REPLICAS, count 2 (hit 1)",
		"fault_hit true Produce: Produce NOT_ENOUGH_REPLICAS, count 2 (hit 2)",
		"fault_expired true Produce NOT_ENOUGH_REPLICAS, count 2",
		"fault_removed true Produce NOT_ENOUGH_REPLICAS, count 2",
		"topic_config_changed f map[min.insync.replicas:2]",
		"broker_isolated 3",
		"broker_fenced 3",
		"broker_healed 3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
}

func TestEventsKIP848Group(t *testing.T) {
	c := NewTestCluster(t, Config{ConsumerGroupHeartbeatInterval: 50 * time.Millisecond})
	scMust(t, c.CreateTopic("k", 4, 3, nil))
	ctx := testContext(t)
	member := func() (*kgo.Client, chan struct{}) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ConsumerGroup("k848"), kgo.ConsumeTopics("k"), kgo.ServerSideBalancer())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for cl.PollFetches(ctx).Err0() == nil {
			}
		}()
		return cl, done
	}
	a, aDone := member()
	first, err := c.WaitFor(ctx, GroupRebalanced("k848"))
	if err != nil || first.Generation < 1 {
		t.Fatalf("first rebalance_completed %+v, %v", first, err)
	}
	b, bDone := member()
	second, err := c.WaitFor(ctx, func(e Event) bool { return GroupRebalanced("k848")(e) && e.Seq > first.Seq })
	if err != nil || second.Generation <= first.Generation || second.Detail != fmt.Sprintf("2 members, assignment epoch %d", second.Generation) {
		t.Fatalf("second rebalance_completed %+v, %v", second, err)
	}
	var story []string
	for _, e := range c.Events(0) {
		if e.Group == "k848" && e.Seq <= second.Seq {
			story = append(story, string(e.Type))
		}
	}
	want := []string{
		"group_member_joined", "group_rebalance_started", "group_rebalance_completed",
		"group_member_joined", "group_rebalance_started", "group_rebalance_completed",
	}
	if !slices.Equal(story, want) {
		t.Errorf("KIP-848 story %q, want %q", story, want)
	}
	b.Close()
	<-bDone
	if _, err := c.WaitFor(ctx, func(e Event) bool { return e.Type == EventGroupMemberLeft && e.Group == "k848" }); err != nil {
		t.Fatal(err)
	}
	a.Close()
	<-aDone
}
