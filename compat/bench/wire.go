package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The raw-client workloads ("wire-100", "wire-1k") take the client out of
// the measurement. Producing through franz-go, the client's own work per
// record bounds every broker (against the null broker, which does nothing,
// produce 100 B is only about 1.1× kfake on the development machine). Here
// the client encodes one Produce request per leader once, with one batch
// of wireBatchBytes per partition (Kafka's default batch.size), and sends
// it again and again with a new correlation id, up to wireInFlight at a
// time per connection, checking every partition's error code; it then
// fetches everything back with plain Fetch requests, walking only the batch
// headers. So nearly all the CPU a run takes is the broker's, and the
// ratios say how the brokers themselves compare. Batches are not
// idempotent (producer id -1), so the same bytes can be sent again.
const (
	wireBatchBytes = 16 << 10
	wireInFlight   = 5
	wireProduceMax = 9  // the newest Produce version the raw client speaks
	wireFetchMax   = 12 // the newest Fetch version that names topics

	wireMaxResponse = 256 << 20
)

// wireLeader is one broker and the partitions of the workload's topic it leads.
type wireLeader struct {
	addr       string
	partitions []int32
	start, end map[int32]int64 // log start and end offsets, for fetching back
}

// wireOnce produces n records of size bytes with the raw client into a
// fresh cluster and fetches them back.
func wireOnce(ctx context.Context, t Target, opt Options, size, n int) (f throughputFigures, err error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	const topic = "wire"
	// Every target starts from a collected heap, as the franz-go workload's
	// memory snapshot gives it: otherwise each inherits the collector's
	// pacing from the target before it in the round (a target run after a
	// small heap collected 4-5 times where the same code after a large one
	// collected once, and came out a quarter slower).
	runtime.GC()
	inst, err := t.Start(ctx, []TopicSpec{{Name: topic, Partitions: opt.Partitions, RecordSize: size}})
	if err != nil {
		return f, err
	}
	defer inst.Close()
	admin, err := kgo.NewClient(clientOpts(t, inst)...)
	if err != nil {
		return f, err
	}
	defer admin.Close()
	leaders, produceV, fetchV, err := wireSetup(ctx, admin, topic)
	if err != nil {
		return f, err
	}
	batch, perBatch, err := wireBatch(size)
	if err != nil {
		return f, err
	}

	st := startStats()
	start := time.Now()
	var sent atomic.Int64
	if err := eachLeader(leaders, func(l *wireLeader) error {
		return wireProduce(ctx, l, topic, produceV, batch, perBatch, int64(n), &sent)
	}); err != nil {
		return f, fmt.Errorf("produce: %w", err)
	}
	f.produce = float64(sent.Load()) / time.Since(start).Seconds()
	f.produceStats = st.end()
	f.sent = sent.Load()
	if f.kept, err = wireOffsets(ctx, admin, topic, leaders); err != nil {
		return f, err
	}

	var read atomic.Int64
	st = startStats()
	start = time.Now()
	if err := eachLeader(leaders, func(l *wireLeader) error {
		return wireFetch(ctx, l, topic, fetchV, &read)
	}); err != nil {
		return f, fmt.Errorf("fetch: %w", err)
	}
	f.consume = float64(read.Load()) / time.Since(start).Seconds()
	f.consumeStats = st.end()
	if read.Load() != f.kept {
		return f, fmt.Errorf("fetched %d records, the partitions hold %d", read.Load(), f.kept)
	}
	f.peakRSS, _ = peakRSSOf(inst)
	return f, nil
}

// eachLeader runs fn for every leader at once and returns the first error.
func eachLeader(leaders []*wireLeader, fn func(*wireLeader) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(leaders))
	for i, l := range leaders {
		wg.Go(func() { errs[i] = fn(l) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// wireSetup finds each partition's leader and the Produce and Fetch
// versions every broker speaks.
func wireSetup(ctx context.Context, cl *kgo.Client, topic string) (leaders []*wireLeader, produceV, fetchV int16, err error) {
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("metadata: %w", err)
	}
	td, ok := md.Topics[topic]
	if !ok || td.Err != nil {
		return nil, 0, 0, fmt.Errorf("metadata for %s: %v", topic, td.Err)
	}
	byID := map[int32]*wireLeader{}
	for _, p := range td.Partitions.Sorted() {
		l := byID[p.Leader]
		if l == nil {
			for _, b := range md.Brokers {
				if b.NodeID == p.Leader {
					l = &wireLeader{addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))}
				}
			}
			if l == nil {
				return nil, 0, 0, fmt.Errorf("partition %d: leader %d is not among the brokers", p.Partition, p.Leader)
			}
			byID[p.Leader] = l
			leaders = append(leaders, l)
		}
		l.partitions = append(l.partitions, p.Partition)
	}
	produceV, fetchV = wireProduceMax, wireFetchMax
	for _, b := range md.Brokers {
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err != nil {
			return nil, 0, 0, fmt.Errorf("ApiVersions to broker %d: %w", b.NodeID, err)
		}
		for _, k := range resp.ApiKeys {
			switch k.ApiKey {
			case kmsg.Produce.Int16():
				produceV = min(produceV, k.MaxVersion)
			case kmsg.Fetch.Int16():
				fetchV = min(fetchV, k.MaxVersion)
			}
		}
	}
	if produceV < 3 || fetchV < 4 {
		return nil, 0, 0, fmt.Errorf("brokers speak Produce v%d and Fetch v%d; the raw client needs v3 and v4 (record batches)", produceV, fetchV)
	}
	return leaders, produceV, fetchV, nil
}

// wireOffsets reads each partition's log start and end offsets (a fetch
// reads from the start, as a target may have removed records from the
// front, to the end) and returns how many records they hold together.
func wireOffsets(ctx context.Context, cl *kgo.Client, topic string, leaders []*wireLeader) (kept int64, err error) {
	starts, ends, err := logOffsets(ctx, cl, topic)
	if err != nil {
		return 0, err
	}
	for _, l := range leaders {
		l.start, l.end = map[int32]int64{}, map[int32]int64{}
		for _, p := range l.partitions {
			s, _ := starts.Lookup(topic, p)
			e, _ := ends.Lookup(topic, p)
			l.start[p], l.end[p] = s.Offset, e.Offset
			kept += e.Offset - s.Offset
		}
	}
	return kept, nil
}

// wireBatch is one uncompressed, non-idempotent batch of records of size
// bytes, about wireBatchBytes long, and how many records it holds.
func wireBatch(size int) ([]byte, int, error) {
	n := max(1, wireBatchBytes/(size+8))
	b, err := plainBatch(randomValue(size), n)
	return b, n, err
}

// wireProduce sends l one Produce request after the other (up to
// wireInFlight unanswered), each with batch for every partition l leads,
// until the records sent by every leader together reach n.
func wireProduce(ctx context.Context, l *wireLeader, topic string, version int16, batch []byte, perBatch int, n int64, sent *atomic.Int64) error {
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.Acks = -1
	req.TimeoutMillis = 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	for _, p := range l.partitions {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, batch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench-wire")).AppendRequest(nil, req, 0)
	perRequest := int64(perBatch * len(l.partitions))

	conn, err := wireDial(ctx, l.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A slot is a request sent and not yet answered; the reader frees them.
	slots := make(chan struct{}, wireInFlight)
	answered := make(chan error, 1)
	go func() { answered <- wireProduceAnswers(conn, version, slots) }()
	acquire := func() error {
		select {
		case slots <- struct{}{}:
			return nil
		case err := <-answered:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for corr := int32(1); sent.Add(perRequest) <= n+perRequest-1; corr++ {
		if err := acquire(); err != nil {
			return err
		}
		binary.BigEndian.PutUint32(frame[8:12], uint32(corr))
		if _, err := conn.Write(frame); err != nil {
			return err
		}
	}
	sent.Add(-perRequest) // the request not sent
	// Every slot free again is every request answered; closing the
	// connection then ends the reader.
	for range wireInFlight {
		if err := acquire(); err != nil {
			return err
		}
	}
	return nil
}

// wireProduceAnswers reads Produce responses, freeing a slot for each,
// until the connection closes or an answer has an error.
func wireProduceAnswers(conn net.Conn, version int16, slots chan struct{}) error {
	r := protocol.NewFrameReader(conn, 64<<10, wireMaxResponse)
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = version
	var buf []byte
	for {
		var err error
		if buf, err = wireReadResponse(r, buf, resp); err != nil {
			return err
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("partition %d: %w", p.Partition, err)
				}
			}
		}
		<-slots
	}
}

// wireFetch fetches l's partitions from their log start to their end,
// counting records from the batch headers, one request at a time (as a
// consumer does) and only for the partitions not read to the end yet.
func wireFetch(ctx context.Context, l *wireLeader, topic string, version int16, read *atomic.Int64) error {
	conn, err := wireDial(ctx, l.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	r := protocol.NewFrameReader(conn, 64<<10, wireMaxResponse)
	offsets := make(map[int32]int64, len(l.partitions))
	for _, p := range l.partitions {
		offsets[p] = l.start[p]
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.ReplicaID = -1
	req.MaxWaitMillis = 500
	req.MinBytes = 1
	req.MaxBytes = 50 << 20
	req.SessionEpoch = -1
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench-wire"))
	var out, in []byte
	for corr := int32(1); ; corr++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		for _, p := range l.partitions {
			if offsets[p] >= l.end[p] {
				continue
			}
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, offsets[p], 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) == 0 {
			return nil
		}
		req.Topics = append(req.Topics[:0], rt)
		out = formatter.AppendRequest(out[:0], req, corr)
		if _, err := conn.Write(out); err != nil {
			return err
		}
		if in, err = wireReadResponse(r, in, resp); err != nil {
			return err
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("partition %d: %w", p.Partition, err)
				}
				next, n := wireCount(p.RecordBatches, offsets[p.Partition], l.end[p.Partition])
				offsets[p.Partition] = next
				read.Add(n)
			}
		}
	}
}

// wireCount walks the whole batches in records (a fetch may end in a
// partial one) and returns the offset after the last and how many records
// from from up to end they hold (the null broker serves records past the
// end it reports).
func wireCount(records []byte, from, end int64) (next, n int64) {
	next = from
	for len(records) >= protocol.BatchHeaderLen && next < end {
		h, err := protocol.ParseBatchHeader(records)
		if err != nil || h.Size() > len(records) {
			break
		}
		if last := min(h.LastOffset(), end-1); last >= next {
			n += last + 1 - max(h.BaseOffset, next)
			next = last + 1
		}
		records = records[h.Size():]
	}
	return next, n
}

func wireDial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// wireReadResponse reads one response frame into buf (returned, grown if
// need be) and decodes its body (after the correlation id and, for flexible
// versions, the header's tags) into resp, which may keep slices of it until
// the next call.
func wireReadResponse(r *protocol.FrameReader, buf []byte, resp kmsg.Response) ([]byte, error) {
	frame, err := r.NextInto(buf)
	if err != nil {
		return buf, err
	}
	if len(frame) < 4 {
		return frame, fmt.Errorf("response of %d bytes", len(frame))
	}
	body := frame[4:]
	if resp.IsFlexible() {
		tags, k := binary.Uvarint(body)
		if k <= 0 || tags != 0 {
			return frame, fmt.Errorf("response header tags: %d", tags)
		}
		body = body[k:]
	}
	return frame, resp.ReadFrom(body)
}
