package bench

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// NullBroker is the least a Kafka cluster can do for a producer and a
// consumer: brokers that answer ApiVersions, Metadata (partition i led by
// broker i mod n + 1), InitProducerID, ListOffsets, Produce (success with
// increasing offsets, nothing stored) and Fetch (copies of one canned record
// batch, rebased to the requested offset). Whatever a client reaches against
// it is the limit of the client and of loopback on this machine.
//
// Every broker serves every partition (there is no leadership to check), and
// all of them share one set of offsets.
//
// It is deliberately built like a fakekafka broker (one goroutine per
// connection, protocol.ReadFrame, kmsg for the bodies), so that the
// difference between the two is the work a real broker does.
type NullBroker struct {
	lns    []net.Listener
	host   string
	ports  []int32
	topics map[string]*nullTopic
	byID   map[[16]byte]*nullTopic

	nextPID atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	// Set before the brokers start (NewNullBrokerStoring): keep every
	// request frame (fresh memory for each, as a broker that keeps what it
	// acknowledges), and check each produced batch's CRC-32C. They price
	// two of the things the plain null broker skips.
	store, checksum bool
	kept            [][]byte // with store: every frame read, guarded by mu
}

type nullTopic struct {
	name    string
	id      [16]byte
	offsets []atomic.Int64 // next produce offset per partition
	canned  []byte         // one batch of cannedN records, base offset 0
	cannedN int64
}

// nullCannedBytes is about how much record data one canned batch carries,
// close to what franz-go puts in one batch under load.
const nullCannedBytes = 16 << 10

// NewNullBroker starts brokers (ids 1..brokers) on free loopback ports,
// serving topics.
func NewNullBroker(brokers int, topics []TopicSpec) (*NullBroker, error) {
	return NewNullBrokerStoring(brokers, topics, false, false)
}

// NewNullBrokerStoring is NewNullBroker that, with store, keeps every
// request frame it reads until Close (each read into memory of its own,
// where the plain one reuses one buffer), and with checksum, checks the
// CRC-32C of every produced batch (CORRUPT_MESSAGE when wrong). Fetch still
// serves the canned batch: what is kept is never read back.
func NewNullBrokerStoring(brokers int, topics []TopicSpec, store, checksum bool) (*NullBroker, error) {
	nb := &NullBroker{
		host:     "127.0.0.1",
		topics:   map[string]*nullTopic{},
		byID:     map[[16]byte]*nullTopic{},
		conns:    map[net.Conn]struct{}{},
		store:    store,
		checksum: checksum,
	}
	for range max(brokers, 1) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			nb.closeListeners()
			return nil, err
		}
		nb.lns = append(nb.lns, ln)
		nb.ports = append(nb.ports, int32(ln.Addr().(*net.TCPAddr).Port))
	}
	nb.nextPID.Store(1)
	for i, ts := range topics {
		size := ts.RecordSize
		if size <= 0 {
			size = 100
		}
		n := max(1, nullCannedBytes/size)
		canned, err := plainBatch(make([]byte, size), n)
		if err != nil {
			nb.closeListeners()
			return nil, err
		}
		t := &nullTopic{name: ts.Name, offsets: make([]atomic.Int64, ts.Partitions), canned: canned, cannedN: int64(n)}
		t.id[0], t.id[15] = 0xfa, byte(i+1)
		nb.topics[t.name] = t
		nb.byID[t.id] = t
	}
	for _, ln := range nb.lns {
		nb.wg.Add(1)
		go nb.serve(ln)
	}
	return nb, nil
}

// Addrs are the brokers' host:port, broker 1 first.
func (nb *NullBroker) Addrs() []string {
	out := make([]string, len(nb.ports))
	for i, p := range nb.ports {
		out[i] = net.JoinHostPort(nb.host, strconv.Itoa(int(p)))
	}
	return out
}

func (nb *NullBroker) closeListeners() {
	for _, ln := range nb.lns {
		ln.Close()
	}
}

// Close stops the listener and every connection and waits for them.
func (nb *NullBroker) Close() {
	nb.mu.Lock()
	nb.closed = true
	nb.closeListeners()
	for c := range nb.conns {
		c.Close()
	}
	nb.mu.Unlock()
	nb.wg.Wait()
	nb.mu.Lock()
	nb.kept = nil
	nb.mu.Unlock()
}

func (nb *NullBroker) serve(ln net.Listener) {
	defer nb.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		nb.mu.Lock()
		if nb.closed {
			nb.mu.Unlock()
			c.Close()
			return
		}
		nb.conns[c] = struct{}{}
		nb.wg.Add(1)
		nb.mu.Unlock()
		go nb.serveConn(c)
	}
}

func (nb *NullBroker) serveConn(c net.Conn) {
	defer nb.wg.Done()
	defer func() {
		c.Close()
		nb.mu.Lock()
		delete(nb.conns, c)
		nb.mu.Unlock()
	}()
	// Frames are read as fakekafka's brokers read them, into one buffer
	// reused for every request: nothing of a request outlives its answer
	// (unless store keeps them all).
	r := protocol.NewFrameReader(c, 64<<10, 0)
	var in, out []byte
	for {
		frame, err := r.NextInto(in)
		if err != nil {
			return
		}
		if nb.store {
			nb.mu.Lock()
			nb.kept = append(nb.kept, frame)
			nb.mu.Unlock()
		} else {
			in = frame
		}
		hdr, body, err := protocol.ParseRequestHeader(frame)
		if err != nil {
			return
		}
		resp, err := nb.handle(hdr, body)
		if err != nil {
			return
		}
		if resp == nil {
			continue // acks=0
		}
		out = protocol.AppendResponse(out[:0], hdr, resp)
		if _, err := c.Write(out); err != nil {
			return
		}
		if cap(out) > 1<<20 {
			out = nil
		}
	}
}

// nullAPIs are the keys the null broker answers; ApiVersions advertises
// fakekafka's version ranges for them.
var nullAPIs = map[int16]bool{0: true, 1: true, 2: true, 3: true, 18: true, 22: true}

var errUnsupported = errors.New("null broker: unsupported request")

func (nb *NullBroker) handle(hdr protocol.RequestHeader, body []byte) (kmsg.Response, error) {
	if hdr.APIKey == 18 {
		resp := protocol.ApiVersionsResponse(hdr.APIVersion)
		keep := resp.ApiKeys[:0]
		for _, k := range resp.ApiKeys {
			if nullAPIs[k.ApiKey] {
				keep = append(keep, k)
			}
		}
		resp.ApiKeys = keep
		return resp, nil
	}
	rng, ok := protocol.Lookup(hdr.APIKey)
	if !ok || !nullAPIs[hdr.APIKey] || hdr.APIVersion < rng.Min || hdr.APIVersion > rng.Max {
		return nil, fmt.Errorf("%w: key %d v%d", errUnsupported, hdr.APIKey, hdr.APIVersion)
	}
	req := kmsg.RequestForKey(hdr.APIKey)
	req.SetVersion(hdr.APIVersion)
	if err := req.ReadFrom(body); err != nil {
		return nil, err
	}
	switch req := req.(type) {
	case *kmsg.MetadataRequest:
		return nb.metadata(req), nil
	case *kmsg.InitProducerIDRequest:
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID, resp.ProducerEpoch = nb.nextPID.Add(1), 0
		return resp, nil
	case *kmsg.ProduceRequest:
		return nb.produce(req), nil
	case *kmsg.FetchRequest:
		return nb.fetch(req), nil
	case *kmsg.ListOffsetsRequest:
		return nb.listOffsets(req), nil
	}
	return nil, errUnsupported
}

func (nb *NullBroker) metadata(req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	for i, port := range nb.ports {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i+1), nb.host, port
		resp.Brokers = append(resp.Brokers, b)
	}
	n := int32(len(nb.ports))
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i + 1)
	}
	cid := "null"
	resp.ClusterID, resp.ControllerID = &cid, 1
	add := func(t *nullTopic) {
		mt := kmsg.NewMetadataResponseTopic()
		name := t.name
		mt.Topic, mt.TopicID = &name, t.id
		mt.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(t.offsets))
		for i := range mt.Partitions {
			p := &mt.Partitions[i]
			*p = kmsg.NewMetadataResponseTopicPartition()
			p.Partition, p.Leader, p.LeaderEpoch = int32(i), int32(i)%n+1, -1
			p.Replicas, p.ISR = all, all
		}
		resp.Topics = append(resp.Topics, mt)
	}
	if req.Topics == nil {
		for _, t := range nb.topics {
			add(t)
		}
		return resp
	}
	for _, rt := range req.Topics {
		var t *nullTopic
		if rt.Topic != nil {
			t = nb.topics[*rt.Topic]
		} else {
			t = nb.byID[rt.TopicID]
		}
		if t == nil {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.TopicID, mt.ErrorCode = rt.Topic, rt.TopicID, kerr.UnknownTopicOrPartition.Code
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		add(t)
	}
	return resp
}

func (nb *NullBroker) produce(req *kmsg.ProduceRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt, st := &req.Topics[i], &resp.Topics[i]
		*st = kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		t := nb.topics[rt.Topic]
		if req.Version >= 13 { // topics by id (KIP-516)
			t = nb.byID[rt.TopicID]
		}
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.LogAppendTime, sp.LogStartOffset = rp.Partition, -1, 0
			if t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.offsets) {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				if req.Version >= 13 {
					sp.ErrorCode = kerr.UnknownTopicID.Code
				}
				continue
			}
			h, err := protocol.ParseBatchHeader(rp.Records)
			if err == nil && nb.checksum {
				err = h.VerifyCRC(rp.Records)
			}
			if err != nil {
				sp.ErrorCode = kerr.CorruptMessage.Code
				continue
			}
			n := int64(h.NumRecords)
			sp.BaseOffset = t.offsets[rp.Partition].Add(n) - n
		}
	}
	if req.Acks == 0 {
		return nil
	}
	return resp
}

func (nb *NullBroker) fetch(req *kmsg.FetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	remaining := int(req.MaxBytes)
	if remaining <= 0 {
		remaining = 1 << 30
	}
	haveData := false
	resp.Topics = make([]kmsg.FetchResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt, st := &req.Topics[i], &resp.Topics[i]
		*st = kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		t := nb.topics[rt.Topic]
		if req.Version >= 13 {
			t = nb.byID[rt.TopicID]
		}
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			rp, sp := &rt.Partitions[j], &st.Partitions[j]
			*sp = kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.RecordBatches = []byte{} // Kafka sends an empty field, never a null one
			if t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.offsets) {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				if req.Version >= 13 {
					sp.ErrorCode = kerr.UnknownTopicID.Code
				}
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
				continue
			}
			// As many rebased copies of the canned batch as the partition's
			// and the response's limits allow, and always at least one.
			size := len(t.canned)
			copies := max(0, min(int(rp.PartitionMaxBytes), remaining)/size)
			if copies == 0 && !haveData {
				copies = 1
			}
			buf := make([]byte, 0, copies*size)
			off := max(rp.FetchOffset, 0)
			for range copies {
				start := len(buf)
				buf = append(buf, t.canned...)
				protocol.SetBaseOffset(buf[start:], off)
				off += t.cannedN
			}
			remaining -= len(buf)
			haveData = haveData || copies > 0
			sp.RecordBatches = buf
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = off, off, 0
		}
	}
	return resp
}

func (nb *NullBroker) listOffsets(req *kmsg.ListOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		t := nb.topics[rt.Topic]
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.Timestamp = rp.Partition, -1, -1
			switch {
			case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.offsets):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case rp.Timestamp == -1: // latest
				sp.Offset = t.offsets[rp.Partition].Load()
			default: // earliest, or any timestamp: the start
				sp.Offset = 0
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// plainBatch is an uncompressed batch of n records with value, from no
// producer in particular (not idempotent), stamped now.
func plainBatch(value []byte, n int) ([]byte, error) {
	recs := make([]protocol.Record, n)
	for i := range recs {
		recs[i].Value = value
	}
	return protocol.BuildBatch(protocol.BatchHeader{
		PartitionLeaderEpoch: -1,
		BaseTimestamp:        time.Now().UnixMilli(),
		ProducerID:           -1,
		ProducerEpoch:        -1,
		BaseSequence:         -1,
	}, protocol.CodecNone, recs)
}
