package compat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// retainedCluster has topic "r" whose first 20 records retention deleted
// (log start 20) and three records after it at 20-22, on the manual clock.
func retainedCluster(t *testing.T) *server.Cluster {
	t.Helper()
	c := server.NewTestCluster(t, server.Config{Clock: clock.NewManual(time.Time{}), RetentionCheckInterval: time.Minute})
	scMust(t, c.CreateTopic("r", 1, 3, map[string]string{"retention.ms": "60000", "segment.bytes": "500"}))
	prod, err := sarama.NewSyncProducer(c.Bootstrap(), saramaConfig(sarama.WaitForAll))
	scMust(t, err)
	defer prod.Close()
	send := func(v string) {
		_, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "r", Value: sarama.StringEncoder(v), Timestamp: c.Now()})
		scMust(t, err)
	}
	for i := range 20 {
		send(fmt.Sprintf("old-%d", i))
	}
	scMust(t, c.AdvanceClock(2*time.Minute)) // two retention checks: everything is older than a minute
	scWait(t, 10*time.Second, "retention to delete the old records", func() bool {
		ps, _ := c.Partition("r", 0)
		return ps.Replicas[0].LogStartOffset == 20
	})
	for i := range 3 {
		send(fmt.Sprintf("new-%d", i))
	}
	return c
}

// sarama: a partition consumer asked for an offset below the log start
// gets ErrOffsetOutOfRange; a consumer group whose committed offset fell
// behind retention resets to Consumer.Offsets.Initial (oldest: 20).
func TestSaramaConsumerBehindRetention(t *testing.T) {
	c := retainedCluster(t)
	cons, err := sarama.NewConsumer(c.Bootstrap(), saramaConfig(sarama.WaitForAll))
	scMust(t, err)
	defer cons.Close()
	if _, err := cons.ConsumePartition("r", 0, 5); !errors.Is(err, sarama.ErrOffsetOutOfRange) {
		t.Fatalf("ConsumePartition at 5: %v, want OFFSET_OUT_OF_RANGE", err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
	scMust(t, err)
	defer cl.Close()
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: "r", Partition: 0, At: 5, LeaderEpoch: -1})
	_, err = kadm.NewClient(cl).CommitOffsets(context.Background(), "sg", commits)
	scMust(t, err)

	cfg := saramaConfig(sarama.WaitForAll)
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	g, err := sarama.NewConsumerGroup(c.Bootstrap(), "sg", cfg)
	scMust(t, err)
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := &firstMessage{got: make(chan *sarama.ConsumerMessage, 1)}
	go g.Consume(ctx, []string{"r"}, h)
	select {
	case m := <-h.got:
		if m.Offset != 20 || string(m.Value) != "new-0" {
			t.Fatalf("group reset to offset %d (%q), want 20", m.Offset, m.Value)
		}
	case <-ctx.Done():
		t.Fatal("the sarama group consumed nothing")
	}
}

type firstMessage struct{ got chan *sarama.ConsumerMessage }

func (*firstMessage) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*firstMessage) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *firstMessage) ConsumeClaim(_ sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		select {
		case h.got <- m:
		default:
		}
	}
	return nil
}

// librdkafka (confluent-kafka-go): a fetch below the log start gets
// OFFSET_OUT_OF_RANGE and resets per auto.offset.reset: earliest reads
// from 20, latest waits at the end (23) for the next record, error
// reports the failure to the application.
func TestConfluentConsumerBehindRetention(t *testing.T) {
	c := retainedCluster(t)
	topic := "r"
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.DefaultProduceTopic("r"))
	scMust(t, err)
	defer prod.Close()
	read := func(reset string) (*kafka.Message, error) {
		cons, err := kafka.NewConsumer(&kafka.ConfigMap{
			"bootstrap.servers": strings.Join(c.Bootstrap(), ","), "group.id": "ck-" + reset,
			"auto.offset.reset": reset, "enable.auto.commit": false, "log_level": 3,
		})
		scMust(t, err)
		defer cons.Close()
		scMust(t, cons.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: 5}}))
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			m, err := cons.ReadMessage(200 * time.Millisecond)
			if err != nil {
				var ke kafka.Error
				if errors.As(err, &ke) && ke.IsTimeout() {
					if reset == "latest" {
						scMust(t, prod.ProduceSync(context.Background(), kgo.StringRecord("after-reset")).FirstErr())
					}
					continue
				}
			}
			return m, err
		}
		t.Fatalf("auto.offset.reset=%s: nothing within 30s", reset)
		return nil, nil
	}
	if m, err := read("earliest"); err != nil || m.TopicPartition.Offset != 20 || string(m.Value) != "new-0" {
		t.Fatalf("earliest: %v %v", m, err)
	}
	if m, err := read("latest"); err != nil || m.TopicPartition.Offset < 23 || string(m.Value) != "after-reset" {
		t.Fatalf("latest: %v %v", m, err)
	}
	if _, err := read("error"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "out of range") {
		t.Fatalf("error: %v, want an offset out of range error", err)
	}
}
