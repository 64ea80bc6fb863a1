package server

// What a leader checks and rewrites in a produced batch before appending
// it, in Kafka 4.4's order (KafkaApis, UnifiedLog.analyzeAndValidateRecords,
// LogValidator), and what each refusal answers:
//
//   - no batch, a magic v0/v1 first batch (Produce v3+ carries v2 only),
//     more than one batch, or zstd below Produce v7: INVALID_RECORD /
//     UNSUPPORTED_COMPRESSION_TYPE, with no log start offset;
//   - per batch: a base offset other than 0 (INVALID_RECORD), larger than
//     max.message.bytes (MESSAGE_TOO_LARGE), a bad CRC (CORRUPT_MESSAGE);
//   - an offset range that disagrees with the record
//     count, a control batch, an idempotent batch without a sequence, badly
//     framed records: INVALID_RECORD;
//   - per record, each named in RecordErrors (batch index and message) with
//     a summary in ErrorMessage: a record without a key on a compacted
//     topic (INVALID_RECORD), a CreateTime timestamp outside
//     message.timestamp.before/after.max.ms of now, or a LogAppendTime
//     timestamp type set by the producer on a LogAppendTime topic
//     (INVALID_TIMESTAMP for the whole batch if any record has one).
//
// Only the per-record refusals carry an ErrorMessage; every refusal after
// the first group but MESSAGE_TOO_LARGE and CORRUPT_MESSAGE carries the
// partition's log start offset, as Kafka's.
//
// Timestamps are checked against the cluster clock, or the wall clock when
// that is later: a manual clock set in the past (tests often start one in
// 2023) must not refuse every record a client stamps with the real time.
//
// An accepted batch is stored as Kafka stores it: stamped with the append
// time on a LogAppendTime topic, with the CreateTime type and its records'
// largest timestamp otherwise, and recompressed when the topic's
// compression.type names another codec than the producer's (at the
// topic's compression.<codec>.level).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producePolicy is a topic's settings that shape what a Produce stores.
type producePolicy struct {
	before, after int64 // message.timestamp.before/after.max.ms
	// codec is compression.type's codec; keep: "producer", store as sent.
	codec protocol.Codec
	keep  bool
	level int // compression.<codec>.level, or protocol.DefaultLevel
}

// resolveProducePolicy reads a topic's configs over the broker defaults.
func resolveProducePolicy(cfg map[string]string, bs *brokerSettings) producePolicy {
	pp := producePolicy{before: math.MaxInt64, after: math.MaxInt64, level: protocol.DefaultLevel}
	if n, err := strconv.ParseInt(logValue(cfg, bs, "message.timestamp.before.max.ms"), 10, 64); err == nil {
		pp.before = n
	}
	if n, err := strconv.ParseInt(logValue(cfg, bs, "message.timestamp.after.max.ms"), 10, 64); err == nil {
		pp.after = n
	}
	switch logValue(cfg, bs, "compression.type") {
	case "uncompressed", "none":
		pp.codec = protocol.CodecNone
	case "gzip":
		pp.codec = protocol.CodecGzip
	case "snappy":
		pp.codec = protocol.CodecSnappy
	case "lz4":
		pp.codec = protocol.CodecLZ4
	case "zstd":
		pp.codec = protocol.CodecZstd
	default:
		pp.keep = true
	}
	if !pp.keep && pp.codec != protocol.CodecNone && pp.codec != protocol.CodecSnappy {
		if n, err := strconv.Atoi(logValue(cfg, bs, "compression."+pp.codec.String()+".level")); err == nil {
			pp.level = n
		}
	}
	return pp
}

// topicLogAppendTime says whether a topic's message.timestamp.type (or the
// broker's log.message.timestamp.type) is LogAppendTime.
func topicLogAppendTime(cfg map[string]string, bs *brokerSettings) bool {
	return logValue(cfg, bs, "message.timestamp.type") == "LogAppendTime"
}

// produceRefusal is why a partition's batch was refused.
type produceRefusal struct {
	code int16
	// logStart: the answer carries the partition's log start offset.
	logStart bool
	// message and records: per-record errors (RecordErrors, ErrorMessage).
	message string
	records []kmsg.ProduceResponseTopicPartitionErrorRecord
	reason  string // for the log only
}

// refuseProduce is a refusal without per-record errors.
func refuseProduce(code int16, logStart bool, reason string) *produceRefusal {
	return &produceRefusal{code: code, logStart: logStart, reason: reason}
}

// requestLevelRefusal is KafkaApis' check of a partition's records before
// any other (ProduceRequest.validateRecords): nil if they may go on.
func requestLevelRefusal(version int16, records []byte) *produceRefusal {
	if len(records) < 12 {
		return refuseProduce(kerr.InvalidRecord.Code, false, "no whole record batch")
	}
	first := int32(uint32(records[8])<<24 | uint32(records[9])<<16 | uint32(records[10])<<8 | uint32(records[11]))
	if first < 14 { // where the whole-request check did not look (after a transactional batch)
		return refuseProduce(kerr.CorruptMessage.Code, false, fmt.Sprintf("Record size %d is less than the minimum record overhead (14)", first))
	}
	if len(records) < 17 || len(records) < 12+int(first) {
		return refuseProduce(kerr.InvalidRecord.Code, false, "no whole record batch")
	}
	if m := int8(records[16]); m < 0 || m > 2 {
		return refuseProduce(kerr.CorruptMessage.Code, false, fmt.Sprintf("Invalid magic found in record: %d", m))
	}
	if records[16] != 2 {
		return refuseProduce(kerr.InvalidRecord.Code, false, fmt.Sprintf("Produce v%d carries magic v2 batches only, not v%d", version, records[16]))
	}
	// Bytes after the batch count only if they hold another whole batch,
	// as Kafka's batch iterator sees them.
	if rest := records[12+int(first):]; len(rest) >= 12 {
		next := int32(uint32(rest[8])<<24 | uint32(rest[9])<<16 | uint32(rest[10])<<8 | uint32(rest[11]))
		if next < 14 {
			return refuseProduce(kerr.CorruptMessage.Code, false, fmt.Sprintf("Record size %d is less than the minimum record overhead (14)", next))
		}
		if len(rest) >= 12+int(next) {
			return refuseProduce(kerr.InvalidRecord.Code, false, "Produce requests must contain exactly one record batch per partition")
		}
	}
	if version < 7 && len(records) > 22 && protocol.Codec(records[22]&7) == protocol.CodecZstd {
		return refuseProduce(kerr.UnsupportedCompressionType.Code, false, fmt.Sprintf("Produce v%d may not use zstd", version))
	}
	return nil
}

// corruptFrame is the check Kafka makes of a partition's first batch while
// it looks for transactional records, before anything else: a size below
// the smallest message or an unknown magic fails the whole request with
// CORRUPT_MESSAGE and this message on every partition.
func corruptFrame(records []byte) string {
	if len(records) < 12 {
		return ""
	}
	size := int32(uint32(records[8])<<24 | uint32(records[9])<<16 | uint32(records[10])<<8 | uint32(records[11]))
	if size < 14 {
		return fmt.Sprintf("Record size %d is less than the minimum record overhead (14)", size)
	}
	if len(records) < 17 {
		return ""
	}
	if m := int8(records[16]); m < 0 || m > 2 {
		return fmt.Sprintf("Invalid magic found in record: %d", m)
	}
	return ""
}

// partitionName is a topic partition as Kafka's messages name it
// ("orders-0"), built only when a message needs it: every produced
// partition passes one to validateProduced, few are refused.
type partitionName struct {
	topic     string
	partition int32
}

func (n partitionName) String() string { return n.topic + "-" + strconv.Itoa(int(n.partition)) }

// validateProduced checks records (after requestLevelRefusal) for topic
// partition tp and, when they are accepted, describes them in b, rewritten
// as they are to be stored. now is the append time in milliseconds (the
// cluster clock), checkNow the time timestamps are checked against.
func validateProduced(records []byte, ts *topicSettings, tp partitionName, now, checkNow int64, b *replication.Batch) *produceRefusal {
	// Every batch: base offset, size, CRC (analyzeAndValidateRecords).
	n := 0
	for rest := records; len(rest) > 0; n++ {
		h, err := protocol.ParseBatchHeader(rest)
		if err != nil {
			if n > 0 {
				break // a partial batch at the end: Kafka's iterator stops there
			}
			return refuseProduce(batchErrorCode(err), batchErrorCode(err) != kerr.CorruptMessage.Code, err.Error())
		}
		batch := rest[:h.Size():h.Size()]
		rest = rest[h.Size():]
		if h.BaseOffset != 0 {
			return refuseProduce(kerr.InvalidRecord.Code, true, fmt.Sprintf("The baseOffset of the record batch in the append to %s should be 0, but it is %d", tp, h.BaseOffset))
		}
		if len(batch) > int(ts.maxBytes) {
			return refuseProduce(kerr.MessageTooLarge.Code, false, fmt.Sprintf("The record batch size in the append to %s is %d bytes which exceeds the maximum configured value of %d.", tp, len(batch), ts.maxBytes))
		}
		if err := h.VerifyCRC(batch); err != nil {
			return refuseProduce(kerr.CorruptMessage.Code, false, err.Error())
		}
	}
	h, _ := protocol.ParseBatchHeader(records)
	raw := records[:h.Size():h.Size()] // nothing appended to it may reach the frame's next partition
	// validateBatch.
	if h.NumRecords <= 0 || h.LastOffsetDelta+1 != h.NumRecords {
		return refuseProduce(kerr.InvalidRecord.Code, true, fmt.Sprintf("Inconsistent batch offset range [0, %d] and count of records %d in topic partition %s", h.LastOffsetDelta, h.NumRecords, tp))
	}
	if h.IsControl() {
		return refuseProduce(kerr.InvalidRecord.Code, true, "Clients are not allowed to write control records in topic partition "+tp.String())
	}
	if h.ProducerID >= 0 && h.BaseSequence < 0 {
		return refuseProduce(kerr.InvalidRecord.Code, true, fmt.Sprintf("Invalid sequence number %d in record batch with producerId %d in topic partition %s", h.BaseSequence, h.ProducerID, tp))
	}
	// The records, one by one where a rule needs them.
	pp := &ts.produce
	maxTs := h.MaxTimestamp
	var bad *produceRefusal
	invalidTs := func(t int64) bool { return t != -1 && (checkNow-t > pp.before || t-checkNow > pp.after) }
	scan := ts.compact || h.LogAppendTime() || (!ts.logAppendTime && (invalidTs(h.BaseTimestamp) || invalidTs(h.MaxTimestamp)))
	var err error
	if scan {
		maxTs = -1
		err = h.ScanRecords(raw, func(i int32, r *protocol.RecordInfo) {
			t := h.BaseTimestamp + r.TimestampDelta
			if h.LogAppendTime() {
				t = h.MaxTimestamp
			}
			maxTs = max(maxTs, t)
			var msg string
			timestampErr := false
			switch {
			case ts.compact && r.KeyNull:
				msg = "Compacted topic cannot accept message without key in topic partition " + tp.String()
			case !ts.logAppendTime && t != -1:
				if invalidTs(t) {
					msg = fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]", t, r.OffsetDelta, checkNow-pp.before, checkNow+pp.after)
					timestampErr = true
				}
			case h.LogAppendTime():
				msg = fmt.Sprintf("Invalid timestamp type in message DefaultRecord(offset=%d, timestamp=%d, key=%d bytes, value=%d bytes). Producer should not set timestamp type to LogAppendTime.", r.OffsetDelta, t, r.KeyLen, r.ValueLen)
				timestampErr = true
			}
			if msg == "" {
				return
			}
			if bad == nil {
				bad = &produceRefusal{code: kerr.InvalidRecord.Code, logStart: true}
			}
			if timestampErr {
				bad.code = kerr.InvalidTimestamp.Code
			}
			e := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			e.RelativeOffset, e.ErrorMessage = i, kmsg.StringPtr(msg)
			bad.records = append(bad.records, e)
		})
	} else {
		err = h.ValidateRecords(raw)
	}
	if err != nil {
		code := batchErrorCode(err)
		return refuseProduce(code, code != kerr.CorruptMessage.Code, err.Error())
	}
	if bad != nil {
		bad.message = recordErrorsMessage(bad)
		bad.reason = bad.message
		return bad
	}
	*b = replication.Batch{
		Raw:           raw,
		BaseOffset:    0,
		LastOffset:    int64(h.LastOffsetDelta),
		MaxTimestamp:  maxTs,
		ProducerID:    h.ProducerID,
		ProducerEpoch: h.ProducerEpoch,
		BaseSequence:  h.BaseSequence,
		NumRecords:    h.NumRecords,
		Transactional: h.IsTransactional(),
	}
	if !pp.keep && pp.codec != h.Compression() {
		return recompress(b, &h, ts, tp, now)
	}
	switch {
	case ts.logAppendTime:
		protocol.SetLogAppendTime(raw, now)
		b.MaxTimestamp = now
	case h.LogAppendTime() || maxTs != h.MaxTimestamp:
		protocol.SetCreateTime(raw, maxTs)
	}
	return nil
}

// recordErrorsMessage is the ErrorMessage Kafka gives with RecordErrors.
func recordErrorsMessage(r *produceRefusal) string {
	if r.code == kerr.InvalidTimestamp.Code {
		return "One or more records have been rejected due to invalid timestamp"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [", len(r.records))
	for i, e := range r.records[:min(len(r.records), 3)] {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "RecordError(batchIndex=%d, message='%s')", e.RelativeOffset, *e.ErrorMessage)
	}
	sb.WriteString("]")
	return sb.String()
}

// recompress rebuilds b with the topic's codec, as Kafka's LogValidator
// does when compression.type is not the producer's: same producer fields
// and records, the first record's timestamp as the base, the append time as
// the maximum on a LogAppendTime topic. The result must still fit
// max.message.bytes.
func recompress(b *replication.Batch, h *protocol.BatchHeader, ts *topicSettings, tp partitionName, now int64) *produceRefusal {
	recs, err := protocol.Records(b.Raw)
	if err != nil {
		return refuseProduce(batchErrorCode(err), true, err.Error())
	}
	stamp := func(r *protocol.Record) int64 {
		if h.LogAppendTime() {
			return h.MaxTimestamp
		}
		return h.BaseTimestamp + r.TimestampDelta
	}
	base := stamp(&recs[0])
	for i := range recs {
		recs[i].TimestampDelta = stamp(&recs[i]) - base
	}
	nh := protocol.BatchHeader{
		ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, BaseSequence: h.BaseSequence,
		BaseTimestamp: base, PartitionLeaderEpoch: -1,
	}
	if h.IsTransactional() {
		nh.Attributes |= 0x10
	}
	if ts.logAppendTime {
		nh.Attributes |= 0x08
		nh.MaxTimestamp = now
	}
	raw, err := protocol.BuildBatchLevel(nh, ts.produce.codec, ts.produce.level, recs)
	if err != nil {
		return refuseProduce(kerr.UnknownServerError.Code, true, err.Error())
	}
	if len(raw) > int(ts.maxBytes) {
		return refuseProduce(kerr.MessageTooLarge.Code, false, fmt.Sprintf("Message batch size is %d bytes in append to partition %s which exceeds the maximum configured size of %d.", len(raw), tp, ts.maxBytes))
	}
	nh2, _ := protocol.ParseBatchHeader(raw)
	b.Raw, b.MaxTimestamp = raw, nh2.MaxTimestamp
	return nil
}
