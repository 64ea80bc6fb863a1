package matrix

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
)

// TestMatrixJavaLogAppendTime: the Java client (kafka-clients 4.4) produces
// records with CreateTime 1000 and 2000 to a topic with
// message.timestamp.type=LogAppendTime and to one with CreateTime. On a
// manual cluster clock the broker's append time is exact: the producer's
// RecordMetadata and the consumer's records carry it, typed
// LOG_APPEND_TIME, for the first topic, and the producer's own times,
// typed CREATE_TIME, for the second.
func TestMatrixJavaLogAppendTime(t *testing.T) {
	requireJavaCell(t)
	at := time.UnixMilli(1_700_000_000_123)
	c := server.NewTestCluster(t, server.Config{Clock: clock.NewManual(at)})
	if err := c.CreateTopic("lat", 1, 3, map[string]string{"message.timestamp.type": "LogAppendTime"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("cat", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := newAdapterConfig(c.Bootstrap(), "timestamps")
	cfg.Topics = []string{"lat", "cat"}
	lines := runAdapter(t, ctx, KafkaClients, "timestamps", cfg)
	appended := float64(at.UnixMilli())
	var want []map[string]any
	for _, tc := range []struct {
		topic string
		ts    [2]float64
		typ   string
	}{{"lat", [2]float64{appended, appended}, "LogAppendTime"}, {"cat", [2]float64{1000, 2000}, "CreateTime"}} {
		for i, ts := range tc.ts {
			want = append(want, map[string]any{"type": "sent", "topic": tc.topic, "offset": float64(i), "timestamp": ts})
		}
		for i, ts := range tc.ts {
			want = append(want, map[string]any{"type": "read", "topic": tc.topic, "offset": float64(i), "timestamp": ts, "timestampType": tc.typ})
		}
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("adapter answered\n%v\nwant\n%v", lines, want)
	}
}
