package reference

// Produce and Fetch details in the corpus (issue 25): the log start offset
// and LogAppendTime of every Produce answer, per-record errors
// (RecordErrors) as Kafka's LogValidator words them, magic v0/v1 message
// sets, two entries for one partition, recompression to the topic's
// compression.type, Fetch's MaxBytes and PartitionMaxBytes (KIP-74 and the
// partial batch at the limit) and a consumer's LastFetchedEpoch.
//
// Each case's topics are its own ("pf-..."), created before the first case
// on every broker, so offsets are equal on both clusters. Record batches in
// answers are compared as a summary (summariseBatches): their CRCs and
// append times differ between two clusters by construction.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pfState is what the produce/fetch cases learn per target: topic ids and
// an idempotent producer.
type pfState struct {
	ids map[string][16]byte
	pid int64
}

var (
	pfMu     sync.Mutex
	pfStates = map[*corpusEnv]*pfState{}
)

func pf(e *corpusEnv) *pfState {
	pfMu.Lock()
	defer pfMu.Unlock()
	s := pfStates[e]
	if s == nil {
		s = &pfState{ids: map[string][16]byte{}, pid: -1}
		pfStates[e] = s
	}
	return s
}

// pfTopics are the cases' topics: name -> partitions and configs.
var pfTopics = []struct {
	name       string
	partitions int
	configs    map[string]string
}{
	{"pf-lat", 1, map[string]string{"message.timestamp.type": "LogAppendTime"}},
	{"pf-compact", 1, map[string]string{"cleanup.policy": "compact"}},
	{"pf-ts", 1, map[string]string{"message.timestamp.before.max.ms": "3600000", "message.timestamp.after.max.ms": "3600000"}},
	{"pf-gzip", 1, map[string]string{"compression.type": "gzip"}},
	{"pf-none", 1, map[string]string{"compression.type": "uncompressed"}},
	{"pf-lat-gzip", 1, map[string]string{"compression.type": "gzip", "message.timestamp.type": "LogAppendTime"}},
	{"pf-dup", 2, nil},
	{"pf-fetch", 2, nil},
	{"pf-minisr", 1, map[string]string{"min.insync.replicas": "2"}},
}

// pfSetup creates the topics (pf-minisr on broker 1 alone, the others on
// 1,2,3 with 1 leading), fills pf-fetch's two partitions with three
// batches of two records each, and takes an idempotent producer id.
func pfSetup(r *run, e *corpusEnv) {
	s := pf(e)
	if len(s.ids) > 0 {
		return
	}
	for _, tp := range pfTopics {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.SetVersion(7)
		req.TimeoutMillis = 30000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = tp.name, -1, -1
		replicas := []int32{1, 2, 3}
		if tp.name == "pf-minisr" {
			replicas = []int32{1}
		}
		for i := range tp.partitions {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), replicas
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		for k, v := range tp.configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(v)
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
		if c := r.do(1, req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; c != 0 {
			r.Fatalf("create %s: %s", tp.name, errName(c))
		}
	}
	for _, tp := range pfTopics {
		want := 3
		if tp.name == "pf-minisr" {
			want = 1
		}
		for id := int32(1); id <= 3; id++ {
			r.waitFor(fmt.Sprintf("broker %d knows %s", id, tp.name), func() bool {
				req := kmsg.NewPtrMetadataRequest()
				req.SetVersion(12)
				req.Topics = []kmsg.MetadataRequestTopic{topicReq(tp.name)}
				t := r.do(id, req).(*kmsg.MetadataResponse).Topics[0]
				if t.ErrorCode != 0 || len(t.Partitions) != tp.partitions {
					return false
				}
				for _, p := range t.Partitions {
					if p.Leader != 1 || len(p.ISR) != want {
						return false
					}
				}
				s.ids[tp.name] = t.TopicID
				return true
			})
		}
	}
	for part := range int32(2) {
		for i := range 3 {
			b := simpleBatch(fmt.Sprintf("f%d-%d", part, 2*i), fmt.Sprintf("f%d-%d", part, 2*i+1))
			var p *kmsg.ProduceResponseTopicPartition
			r.waitFor("pf-fetch's records acknowledged", func() bool {
				resp := r.do(1, produceReq(11, "pf-fetch", part, -1, b)).(*kmsg.ProduceResponse)
				p = &resp.Topics[0].Partitions[0]
				return p.ErrorCode != kerr.NotLeaderForPartition.Code && p.ErrorCode != kerr.RequestTimedOut.Code && p.ErrorCode != kerr.NotEnoughReplicas.Code
			})
			if p.ErrorCode != 0 || p.BaseOffset != int64(2*i) {
				r.Fatalf("pf-fetch %d: %s at %d", part, errName(p.ErrorCode), p.BaseOffset)
			}
		}
		r.waitFor("HW 6 of pf-fetch", func() bool {
			req := pfFetchReq(12, e, 0, fetchAt{"pf-fetch", part, 0, -1})
			p := r.do(1, req).(*kmsg.FetchResponse).Topics[0].Partitions[0]
			return p.HighWatermark == 6
		})
	}
	req := at(4, kmsg.NewPtrInitProducerIDRequest())
	req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
	s.pid = r.do(1, req).(*kmsg.InitProducerIDResponse).ProducerID
}

// fetchAt is one partition of a Fetch: topic, partition, offset, last
// fetched epoch.
type fetchAt struct {
	topic     string
	partition int32
	offset    int64
	lastEpoch int32
}

// pfFetchReq fetches parts (each its own topic entry, so an entry may
// repeat) with MaxBytes maxBytes (0: 1 MiB); every partition max is 1 MiB.
func pfFetchReq(v int16, e *corpusEnv, maxBytes int32, parts ...fetchAt) *kmsg.FetchRequest {
	req := at(v, kmsg.NewPtrFetchRequest())
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = -1, 0, 1, 1<<20, -1
	if maxBytes > 0 {
		req.MaxBytes = maxBytes
	}
	for _, f := range parts {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = f.topic, pf(e).ids[f.topic]
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = f.partition, f.offset, 1<<20, -1, f.lastEpoch, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// keyed is a batch of records key=value ("" key: none) at timestamp ts.
func keyed(ts int64, codec protocol.Codec, kvs ...string) []byte {
	var recs []protocol.Record
	for i := 0; i+1 < len(kvs); i += 2 {
		r := protocol.Record{Value: []byte(kvs[i+1])}
		if kvs[i] != "" {
			r.Key = []byte(kvs[i])
		}
		recs = append(recs, r)
	}
	b, err := protocol.BuildBatch(protocol.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: ts}, codec, recs)
	if err != nil {
		panic(err)
	}
	return b
}

// patched is batch b with header bytes changed by f and its CRC recomputed.
func patched(b []byte, f func(b []byte)) []byte {
	b = append([]byte(nil), b...)
	f(b)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// legacyMessage is a one-message magic v0 or v1 message set (no key).
func legacyMessage(magic byte, value string) []byte {
	var m []byte
	m = append(m, magic, 0) // magic, attributes
	if magic == 1 {
		m = binary.BigEndian.AppendUint64(m, 1700000000000)
	}
	m = binary.BigEndian.AppendUint32(m, 0xffffffff) // null key
	m = binary.BigEndian.AppendUint32(m, uint32(len(value)))
	m = append(m, value...)
	msg := binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(m))
	msg = append(msg, m...)
	out := binary.BigEndian.AppendUint64(nil, 0) // offset
	out = binary.BigEndian.AppendUint32(out, uint32(len(msg)))
	return append(out, msg...)
}

// nowish maps a timestamp within five minutes of now to 1, so that two
// clusters' append times compare equal; -1 stays -1.
func nowish(ts int64) int64 {
	if d := time.Now().UnixMilli() - ts; d > -300000 && d < 300000 {
		return 1
	}
	return ts
}

// summariseBatches describes record batches as a consumer reads them:
// per batch its offsets, magic, codec, timestamp type (with append times
// shown as "now"), producer and records; a trailing partial batch by its
// size. Lengths and CRCs are left out: compressors differ.
func summariseBatches(raw []byte) []byte {
	var b strings.Builder
	for len(raw) > 0 {
		h, err := protocol.ParseBatchHeader(raw)
		if err != nil || h.Size() > len(raw) {
			fmt.Fprintf(&b, "[partial batch of %d bytes]", len(raw))
			break
		}
		batch := raw[:h.Size()]
		raw = raw[h.Size():]
		fmt.Fprintf(&b, "[base %d last %d epoch %d magic %d %s lat=%v txn=%v idempotent=%v seq %d n %d first-ts %d max-ts %d:",
			h.BaseOffset, h.LastOffset(), h.PartitionLeaderEpoch, h.Magic, h.Compression(), h.LogAppendTime(), h.IsTransactional(),
			h.ProducerID >= 0, h.BaseSequence, h.NumRecords, nowish(h.BaseTimestamp), nowish(h.MaxTimestamp))
		if h.Compression() == protocol.CodecNone {
			fmt.Fprintf(&b, " %d bytes", len(batch))
		}
		recs, err := protocol.Records(batch)
		if err != nil {
			fmt.Fprintf(&b, " %v]", err)
			continue
		}
		for _, r := range recs {
			fmt.Fprintf(&b, " %d:%q=%q@%d", r.OffsetDelta, r.Key, r.Value, r.TimestampDelta)
		}
		b.WriteString("]")
	}
	return []byte(b.String())
}

// pfAfter makes an answer comparable: append times "now" as 1, batches
// summarised, and each topic entry's position and its partitions' order
// kept in its name, so that the order of answers (which the comparison
// sorts away) shows.
func pfAfter(_ *corpusEnv, resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		for i := range r.Topics {
			t := &r.Topics[i]
			var order []int32
			for _, p := range t.Partitions {
				order = append(order, p.Partition)
			}
			t.Topic = fmt.Sprintf("%d:%s %v", i, t.Topic, order)
			for j := range t.Partitions {
				t.Partitions[j].LogAppendTime = nowish(t.Partitions[j].LogAppendTime)
			}
		}
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			t := &r.Topics[i]
			var order []int32
			for _, p := range t.Partitions {
				order = append(order, p.Partition)
			}
			t.Topic = fmt.Sprintf("%d:%s %v", i, t.Topic, order)
			for j := range t.Partitions {
				t.Partitions[j].RecordBatches = summariseBatches(t.Partitions[j].RecordBatches)
			}
		}
	}
}

// pfDump writes the normalised answer to $PF_DUMP/<target>/<case>.json
// when PF_DUMP is set: the corpus logs only a short prefix of each.
func pfDump(e *corpusEnv, name string, resp kmsg.Response) {
	dir := os.Getenv("PF_DUMP")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, e.tg.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	doc := normalise(resp)
	if t, ok := doc.(map[string]any)["Topics"].([]any); ok {
		for _, x := range t {
			for _, p := range x.(map[string]any)["Partitions"].([]any) {
				if m := p.(map[string]any); m["RecordBatches"] != nil {
					raw, _ := base64.StdEncoding.DecodeString(m["RecordBatches"].(string))
					m["RecordBatches"] = string(raw)
				}
			}
		}
	}
	b, _ := json.MarshalIndent(doc, "", " ")
	_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".json"), b, 0o644)
}

// prodFetchCases are the produce/fetch detail cases at the newest common
// versions (and at v3/v6 where Produce's answer depends on the version).
func prodFetchCases(versions map[int16][2]int16) []corpusCase {
	pr, okP := versions[kmsg.Produce.Int16()]
	fr, okF := versions[kmsg.Fetch.Int16()]
	if !okP || !okF || fr[1] < 12 {
		return nil
	}
	pv, fv := pr[1], fr[1]
	old := time.Now().Add(-48 * time.Hour).UnixMilli()
	future := time.Now().Add(3 * time.Hour).UnixMilli()
	now := func() int64 { return time.Now().UnixMilli() }
	produce := func(v int16, topic string, acks int16, b func(e *corpusEnv) []byte) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request { return produceReq(v, topic, 0, acks, b(e)) }
	}
	fixed := func(b []byte) func(*corpusEnv) []byte { return func(*corpusEnv) []byte { return b } }
	idem := func(seq int32, vals ...string) func(e *corpusEnv) []byte {
		return func(e *corpusEnv) []byte { return simpleBatchWith(pf(e).pid, 0, seq, 0, vals...) }
	}
	fetch := func(v int16, maxBytes int32, parts ...fetchAt) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request { return pfFetchReq(v, e, maxBytes, parts...) }
	}
	withPartitionMax := func(f func(e *corpusEnv) kmsg.Request, max int32) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := f(e).(*kmsg.FetchRequest)
			for i := range req.Topics {
				for j := range req.Topics[i].Partitions {
					req.Topics[i].Partitions[j].PartitionMaxBytes = max
				}
			}
			return req
		}
	}
	const batchSize = 85 // each of pf-fetch's batches: 61 + two records of 12 bytes
	cases := []corpusCase{
		// LogAppendTime: set on append, returned, and seen by consumers.
		{name: "Produce/log-append-time", settle: pfSetup, req: produce(pv, "pf-lat", -1, fixed(simpleBatch("l0", "l1")))},
		{name: "Produce/log-append-time-acks-1", req: produce(pv, "pf-lat", 1, fixed(simpleBatch("l2")))},
		{name: "Produce/log-append-time-corrupt-crc", req: produce(pv, "pf-lat", 1, fixed(func() []byte {
			b := simpleBatch("c")
			b[len(b)-1] ^= 0xff
			return b
		}()))},
		{name: "Produce/log-append-time-by-producer", req: produce(pv, "pf-lat", 1, fixed(patched(simpleBatch("p"), func(b []byte) { b[22] |= 0x08 })))},
		{name: "Produce/create-time-with-log-append-attribute", req: produce(pv, "pf-dup", 1, fixed(patched(simpleBatch("p"), func(b []byte) { b[22] |= 0x08 })))},
		{name: "Fetch/log-append-time", req: fetch(fv, 0, fetchAt{"pf-lat", 0, 0, -1})},
		{name: "Produce/log-append-time-gzip-topic", req: produce(pv, "pf-lat-gzip", -1, fixed(simpleBatch("g0", "g1")))},
		{name: "Fetch/log-append-time-gzip-topic", req: fetch(fv, 0, fetchAt{"pf-lat-gzip", 0, 0, -1})},
		// An idempotent retry answers the first append's offset.
		{name: "Produce/idempotent", req: produce(pv, "pf-lat", -1, idem(0, "i0", "i1"))},
		{name: "Produce/idempotent-retry", req: produce(pv, "pf-lat", -1, idem(0, "i0", "i1"))},
		{name: "Produce/idempotent-create-time", req: produce(pv, "pf-dup", -1, idem(0, "i0"))},
		{name: "Produce/idempotent-create-time-retry", req: produce(pv, "pf-dup", -1, idem(0, "i0"))},
		{name: "Produce/idempotent-out-of-order", req: produce(pv, "pf-dup", -1, idem(5, "i5"))},
		// Per-record errors.
		{name: "Produce/compacted-one-record-without-key", req: produce(pv, "pf-compact", -1, fixed(keyed(1700000000000, protocol.CodecNone, "k0", "v0", "", "v1", "k2", "v2")))},
		{name: "Produce/compacted-no-keys", req: produce(pv, "pf-compact", -1, fixed(keyed(1700000000000, protocol.CodecNone, "", "a", "", "b", "", "c", "", "d")))},
		{name: "Produce/compacted-no-keys-gzip", req: produce(pv, "pf-compact", -1, fixed(keyed(1700000000000, protocol.CodecGzip, "", "a", "k", "b")))},
		{name: "Produce/compacted-keyed", req: produce(pv, "pf-compact", -1, fixed(keyed(1700000000000, protocol.CodecNone, "k0", "v0")))},
		{name: "Produce/timestamp-too-old", req: produce(pv, "pf-ts", -1, fixed(keyed(old, protocol.CodecNone, "", "a", "", "b")))},
		{name: "Produce/timestamp-too-new", req: produce(pv, "pf-ts", -1, func(*corpusEnv) []byte { return keyed(future, protocol.CodecNone, "", "a") })},
		{name: "Produce/timestamp-too-new-default-topic", req: produce(pv, "pf-dup", -1, func(*corpusEnv) []byte { return keyed(future, protocol.CodecNone, "", "a") })},
		{name: "Produce/timestamp-in-range", req: produce(pv, "pf-ts", -1, func(*corpusEnv) []byte { return keyed(now(), protocol.CodecNone, "", "a") })},
		{name: "Produce/nonzero-base-offset", req: produce(pv, "pf-dup", -1, fixed(patched(simpleBatch("o"), func(b []byte) { binary.BigEndian.PutUint64(b, 7) })))},
		{name: "Produce/last-offset-delta-mismatch", req: produce(pv, "pf-dup", -1, fixed(patched(simpleBatch("a", "b"), func(b []byte) { binary.BigEndian.PutUint32(b[23:], 5) })))},
		{name: "Produce/record-count-mismatch", req: produce(pv, "pf-dup", -1, fixed(patched(simpleBatch("a", "b"), func(b []byte) { binary.BigEndian.PutUint32(b[57:], 3) })))},
		{name: "Produce/idempotent-negative-sequence", req: produce(pv, "pf-dup", -1, func(e *corpusEnv) []byte { return simpleBatchWith(pf(e).pid, 0, -1, 0, "s") })},
		{name: "Produce/two-batches", req: produce(pv, "pf-dup", -1, fixed(append(simpleBatch("x"), simpleBatch("y")...)))},
		{name: "Produce/no-records", req: produce(pv, "pf-dup", -1, fixed([]byte{}))},
		{name: "Produce/magic-v0", req: produce(pv, "pf-dup", -1, fixed(legacyMessage(0, "m0")))},
		{name: "Produce/magic-v1", req: produce(pv, "pf-dup", -1, fixed(legacyMessage(1, "m1")))},
		{name: fmt.Sprintf("Produce/v%d-magic-v1", pr[0]), req: produce(pr[0], "pf-dup", -1, fixed(legacyMessage(1, "m1")))},
		{name: "Produce/magic-v3", req: produce(pv, "pf-dup", -1, fixed(patched(simpleBatch("m3"), func(b []byte) { b[16] = 3 })))},
		{name: "Produce/min-isr-above-replication-factor", req: produce(pv, "pf-minisr", -1, fixed(simpleBatch("n")))},
		{name: "Produce/corrupt-crc-log-start", req: produce(pv, "pf-dup", -1, fixed(func() []byte {
			b := simpleBatch("c")
			b[len(b)-1] ^= 0xff
			return b
		}()))},
		// Recompression to the topic's compression.type.
		{name: "Produce/to-gzip-topic", req: produce(pv, "pf-gzip", -1, fixed(keyed(1700000000000, protocol.CodecNone, "k", "a", "", "b")))},
		{name: "Produce/snappy-to-gzip-topic", req: produce(pv, "pf-gzip", -1, fixed(keyed(1700000000000, protocol.CodecSnappy, "k", "c")))},
		{name: "Fetch/gzip-topic", req: fetch(fv, 0, fetchAt{"pf-gzip", 0, 0, -1})},
		{name: "Produce/gzip-to-uncompressed-topic", req: produce(pv, "pf-none", -1, fixed(keyed(1700000000000, protocol.CodecGzip, "k", "a", "", "b")))},
		{name: "Fetch/uncompressed-topic", req: fetch(fv, 0, fetchAt{"pf-none", 0, 0, -1})},
		// Two entries for one partition.
		{name: "Produce/same-partition-twice", req: func(*corpusEnv) kmsg.Request {
			req := produceReq(pv, "pf-dup", 0, -1, simpleBatch("d0"))
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = 0, simpleBatch("d1", "d2")
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
			rp.Partition, rp.Records = 1, simpleBatch("e0")
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
			return req
		}},
		{name: "Produce/two-partitions", req: func(*corpusEnv) kmsg.Request {
			req := produceReq(pv, "pf-dup", 0, -1, simpleBatch("w0"))
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = 1, simpleBatch("w1")
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
			return req
		}},
		{name: "Produce/two-partitions-reversed", req: func(*corpusEnv) kmsg.Request {
			req := produceReq(pv, "pf-dup", 1, -1, simpleBatch("r1"))
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = 0, simpleBatch("r0")
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
			return req
		}},
		{name: "Produce/same-topic-twice", req: func(*corpusEnv) kmsg.Request {
			req := produceReq(pv, "pf-dup", 1, -1, simpleBatch("t0"))
			other := produceReq(pv, "pf-dup", 1, -1, simpleBatch("t1", "t2"))
			req.Topics = append(req.Topics, other.Topics[0])
			return req
		}},
		{name: "Produce/same-partition-twice-one-invalid", req: func(*corpusEnv) kmsg.Request {
			req := produceReq(pv, "pf-dup", 1, -1, simpleBatch("u0"))
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = 1, legacyMessage(1, "u1")
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
			return req
		}},
		{name: "Fetch/after-duplicates", req: fetch(fv, 0, fetchAt{"pf-dup", 0, 0, -1}, fetchAt{"pf-dup", 1, 0, -1})},
		{name: "Fetch/same-partition-twice", req: func(e *corpusEnv) kmsg.Request {
			req := pfFetchReq(fv, e, 0, fetchAt{"pf-fetch", 0, 0, -1})
			rp := req.Topics[0].Partitions[0]
			rp.FetchOffset = 4
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
			return req
		}},
		{name: "Fetch/same-topic-twice", req: fetch(fv, 0, fetchAt{"pf-fetch", 0, 4, -1}, fetchAt{"pf-fetch", 1, 2, -1}, fetchAt{"pf-fetch", 0, 0, -1})},
		{name: "Fetch/v12-same-partition-twice", req: fetch(12, 0, fetchAt{"pf-fetch", 0, 2, -1}, fetchAt{"pf-fetch", 0, 4, -1})},
		// MaxBytes and PartitionMaxBytes.
		{name: "Fetch/max-bytes-below-first-batch", req: fetch(fv, 10, fetchAt{"pf-fetch", 0, 0, -1})},
		{name: "Fetch/partition-max-bytes-below-first-batch", req: withPartitionMax(fetch(fv, 0, fetchAt{"pf-fetch", 0, 0, -1}), 10)},
		{name: "Fetch/max-bytes-mid-batch", req: fetch(fv, batchSize+40, fetchAt{"pf-fetch", 0, 0, -1})},
		{name: "Fetch/partition-max-bytes-mid-batch", req: withPartitionMax(fetch(fv, 0, fetchAt{"pf-fetch", 0, 0, -1}, fetchAt{"pf-fetch", 1, 2, -1}), batchSize+40)},
		{name: "Fetch/max-bytes-two-partitions", req: fetch(fv, batchSize+40, fetchAt{"pf-fetch", 0, 0, -1}, fetchAt{"pf-fetch", 1, 0, -1})},
		{name: "Fetch/max-bytes-partial-second-partition", req: fetch(fv, 3*batchSize+40, fetchAt{"pf-fetch", 0, 0, -1}, fetchAt{"pf-fetch", 1, 0, -1})},
		{name: "Fetch/max-bytes-exact-batches", req: fetch(fv, 2*batchSize, fetchAt{"pf-fetch", 0, 0, -1}, fetchAt{"pf-fetch", 1, 0, -1})},
		{name: "Fetch/max-bytes-mid-record", req: fetch(fv, batchSize, fetchAt{"pf-fetch", 0, 1, -1})},
		{name: "Fetch/max-bytes-zero", req: func(e *corpusEnv) kmsg.Request {
			req := pfFetchReq(fv, e, 0, fetchAt{"pf-fetch", 0, 0, -1}, fetchAt{"pf-fetch", 1, 0, -1})
			req.MaxBytes = 0
			return req
		}},
		{name: "Fetch/partition-max-bytes-zero", req: withPartitionMax(fetch(fv, 0, fetchAt{"pf-fetch", 0, 0, -1}, fetchAt{"pf-fetch", 1, 0, -1}), 0)},
		// A consumer's LastFetchedEpoch (v12+).
		{name: "Fetch/last-fetched-epoch-current", req: fetch(fv, 0, fetchAt{"pf-fetch", 0, 2, 0})},
		{name: "Fetch/last-fetched-epoch-past-end", req: fetch(fv, 0, fetchAt{"pf-fetch", 0, 100, 0})},
		{name: "Fetch/after-diverging-epoch", req: fetch(fv, 1, fetchAt{"pf-fetch", 0, 0, -1})},
		{name: "Fetch/last-fetched-epoch-future", req: fetch(fv, 0, fetchAt{"pf-fetch", 0, 2, 7})},
		{name: "Fetch/after-unknown-epoch", req: fetch(fv, 1, fetchAt{"pf-fetch", 0, 0, -1})},
		{name: "Fetch/last-fetched-epoch-below-log-start", req: fetch(fv, 0, fetchAt{"pf-fetch", 1, -5, 0})},
		{name: "Fetch/after-below-log-start", req: fetch(fv, 1, fetchAt{"pf-fetch", 0, 0, -1})},
		{name: "Fetch/v12-last-fetched-epoch-past-end", req: fetch(12, 0, fetchAt{"pf-fetch", 0, 9, 0})},
		{name: "Fetch/last-fetched-epoch-two-partitions", req: fetch(fv, 0, fetchAt{"pf-fetch", 0, 100, 0}, fetchAt{"pf-fetch", 1, 0, -1})},
		{name: "Fetch/after-two-partitions", req: fetch(fv, 1, fetchAt{"pf-fetch", 0, 0, -1})},
	}
	if pr[0] <= 6 {
		cases = append(cases, corpusCase{name: fmt.Sprintf("Produce/v%d-zstd", pr[0]), req: produce(pr[0], "pf-dup", 1, fixed(keyed(1700000000000, protocol.CodecZstd, "", "z")))})
	}
	cases = append(cases, corpusCase{name: "Produce/v7-zstd", req: produce(max(7, pr[0]), "pf-gzip", -1, fixed(keyed(1700000000000, protocol.CodecZstd, "", "z")))},
		corpusCase{name: "Fetch/gzip-topic-after-zstd", req: fetch(fv, 0, fetchAt{"pf-gzip", 0, 2, -1})})
	for i := range cases {
		name := cases[i].name
		cases[i].after = func(e *corpusEnv, resp kmsg.Response) {
			pfAfter(e, resp)
			pfDump(e, name, resp)
		}
	}
	return cases
}
