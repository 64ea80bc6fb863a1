package compat

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/server"
)

// TestConfluentTransactions: librdkafka's transactional producer (through
// confluent-kafka-go) commits and aborts, and a librdkafka read_committed
// consumer sees exactly the committed records.
func TestConfluentTransactions(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{TransactionStatePartitions: 3})
	scMust(t, c.CreateTopic("ctx", 1, 3, nil))
	base := kafka.ConfigMap{
		"bootstrap.servers":    strings.Join(c.Bootstrap(), ","),
		"retry.backoff.ms":     20,
		"reconnect.backoff.ms": 20,
		"log_level":            3,
	}
	pcfg := kafka.ConfigMap{"transactional.id": "librdkafka-tx", "go.logs.channel.enable": true}
	for k, v := range base {
		pcfg[k] = v
	}
	p, err := kafka.NewProducer(&pcfg)
	scMust(t, err)
	defer p.Close()
	go func() {
		for range p.Events() {
		}
	}()
	go func() {
		for range p.Logs() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	scMust(t, p.InitTransactions(ctx))
	topic := "ctx"
	txn := func(commit bool, values ...string) {
		t.Helper()
		scMust(t, p.BeginTransaction())
		for _, v := range values {
			scMust(t, p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte(v)}, nil))
		}
		if commit {
			scMust(t, p.CommitTransaction(ctx))
		} else {
			scMust(t, p.AbortTransaction(ctx))
		}
	}
	txn(true, "c1", "c2")
	txn(false, "a1")
	txn(true, "c3")

	ccfg := kafka.ConfigMap{"group.id": "ck-reader", "auto.offset.reset": "earliest", "isolation.level": "read_committed", "enable.auto.commit": false}
	for k, v := range base {
		ccfg[k] = v
	}
	cons, err := kafka.NewConsumer(&ccfg)
	scMust(t, err)
	defer cons.Close()
	scMust(t, cons.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}))
	var got []string
	for len(got) < 3 {
		if ctx.Err() != nil {
			t.Fatalf("read_committed: %v", got)
		}
		m, err := cons.ReadMessage(200 * time.Millisecond)
		if err != nil {
			if ke, ok := err.(kafka.Error); ok && ke.IsTimeout() {
				continue
			}
			t.Fatalf("consume: %v", err)
		}
		got = append(got, string(m.Value))
	}
	if !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("librdkafka read_committed: %v", got)
	}
}
