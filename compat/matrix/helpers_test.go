package matrix

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// waitFor polls cond until it holds or timeout passes, then fails.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !waitUntil(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// waitUntil polls cond until it holds (true) or timeout passes (false).
func waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronisation
	}
	return true
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func partition(t testing.TB, c *server.Cluster, topic string, p int32) server.PartitionState {
	t.Helper()
	ps, ok := c.Partition(topic, p)
	if !ok {
		t.Fatalf("no partition %s/%d", topic, p)
	}
	return ps
}

// settled waits until every replica of topic/p is in the ISR with LEO = HW.
func settled(t testing.TB, c *server.Cluster, topic string, p int32) int64 {
	t.Helper()
	var hw int64
	waitFor(t, 10*time.Second, fmt.Sprintf("%s/%d to settle", topic, p), func() bool {
		ps := partition(t, c, topic, p)
		if ps.Leader < 0 || len(ps.ISR) != len(ps.Replicas) {
			return false
		}
		for _, r := range ps.Replicas {
			if r.LogEndOffset != ps.HighWatermark || r.HighWatermark != ps.HighWatermark {
				return false
			}
		}
		hw = ps.HighWatermark
		return true
	})
	return hw
}

// values yields n records "prefix0", "prefix1", ...
func values(prefix string, n int) iter.Seq[Record] {
	return func(yield func(Record) bool) {
		for i := range n {
			if !yield(Record{Key: fmt.Sprintf("k%d", i), Value: fmt.Sprintf("%s%d", prefix, i)}) {
				return
			}
		}
	}
}

// stored is one record as fakekafka's leader serves it, with the codec of
// its batch.
type stored struct {
	Offset int64
	Value  string
	Codec  string
}

// readLog reads topic/p from offset 0 up to the leader's HW with franz-go,
// the reference reader.
func readLog(t testing.TB, c *server.Cluster, topic string, p int32) []stored {
	t.Helper()
	hw := partition(t, c, topic, p).HighWatermark
	if hw <= 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.AlwaysRetryEOF(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(0)}}),
		kgo.FetchMaxWait(100*time.Millisecond))
	must(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []stored
	for int64(len(out)) < hw {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s/%d: %d of %d records", topic, p, len(out), hw)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("reference reader: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, stored{r.Offset, string(r.Value), codecName(r.Attrs.CompressionType())})
		})
	}
	return out
}

func codecName(c uint8) string {
	if int(c) < len(codecNames) {
		return codecNames[c]
	}
	return fmt.Sprint(c)
}

var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// reference produces values to topic/p with franz-go, acks=all, and waits
// for every acknowledgement.
func reference(t testing.TB, c *server.Cluster, topic string, p int32, records iter.Seq[Record]) {
	t.Helper()
	ds, err := FranzGo{}.Produce(context.Background(), ProducerConfig{Bootstrap: c.Bootstrap(), Topic: topic, Partition: p, Acks: AcksAll, Codec: "none", Retries: -1, DeliveryTimeout: 10 * time.Second}, records)
	must(t, err)
	for i, d := range ds {
		if d.Err != nil {
			t.Fatalf("reference produce of record %d to %s/%d: %v", i, topic, p, d.Err)
		}
	}
}

// readN reads n records from s, failing on timeout. Errors the client
// surfaces are returned, not fatal.
func readN(t testing.TB, s Stream, n int, timeout time.Duration) ([]Record, []error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var recs []Record
	var errs []error
	for len(recs) < n {
		e, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("read %d of %d records (errors: %v): %v", len(recs), n, errs, err)
		}
		if e.Err != nil {
			noProtocolError(t, e.Err)
			errs = append(errs, e.Err)
			continue
		}
		recs = append(recs, e.Record)
	}
	return recs, errs
}

// noProtocolError fails on a response the client could not parse: always
// a fakekafka bug.
func noProtocolError(t testing.TB, err error) {
	t.Helper()
	var pe *ProtocolError
	if errors.As(err, &pe) {
		t.Fatalf("the client rejected a fakekafka response: %v", pe)
	}
}

// describeAll names distinct errors in first-seen order, connection errors
// left out.
func describeAll(cl Client, errs []error) string {
	var names []string
	for _, err := range errs {
		if n := cl.Describe(err); n != connectionError && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}
