package compat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/fakekafka/fakekafka/chaos"
	"github.com/fakekafka/fakekafka/server"
)

// TestConfluentChaos runs each chaos preset while librdkafka (through
// confluent-kafka-go) produces and a librdkafka group consumer reads and
// commits, and asserts the checker found nothing Kafka would not allow.
func TestConfluentChaos(t *testing.T) {
	for _, tc := range []struct {
		preset string
		acks   string
		idem   bool
	}{
		{"gentle", "all", true},
		{"rough", "all", true},
		{"network", "1", false},
	} {
		t.Run(tc.preset, func(t *testing.T) {
			c := server.NewTestCluster(t, server.Config{MinInsyncReplicas: 2, ReplicaLagTimeMax: 2 * time.Second})
			scMust(t, c.CreateTopic("ck", 2, 3, nil))
			spec, err := chaos.ParseSpec(tc.preset + ",seed=11,duration=3s,interval=250ms,hold=400ms,topics=ck")
			scMust(t, err)
			_, err = c.StartChaos(spec)
			scMust(t, err)
			base := kafka.ConfigMap{
				"bootstrap.servers":    strings.Join(c.Bootstrap(), ","),
				"retry.backoff.ms":     20,
				"reconnect.backoff.ms": 20,
				"log_level":            0,
			}
			pcfg := kafka.ConfigMap{"acks": tc.acks, "enable.idempotence": tc.idem, "linger.ms": 1, "message.timeout.ms": 20000}
			ccfg := kafka.ConfigMap{"group.id": "ck-" + tc.preset, "auto.offset.reset": "earliest", "auto.commit.interval.ms": 100}
			for k, v := range base {
				pcfg[k], ccfg[k] = v, v
			}
			p, err := kafka.NewProducer(&pcfg)
			scMust(t, err)
			defer p.Close()
			cons, err := kafka.NewConsumer(&ccfg)
			scMust(t, err)
			defer cons.Close()
			scMust(t, cons.Subscribe("ck", nil))

			ctx, cancel := context.WithCancel(context.Background())
			consumed := make(chan int)
			go func() {
				n := 0
				for ctx.Err() == nil {
					if m, err := cons.ReadMessage(100 * time.Millisecond); err == nil && m != nil {
						n++
					}
				}
				consumed <- n
			}()
			topic := "ck"
			delivered := make(chan kafka.Event, 64)
			acked, failed := 0, 0
			deadline := time.Now().Add(spec.Duration)
			for i := 0; time.Now().Before(deadline); i++ {
				if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: fmt.Appendf(nil, "%s-%d", tc.preset, i)}, delivered); err != nil {
					// An idempotent producer goes fatal when an unclean
					// election loses its sequence: the run still checks.
					t.Logf("produce: %v", err)
					break
				}
				if m := (<-delivered).(*kafka.Message); m.TopicPartition.Error == nil {
					acked++
				} else {
					failed++
				}
			}
			rep, err := c.StopChaos()
			scMust(t, err)
			cancel()
			n := <-consumed
			if acked == 0 || len(rep.Actions) < 4 {
				t.Fatalf("%d writes acknowledged, %d actions", acked, len(rep.Actions))
			}
			recorded := 0
			for _, p := range rep.Partitions {
				recorded += p.AckedBatches
			}
			t.Logf("%s: seed %d, %d actions, %d acknowledged (%d failed), %d batches recorded, %d consumed", tc.preset, rep.Seed, len(rep.Actions), acked, failed, recorded, n)
			if recorded == 0 {
				t.Fatal("the report recorded no acknowledged write")
			}
			if v := rep.Violations(); len(v) != 0 {
				t.Fatalf("seed %d: violations %v", rep.Seed, v)
			}
		})
	}
}
