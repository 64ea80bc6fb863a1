package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduceConsume pushes b.N 100-byte records through franz-go into
// an in-process 3-broker cluster (rf=3, acks=all, idempotent,
// min.insync.replicas=2, 6 partitions) and reads them back.
func BenchmarkProduceConsume(b *testing.B) { produceConsume(b, nil) }

// produceConsume is BenchmarkProduceConsume; setup runs on the cluster
// before the clients start.
func produceConsume(b *testing.B, setup func(*Cluster)) {
	c := NewTestCluster(b, Config{})
	if err := c.CreateTopic("bench", 6, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		b.Fatal(err)
	}
	if setup != nil {
		setup(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	prod := newClient(b, c, kgo.DefaultProduceTopic("bench"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(100_000))
	cons := newClient(b, c, kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	value := make([]byte, 100)
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	b.ResetTimer()

	if perr := produceN(ctx, prod, b.N, value); perr != nil {
		b.Fatal(perr)
	}
	for n := 0; n < b.N; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		n += fs.NumRecords()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkClusterStart measures start-up to a cluster whose brokers accept
// connections, and its shutdown.
func BenchmarkClusterStart(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		c, err := NewCluster(Config{})
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkIdlePartitions measures what an idle cluster costs: 10,000
// partitions (rf 3, so 20,000 followers) that nobody writes to, whose
// followers still fetch empty every replica.fetch.wait.max.ms (500 ms) to
// stay in the ISR. One op is one such interval of idleness; cpu-cores is
// the process's CPU time (user + system) over wall time while idle.
//
//	go test ./server -run '^$' -bench IdlePartitions -benchtime 20x
func BenchmarkIdlePartitions(b *testing.B) {
	c := NewTestCluster(b, Config{})
	if err := c.CreateTopic("idle", 10_000, 3, nil); err != nil {
		b.Fatal(err)
	}
	interval := c.idleFetchInterval()
	time.Sleep(2 * interval) // let the first fetch round pass: start-up is not idleness
	before, start := cpuTime(b), time.Now()
	b.ResetTimer()
	for range b.N {
		time.Sleep(interval) // the idle period being measured, not synchronisation
	}
	b.StopTimer()
	wall := time.Since(start)
	b.ReportMetric((cpuTime(b)-before).Seconds()/wall.Seconds(), "cpu-cores")
	for _, p := range c.topic("idle").partitions() {
		if ps := p.state(); len(ps.ISR) != 3 {
			b.Fatalf("partition %d: ISR %v after %v idle", ps.Partition, ps.ISR, wall)
		}
	}
}
