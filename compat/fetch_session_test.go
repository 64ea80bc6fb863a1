package compat

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/server"
	kafkago "github.com/segmentio/kafka-go"
)

// TestKafkaGoClientFetch reads with kafka-go's Client.Fetch, which sends
// session id -1 and epoch -1: a full fetch without a session (Kafka's
// FetchMetadata.isFull), answered with every record and session id 0.
func TestKafkaGoClientFetch(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	scMust(t, c.CreateTopic("kgf", 1, 3, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafkago.Writer{Addr: kafkago.TCP(c.Bootstrap()...), Topic: "kgf", RequiredAcks: kafkago.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	scMust(t, w.WriteMessages(ctx, kafkago.Message{Value: []byte("a")}, kafkago.Message{Value: []byte("b")}, kafkago.Message{Value: []byte("c")}))
	cl := &kafkago.Client{Addr: kafkago.TCP(c.Bootstrap()...), Timeout: 10 * time.Second}
	resp, err := cl.Fetch(ctx, &kafkago.FetchRequest{Topic: "kgf", Partition: 0, Offset: 0, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
	scMust(t, err)
	if resp.Error != nil {
		t.Fatalf("fetch: %v", resp.Error)
	}
	var got []string
	for {
		r, err := resp.Records.ReadRecord()
		if err == io.EOF {
			break
		}
		scMust(t, err)
		b, err := io.ReadAll(r.Value)
		scMust(t, err)
		got = append(got, string(b))
	}
	if strings.Join(got, ",") != "a,b,c" || resp.HighWatermark != 3 {
		t.Fatalf("read %v, HW %d; want a,b,c and HW 3", got, resp.HighWatermark)
	}
}

// TestConfluentConsumeThroughFailover consumes with librdkafka (through
// confluent-kafka-go) while the leader's broker stops and comes back and
// a partition moves: every record is read exactly once. librdkafka sends
// full fetches (session id 0, epoch -1), so the fetch sessions it meets
// are none: this shows the sessionless path is unchanged under failover.
func TestConfluentConsumeThroughFailover(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 4})
	scMust(t, c.CreateTopic("cff", 2, 3, map[string]string{"min.insync.replicas": "2"}))
	base := kafka.ConfigMap{"bootstrap.servers": strings.Join(c.Bootstrap(), ","), "retry.backoff.ms": 20,
		"reconnect.backoff.ms": 20, "log_level": 0, "topic.metadata.refresh.interval.ms": 500}
	pcfg := cloneConfig(base)
	pcfg["acks"] = "all"
	pcfg["enable.idempotence"] = true
	prod, err := kafka.NewProducer(&pcfg)
	scMust(t, err)
	defer prod.Close()
	ccfg := cloneConfig(base)
	ccfg["group.id"] = "cff-group"
	ccfg["auto.offset.reset"] = "earliest"
	ccfg["fetch.wait.max.ms"] = 100
	cons, err := kafka.NewConsumer(&ccfg)
	scMust(t, err)
	defer cons.Close()
	scMust(t, cons.Subscribe("cff", nil))
	topic := "cff"
	seen := map[string]int{}
	next := 0
	round := func(n int) {
		for range n {
			scMust(t, prod.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
				Value: fmt.Appendf(nil, "r-%04d", next)}, nil))
			next++
		}
		deadline := time.Now().Add(60 * time.Second)
		for len(seen) < next {
			if time.Now().After(deadline) {
				t.Fatalf("read %d of %d records", len(seen), next)
			}
			ev := cons.Poll(100)
			if m, ok := ev.(*kafka.Message); ok {
				seen[string(m.Value)]++
			}
		}
	}
	round(50)
	sessions := 0
	for id := int32(1); id <= 4; id++ {
		sessions += c.FetchSessions(id)
	}
	t.Logf("fetch sessions opened by librdkafka: %d", sessions)
	ps, _ := c.Partition("cff", 0)
	scMust(t, c.StopBroker(ps.Leader, server.StopClean))
	round(50)
	scMust(t, c.StartBroker(ps.Leader))
	ps1, _ := c.Partition("cff", 1)
	var target []int32
	for id := int32(1); id <= 4; id++ {
		if id != ps1.Leader {
			target = append(target, id)
		}
	}
	scMust(t, c.ReassignPartition("cff", 1, target))
	scWait(t, 30*time.Second, "cff-1 to move", func() bool {
		p, _ := c.Partition("cff", 1)
		return p.Leader != ps1.Leader && len(c.Reassignments()) == 0
	})
	round(50)
	for v, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", v, n)
		}
	}
}

func cloneConfig(m kafka.ConfigMap) kafka.ConfigMap {
	out := kafka.ConfigMap{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
