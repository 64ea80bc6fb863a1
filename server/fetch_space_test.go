package server

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Space taken for one response stays intact while more is taken, in the
// connection's own buffer as it grows and across pooled buffers, and all
// of it is free again at release.
func TestFetchSpaceKeepsEarlierParts(t *testing.T) {
	var fs fetchSpace
	var parts [][]byte
	take := func(n int) {
		b := fs.take(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("take(%d): len %d cap %d: an append to it could reach the next part", n, len(b), cap(b))
		}
		for i := range b {
			b[i] = byte(len(parts))
		}
		parts = append(parts, b)
	}
	take(3000)
	take(3000) // past the first own buffer: a bigger one
	take(20 << 10)
	if fs.cur != nil {
		t.Fatal("small parts went to a pooled buffer")
	}
	take(1500 << 10) // past what a connection keeps: pooled
	take(1 << 20)    // does not fit the first pooled buffer
	if fs.cur == nil || len(fs.full) != 1 {
		t.Fatalf("pooled buffers: current %v, %d full, want 1", fs.cur != nil, len(fs.full))
	}
	take(100) // after a pooled one, the rest goes there too
	for i, b := range parts {
		if bytes.Count(b, []byte{byte(i)}) != len(b) {
			t.Fatalf("part %d was overwritten by a later one", i)
		}
	}
	fs.release()
	if fs.cur != nil || len(fs.full) != 0 || len(fs.own) != 0 || cap(fs.own) > fetchSpaceOwn {
		t.Fatalf("after release: current %v, %d full, own %d/%d", fs.cur != nil, len(fs.full), len(fs.own), cap(fs.own))
	}
}

// A Fetch of several partitions, each answering many batches and together
// more than one pooled buffer holds, returns every record in order,
// response after response on one connection.
func TestFetchGathersManyBatches(t *testing.T) {
	c := NewTestCluster(t, Config{})
	// Broker 1 leads all three, so one request reaches them all.
	if _, kerr, msg := c.createTopic(topicSpec{name: "many", partitions: -1, rf: -1,
		assignment: [][]int32{{1}, {1}, {1}}}, false); kerr != nil {
		t.Fatal(kerr, msg)
	}
	ctx := testContext(t)
	cl := newClient(t, c, kgo.DefaultProduceTopic("many"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	value := bytes.Repeat([]byte("x"), 10<<10)
	const perPartition = 120 // ~1.2 MiB each, one batch per record
	for i := range perPartition {
		for p := range int32(3) {
			r := &kgo.Record{Partition: p, Value: fmt.Appendf(bytes.Clone(value), "%d/%d", p, i)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	req := fetchRequest(12, "many", 0, -1, 1, 0)
	req.MaxBytes = 50 << 20
	req.Topics[0].Partitions[0].PartitionMaxBytes = 10 << 20
	for p := int32(1); p < 3; p++ {
		rp := req.Topics[0].Partitions[0]
		rp.Partition = p
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
	}
	broker := pinnedFetchClient(t, c, 12).Broker(1)
	for round := range 3 {
		resp, err := broker.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range resp.(*kmsg.FetchResponse).Topics[0].Partitions {
			if sp.ErrorCode != 0 {
				t.Fatalf("round %d, partition %d: error %d", round, sp.Partition, sp.ErrorCode)
			}
			i := 0
			for b := sp.RecordBatches; len(b) > 0; i++ {
				batch, rest, err := protocol.NextBatch(b)
				if err != nil {
					t.Fatalf("round %d, partition %d, batch %d: %v", round, sp.Partition, i, err)
				}
				recs, err := protocol.Records(batch)
				if err != nil || len(recs) != 1 || !bytes.HasSuffix(recs[0].Value, fmt.Appendf(nil, "%d/%d", sp.Partition, i)) {
					t.Fatalf("round %d, partition %d, batch %d: %d records, %v", round, sp.Partition, i, len(recs), err)
				}
				b = rest
			}
			if i != perPartition {
				t.Fatalf("round %d, partition %d: %d batches, want %d", round, sp.Partition, i, perPartition)
			}
		}
	}
}
