package server

// The broker-cost driver: what the brokers themselves spend per record on
// Produce and Fetch, with as little client as possible in the way. A raw
// connection writes requests that were encoded once (only the correlation
// id, and for Produce the batches' base sequence and CRC, are patched per
// request) and reads each answer into one reused buffer, so nearly every
// instruction the process runs is the brokers'. Shapes: one partition
// batch is ten records; a request carries one batch for each of six
// partitions (rf=3, min.insync.replicas=2, all led by broker 1, so that
// one connection reaches them all); Produce is acks=all and idempotent
// (one producer id, sequences continuing); Fetch is a consumer's
// read_uncommitted fetch of fifty batches from each partition.
//
// Wall time on a shared machine is noisy; instruction counts are not.
// scripts/broker-cost.sh counts them with callgrind and prints
// instructions per record and allocations per request for all four cases.
// By hand: callgrind measures only between the two marker functions below
// (the setup and the cluster's shutdown stay out), under GOMAXPROCS=1 (with
// more, idle threads spinning in the scheduler swamp the count):
//
//	go test -c -o /tmp/server.test ./server
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
//	  --zero-before='*brokerCostStart' --dump-before='*brokerCostStop' \
//	  --callgrind-out-file=/tmp/cg.out /tmp/server.test -test.run '^$' \
//	  -test.bench 'BrokerCost/produce/record=100B$' -test.benchtime 200x -test.cpu 1
//
// The testing package calls the benchmark once with b.N=1 and then with
// 200, so the last dump taken at the stop marker (/tmp/cg.out.2) is the
// 200-request run: its "totals:" line divided by 200 times the records/op
// the benchmark prints is instructions per record. A plain
// `go test -bench BrokerCost -benchmem ./server` gives allocs/op (whole
// process, one op = one request), allocs/record, the process's CPU time
// per record and, for Produce, the replica fetchers' wake-ups and turns per
// request.

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	costPartitions      = 6
	costRecordsPerBatch = 10
	costFetchBatches    = 50 // batches per partition per fetch
	costFetchWindows    = 4  // distinct fetch ranges the log holds
)

// BenchmarkBrokerCost is the driver described at the top of the file.
func BenchmarkBrokerCost(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"100B", 100}, {"1KiB", 1024}} {
		b.Run("produce/record="+size.name, func(b *testing.B) { brokerCostProduce(b, size.bytes) })
		b.Run("fetch/record="+size.name, func(b *testing.B) { brokerCostFetch(b, size.bytes) })
	}
}

// brokerCostStart and brokerCostStop mark the measured part of a run for
// callgrind's --zero-before and --dump-before.
//
//go:noinline
func brokerCostStart() { runtime.Gosched() }

//go:noinline
func brokerCostStop() { runtime.Gosched() }

// costConn is the raw client: one TCP connection to a broker.
type costConn struct {
	b    *testing.B
	nc   net.Conn
	corr int32
	in   []byte
}

func dialCost(b *testing.B, c *Cluster, broker int32) *costConn {
	nc, err := net.Dial("tcp", c.broker(broker).addr())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	return &costConn{b: b, nc: nc}
}

// encode returns req as a whole frame (size prefix, header v1/v2, body).
func (cc *costConn) encode(req kmsg.Request) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("kgo")).AppendRequest(nil, req, 0)
}

// roundTrip sends frame with the next correlation id patched in and reads
// the answer's frame into cc.in, which it returns (header included).
func (cc *costConn) roundTrip(frame []byte) []byte {
	cc.corr++
	binary.BigEndian.PutUint32(frame[8:], uint32(cc.corr))
	if _, err := cc.nc.Write(frame); err != nil {
		cc.b.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(cc.nc, size[:]); err != nil {
		cc.b.Fatal(err)
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if cap(cc.in) < n {
		cc.in = make([]byte, n)
	}
	cc.in = cc.in[:n]
	if _, err := io.ReadFull(cc.nc, cc.in); err != nil {
		cc.b.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(cc.in)); got != cc.corr {
		cc.b.Fatalf("answer to correlation id %d, want %d", got, cc.corr)
	}
	return cc.in
}

// decode parses an answer read by roundTrip into resp (of req's version).
func (cc *costConn) decode(req kmsg.Request, frame []byte, resp kmsg.Response) {
	body := frame[4:] // correlation id
	if req.IsFlexible() {
		body = body[1:] // empty tag buffer
	}
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body); err != nil {
		cc.b.Fatal(err)
	}
}

// costCluster is a cluster with the topic "cost" led everywhere by broker
// 1 and a raw connection to it.
func costCluster(b *testing.B) (*Cluster, *costConn) {
	c := NewTestCluster(b, Config{})
	assignment := make([][]int32, costPartitions)
	for i := range assignment {
		assignment[i] = []int32{1, int32(2 + i%2), int32(3 - i%2)}
	}
	_, kerr, msg := c.createTopic(topicSpec{name: "cost", partitions: -1, rf: -1, assignment: assignment,
		configs: map[string]string{"min.insync.replicas": "2"}}, false)
	if kerr != nil {
		b.Fatal(kerr, msg)
	}
	return c, dialCost(b, c, 1)
}

// costProducer produces idempotent batches of records of one size to every
// partition of "cost": one request template, whose batches' base sequence
// and CRC it patches for each request.
type costProducer struct {
	cc      *costConn
	req     *kmsg.ProduceRequest
	frame   []byte
	batches []int // offset of each partition's batch in frame
	seq     int32 // base sequence of the next request's batches
	// crcBit[i] is what flipping bit i of the base sequence does to the
	// CRC: CRC-32C is affine in its input, so a new sequence costs the
	// client a few XORs instead of a CRC over the whole batch.
	crcBit   [32]uint32
	respSize int
}

func newCostProducer(b *testing.B, cc *costConn, recordBytes int) *costProducer {
	init := kmsg.NewPtrInitProducerIDRequest()
	init.SetVersion(4)
	init.TransactionTimeoutMillis = -1
	initResp := kmsg.NewPtrInitProducerIDResponse()
	cc.decode(init, cc.roundTrip(cc.encode(init)), initResp)
	if initResp.ErrorCode != 0 {
		b.Fatal(kerr.ErrorForCode(initResp.ErrorCode))
	}
	records := make([]protocol.Record, costRecordsPerBatch)
	for i := range records {
		records[i] = protocol.Record{Value: bytes.Repeat([]byte{'v'}, recordBytes)}
	}
	batch, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: initResp.ProducerID, ProducerEpoch: initResp.ProducerEpoch,
		BaseSequence: 0}, protocol.CodecNone, records)
	if err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(12)
	req.Acks, req.TimeoutMillis = -1, 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "cost"
	for i := range costPartitions {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = int32(i), batch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	p := &costProducer{cc: cc, req: req, frame: cc.encode(req)}
	for from := 0; len(p.batches) < costPartitions; {
		i := bytes.Index(p.frame[from:], batch)
		if i < 0 {
			b.Fatal("batch not found in the encoded request")
		}
		p.batches = append(p.batches, from+i)
		from += i + len(batch)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	covered := batch[21:] // what the CRC covers: from the attributes on
	zeros := crc32.Checksum(make([]byte, len(covered)), castagnoli)
	for bit := range 32 {
		delta := make([]byte, len(covered))
		binary.BigEndian.PutUint32(delta[53-21:], 1<<bit)
		p.crcBit[bit] = crc32.Checksum(delta, castagnoli) ^ zeros
	}
	return p
}

// produce sends one request (the next sequences) and checks the answer:
// in full the first time, by its size after that (offsets are fixed
// width, so any error message would change it). The final HW check in
// the benchmark catches a batch refused with a same-size answer.
func (p *costProducer) produce() {
	if p.seq > 0 {
		for _, at := range p.batches {
			bt := p.frame[at:]
			old := binary.BigEndian.Uint32(bt[53:])
			crc := binary.BigEndian.Uint32(bt[17:])
			for flip := old ^ uint32(p.seq); flip != 0; flip &= flip - 1 {
				crc ^= p.crcBit[bitIndex(flip)]
			}
			binary.BigEndian.PutUint32(bt[53:], uint32(p.seq))
			binary.BigEndian.PutUint32(bt[17:], crc)
		}
	}
	p.seq += costRecordsPerBatch
	in := p.cc.roundTrip(p.frame)
	if p.respSize == 0 {
		resp := kmsg.NewPtrProduceResponse()
		p.cc.decode(p.req, in, resp)
		for _, sp := range resp.Topics[0].Partitions {
			if sp.ErrorCode != 0 {
				p.cc.b.Fatalf("partition %d: %v", sp.Partition, kerr.ErrorForCode(sp.ErrorCode))
			}
		}
		p.respSize = len(in)
	} else if len(in) != p.respSize {
		p.cc.b.Fatalf("produce answer of %d bytes, the first was %d", len(in), p.respSize)
	}
}

// bitIndex is the index of the lowest set bit of x (x != 0).
func bitIndex(x uint32) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

func brokerCostProduce(b *testing.B, recordBytes int) {
	c, cc := costCluster(b)
	p := newCostProducer(b, cc, recordBytes)
	records := costPartitions * costRecordsPerBatch
	b.SetBytes(int64(records * recordBytes))
	b.ReportAllocs()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	wakeups, turns := fetcherCount(c, (*fetcher).wakeupCount), fetcherCount(c, (*fetcher).turnCount)
	cpu := cpuTime(b)
	brokerCostStart()
	for range b.N {
		p.produce()
	}
	brokerCostStop()
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N*records), "cpu-ns/record")
	b.ReportMetric(float64(fetcherCount(c, (*fetcher).wakeupCount)-wakeups)/float64(b.N), "fetcher-wakeups/op")
	b.ReportMetric(float64(fetcherCount(c, (*fetcher).turnCount)-turns)/float64(b.N), "fetcher-turns/op")
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	for i := range int32(costPartitions) {
		if hw := c.partition("cost", i).state().HighWatermark; hw != int64(b.N*costRecordsPerBatch) {
			b.Fatalf("partition %d: HW %d after %d batches", i, hw, b.N)
		}
	}
	b.ReportMetric(float64(records), "records/op")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*records), "allocs/record")
}

func brokerCostFetch(b *testing.B, recordBytes int) {
	c, cc := costCluster(b)
	p := newCostProducer(b, cc, recordBytes)
	for range costFetchWindows * costFetchBatches {
		p.produce()
	}
	batchBytes := len(p.frame[p.batches[0]:]) // an upper bound; the exact size follows
	if h, err := protocol.ParseBatchHeader(p.frame[p.batches[0]:]); err == nil {
		batchBytes = h.Size()
	}
	t := c.topic("cost")
	frames := make([][]byte, costFetchWindows)
	var req *kmsg.FetchRequest
	for w := range frames {
		req = kmsg.NewPtrFetchRequest()
		req.SetVersion(17)
		req.ReplicaID, req.ReplicaState.ID = -1, -1
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 50<<20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = t.name, t.id
		for i := range costPartitions {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition = int32(i)
			rp.FetchOffset = int64(w * costFetchBatches * costRecordsPerBatch)
			rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
			rp.PartitionMaxBytes = int32(costFetchBatches * batchBytes)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		frames[w] = cc.encode(req)
	}
	// The first answer of each window is checked in full; later ones by
	// their size, which is the same for the same batches.
	sizes := make([]int, costFetchWindows)
	for w, frame := range frames {
		resp := kmsg.NewPtrFetchResponse()
		in := cc.roundTrip(frame)
		cc.decode(req, in, resp)
		for _, sp := range resp.Topics[0].Partitions {
			if sp.ErrorCode != 0 || len(sp.RecordBatches) != costFetchBatches*batchBytes {
				b.Fatalf("window %d, partition %d: %v, %d bytes of records, want %d", w, sp.Partition,
					kerr.ErrorForCode(sp.ErrorCode), len(sp.RecordBatches), costFetchBatches*batchBytes)
			}
		}
		sizes[w] = len(in)
	}
	records := costPartitions * costFetchBatches * costRecordsPerBatch
	b.SetBytes(int64(records * recordBytes))
	b.ReportAllocs()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	cpu := cpuTime(b)
	brokerCostStart()
	for i := range b.N {
		w := i % costFetchWindows
		if in := cc.roundTrip(frames[w]); len(in) != sizes[w] {
			b.Fatalf("fetch answer of %d bytes, the first was %d", len(in), sizes[w])
		}
	}
	brokerCostStop()
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N*records), "cpu-ns/record")
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(records), "records/op")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*records), "allocs/record")
}
