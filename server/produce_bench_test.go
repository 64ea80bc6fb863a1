package server

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkProduceSmall produces b.N 100-byte records through franz-go
// (rf=3, acks=all, idempotent, min.insync.replicas=2, 6 partitions), the
// produce half of BenchmarkProduceConsume. allocs/op counts the client's
// allocations too; a -memprofile focused on this module shows the broker's.
// cpu-ns/record is the process's CPU time (client and brokers), which
// other processes on a shared machine disturb less than wall time.
func BenchmarkProduceSmall(b *testing.B) {
	c := NewTestCluster(b, Config{})
	if err := c.CreateTopic("bench", 6, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	prod := newClient(b, c, kgo.DefaultProduceTopic("bench"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(100_000))
	value := make([]byte, 100)
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	perr := produceN(ctx, prod, b.N, value)
	b.StopTimer()
	if perr != nil {
		b.Fatal(perr)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/record")
}

// BenchmarkProduceRequest sends one acks=all Produce request per op, each a
// batch of ten 100-byte records for one rf=3 partition, and waits for its
// answer: the round trip through the connection, the partition, the
// follower fetchers and the parked request. allocs/op is per request,
// including the client's encoding of it; cpu-ns/op is the process's CPU
// time per request. The parallel case has 8 connections writing to the
// same partition, each with one request in flight.
func BenchmarkProduceRequest(b *testing.B) {
	b.Run("connections=1", func(b *testing.B) { produceRequests(b, 1) })
	b.Run("connections=8", func(b *testing.B) { produceRequests(b, 8) })
}

func produceRequests(b *testing.B, conns int) {
	c := NewTestCluster(b, Config{})
	if err := c.CreateTopic("bench", 1, 3, nil); err != nil {
		b.Fatal(err)
	}
	records := make([]protocol.Record, 10)
	for i := range records {
		records[i] = protocol.Record{Value: make([]byte, 100)}
	}
	batch, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, protocol.CodecNone, records)
	if err != nil {
		b.Fatal(err)
	}
	ctx := testContext(b)
	leader := int(c.partition("bench", 0).state().Leader)
	brokers := make([]*kgo.Broker, conns)
	for i := range brokers {
		brokers[i] = newClient(b, c).Broker(leader) // a client each: its own connection
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu, wakeups, turns := cpuTime(b), fetcherCount(c, (*fetcher).wakeupCount), fetcherCount(c, (*fetcher).turnCount)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for _, br := range brokers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := byTopicID(c, produceRequest("bench", batch)) // its own: the client sets its version
			for next.Add(1) <= int64(b.N) {
				resp, err := br.Request(ctx, req)
				if err == nil {
					if code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
						err = kerr.ErrorForCode(code)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(fetcherCount(c, (*fetcher).wakeupCount)-wakeups)/float64(b.N), "fetcher-wakeups/op")
	b.ReportMetric(float64(fetcherCount(c, (*fetcher).turnCount)-turns)/float64(b.N), "fetcher-turns/op")
}

// produceRequest is an acks=all Produce request of batch to partition 0.
func produceRequest(topic string, batch []byte) *kmsg.ProduceRequest {
	return produceBatchRequest(topic, -1, 30_000, batch)
}

// produceN produces n records of value through cl and waits for every
// answer, returning the first error any got.
func produceN(ctx context.Context, cl *kgo.Client, n int, value []byte) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var perr error
	wg.Add(n)
	for range n {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				perr = cmpErr(perr, err)
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	return perr
}

func (f *fetcher) wakeupCount() uint64 { return f.wakeups.Load() }
func (f *fetcher) turnCount() uint64   { return f.turns.Load() }

// fetcherCount sums count over the cluster's replica fetchers.
func fetcherCount(c *Cluster, count func(*fetcher) uint64) uint64 {
	n := uint64(0)
	for _, f := range c.fetchers {
		n += count(f)
	}
	return n
}
