package protocol

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BuildBatch builds a valid v2 batch from h, codec and records, for tests,
// control batches and internal topics.
//
// From h it takes BaseOffset, PartitionLeaderEpoch, the attribute bits other
// than the codec, BaseTimestamp, ProducerID, ProducerEpoch and BaseSequence.
// It computes the rest so that the batch is always consistent: Magic 2,
// Length, CRC, the codec bits, NumRecords = len(records), offset deltas
// 0..n-1 (Record.OffsetDelta is ignored) with LastOffsetDelta = n-1, and for
// create-time batches MaxTimestamp = BaseTimestamp + the largest
// TimestampDelta. h.LastOffsetDelta is kept for an empty batch and
// h.MaxTimestamp for an empty or LogAppendTime one.
func BuildBatch(h BatchHeader, codec Codec, records []Record) ([]byte, error) {
	return buildBatch(h, codec, records, false)
}

// RebuildBatch is BuildBatch for the log cleaner: it keeps each record's
// OffsetDelta (so the offsets the cleaner removed stay gaps) and
// h.LastOffsetDelta (so the producer's last sequence survives, as Kafka's
// cleaner keeps the original last offset), with records in increasing
// offset-delta order below it.
func RebuildBatch(h BatchHeader, codec Codec, records []Record) ([]byte, error) {
	return buildBatch(h, codec, records, true)
}

func buildBatch(h BatchHeader, codec Codec, records []Record, keepDeltas bool) ([]byte, error) {
	return buildBatchLevel(h, codec, DefaultLevel, records, keepDeltas)
}

func buildBatchLevel(h BatchHeader, codec Codec, level int, records []Record, keepDeltas bool) ([]byte, error) {
	if !codec.valid() {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedCompression, codec)
	}
	if len(records) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d records in one batch", ErrInvalidRecord, len(records))
	}
	var raw []byte
	for i := range records {
		delta := int32(i)
		if keepDeltas {
			delta = records[i].OffsetDelta
		}
		raw = appendRecord(raw, &records[i], delta)
	}
	body := raw
	if codec != CodecNone {
		var err error
		if body, err = compressLevel(codec, level, raw); err != nil {
			return nil, err
		}
	}
	if len(body) > math.MaxInt32-BatchHeaderLen {
		return nil, fmt.Errorf("%w: batch of %d bytes", ErrInvalidRecord, len(body))
	}

	h.Magic = 2
	h.Length = int32(BatchHeaderLen - batchLengthOverhead + len(body))
	h.Attributes = h.Attributes&^attrCodecMask | int16(codec)
	h.NumRecords = int32(len(records))
	if n := len(records); n > 0 {
		if !keepDeltas {
			h.LastOffsetDelta = int32(n - 1)
		}
		if !h.LogAppendTime() {
			maxDelta := records[0].TimestampDelta
			for i := range records {
				maxDelta = max(maxDelta, records[i].TimestampDelta)
			}
			h.MaxTimestamp = h.BaseTimestamp + maxDelta
		}
	}

	b := make([]byte, BatchHeaderLen, BatchHeaderLen+len(body))
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(b[offLength:], uint32(h.Length))
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = byte(h.Magic)
	binary.BigEndian.PutUint16(b[offAttributes:], uint16(h.Attributes))
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	binary.BigEndian.PutUint64(b[offBaseTimestamp:], uint64(h.BaseTimestamp))
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint64(b[offProducerID:], uint64(h.ProducerID))
	binary.BigEndian.PutUint16(b[offProducerEpoch:], uint16(h.ProducerEpoch))
	binary.BigEndian.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
	binary.BigEndian.PutUint32(b[offNumRecords:], uint32(h.NumRecords))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[offCRC:], batchCRC(b))
	return b, nil
}

// Control record types (the key's type field).
const (
	controlAbort  = 0
	controlCommit = 1
)

// BuildControlBatch builds the transaction marker a coordinator writes to
// end a transaction: a transactional control batch of one record whose key
// is version int16 0 + type int16 (0 abort, 1 commit) and whose value is
// version int16 0 + coordinatorEpoch int32. BaseOffset is 0 and
// PartitionLeaderEpoch -1 (unset) until the leader assigns them on append.
func BuildControlBatch(producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, timestamp int64) []byte {
	typ := uint16(controlAbort)
	if commit {
		typ = controlCommit
	}
	key := binary.BigEndian.AppendUint16([]byte{0, 0}, typ)
	value := binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(coordinatorEpoch))
	b, err := BuildBatch(BatchHeader{
		PartitionLeaderEpoch: -1,
		Attributes:           attrTransactional | attrControl,
		BaseTimestamp:        timestamp,
		ProducerID:           producerID,
		ProducerEpoch:        producerEpoch,
		BaseSequence:         -1, // markers carry no sequence
	}, CodecNone, []Record{{Key: key, Value: value}})
	if err != nil {
		panic("protocol: building a control batch: " + err.Error()) // cannot fail without compression
	}
	return b
}

// appendRecord appends r in wire form with the given offset delta.
func appendRecord(dst []byte, r *Record, offsetDelta int32) []byte {
	n := 1 + varintLen(r.TimestampDelta) + varintLen(int64(offsetDelta)) +
		bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(n))
	dst = append(dst, 0) // attributes
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(offsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		dst = binary.AppendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytes(dst, h.Value)
	}
	return dst
}

// appendBytes appends a varint-length-prefixed byte string, nil as null.
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1 // varint -1
	}
	return varintLen(int64(len(b))) + len(b)
}

// varintLen is the size of v as a zigzag varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// AttrTransactional is the attributes bit of a transactional batch, for
// coordinators that build one (transactional offset commits).
const AttrTransactional = attrTransactional
