// Package compat runs real Kafka clients other than franz-go against
// fakekafka. It is its own module so that the core never depends on them.
package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/fakekafka/fakekafka/server"
)

func saramaConfig(acks sarama.RequiredAcks) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Producer.RequiredAcks = acks
	cfg.Producer.Return.Successes = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Metadata.Retry.Backoff = 10 * time.Millisecond
	return cfg
}

// TestSaramaAcks produces with sarama at acks=1 and acks=0 and consumes
// every record back with sarama.
func TestSaramaAcks(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	for _, tc := range []struct {
		name string
		acks sarama.RequiredAcks
	}{{"acks=1", sarama.WaitForLocal}, {"acks=0", sarama.NoResponse}, {"acks=all", sarama.WaitForAll}} {
		t.Run(tc.name, func(t *testing.T) {
			topic := "sarama-" + strings.TrimPrefix(tc.name, "acks=")
			if err := c.CreateTopic(topic, 3, 3, nil); err != nil {
				t.Fatal(err)
			}
			cfg := saramaConfig(tc.acks)
			prod, err := sarama.NewSyncProducer(c.Bootstrap(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer prod.Close()
			const n = 300
			for i := range n {
				p, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: -1, Key: sarama.StringEncoder(fmt.Sprint(i)), Value: sarama.StringEncoder(fmt.Sprintf("v%d", i))})
				if err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
				if tc.acks != sarama.NoResponse && (p < 0 || off < 0) {
					t.Fatalf("send %d: partition %d offset %d", i, p, off)
				}
			}
			cons, err := sarama.NewConsumer(c.Bootstrap(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer cons.Close()
			seen := map[string]bool{}
			for p := range int32(3) {
				pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
				if err != nil {
					t.Fatal(err)
				}
				defer pc.Close()
				// acks=0 gives no offsets back: read until the partition's HW.
				hw := waitHW(t, c, topic, p)
				next := int64(0)
				for next < hw {
					select {
					case m := <-pc.Messages():
						if m.Offset != next {
							t.Fatalf("partition %d: offset %d, want %d", p, m.Offset, next)
						}
						seen[string(m.Value)] = true
						next++
					case err := <-pc.Errors():
						t.Fatal(err)
					case <-time.After(30 * time.Second):
						t.Fatalf("partition %d: stuck at %d of %d", p, next, hw)
					}
				}
			}
			if len(seen) != n {
				t.Fatalf("consumed %d distinct records, produced %d", len(seen), n)
			}
		})
	}
}

// waitHW waits until every replica of the partition has the same LEO and
// the HW equals it, then returns the HW.
func waitHW(t *testing.T, c *server.Cluster, topic string, p int32) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ps, _ := c.Partition(topic, p)
		settled := ps.HighWatermark == ps.Replicas[0].LogEndOffset
		for _, r := range ps.Replicas {
			settled = settled && r.LogEndOffset == ps.HighWatermark
		}
		if settled {
			return ps.HighWatermark
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition %s/%d never settled: %+v", topic, p, ps)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
}

func kcat(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat is not installed (apt-get install kcat; .ci/run does this)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// TestKcatMetadataAndRoundTrip lists metadata with kcat (librdkafka) and
// round-trips messages through it.
func TestKcatMetadataAndRoundTrip(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{})
	if err := c.CreateTopic("kcat", 4, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	bootstrap := strings.Join(c.Bootstrap(), ",")

	var md struct {
		Brokers []struct {
			ID   int32  `json:"id"`
			Name string `json:"name"`
		} `json:"brokers"`
		Topics []struct {
			Topic      string `json:"topic"`
			Partitions []struct {
				Partition int32 `json:"partition"`
				Leader    int32 `json:"leader"`
				Replicas  []struct {
					ID int32 `json:"id"`
				} `json:"replicas"`
				ISRs []struct {
					ID int32 `json:"id"`
				} `json:"isrs"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal([]byte(kcat(t, "", "-b", bootstrap, "-L", "-J", "-t", "kcat")), &md); err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 3 {
		t.Fatalf("kcat sees %d brokers, want 3", len(md.Brokers))
	}
	for i, b := range md.Brokers {
		if want := c.Bootstrap()[b.ID-1]; b.Name != want {
			t.Errorf("broker %d (%d) at %q, want %q", i, b.ID, b.Name, want)
		}
	}
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 4 {
		t.Fatalf("kcat metadata %+v", md.Topics)
	}
	for _, p := range md.Topics[0].Partitions {
		ps, _ := c.Partition("kcat", p.Partition)
		if p.Leader != ps.Leader || len(p.Replicas) != 3 || len(p.ISRs) != len(ps.ISR) {
			t.Errorf("partition %d: kcat %+v, fakekafka %+v", p.Partition, p, ps)
		}
		for i, r := range p.Replicas {
			if r.ID != ps.Replicas[i].Broker {
				t.Errorf("partition %d replica %d: kcat %d, fakekafka %d", p.Partition, i, r.ID, ps.Replicas[i].Broker)
			}
		}
	}

	kcat(t, "one\ntwo\nthree\n", "-b", bootstrap, "-t", "kcat", "-p", "2", "-P", "-X", "acks=all")
	out := kcat(t, "", "-b", bootstrap, "-t", "kcat", "-p", "2", "-C", "-o", "beginning", "-c", "3", "-e", "-f", "%o:%s\n")
	if out != "0:one\n1:two\n2:three\n" {
		t.Fatalf("kcat consumed %q", out)
	}
}
