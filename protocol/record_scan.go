package protocol

import (
	"encoding/binary"
	"fmt"
)

// What a broker looks at in each record of a produced batch (Kafka's
// LogValidator: keys on compacted topics, timestamps against
// message.timestamp.before/after.max.ms), and the in-place rewrite of a
// batch's timestamp type.

// RecordInfo is one record as ScanRecords sees it: its fields' sizes and
// deltas, not their bytes.
type RecordInfo struct {
	OffsetDelta    int32
	TimestampDelta int64
	KeyNull        bool
	KeyLen         int
	ValueLen       int
}

// ScanRecords checks the records of the batch at the start of batch as
// ValidateRecords does (same errors) and calls visit for each, in order.
// Compressed batches are decompressed once, into a pooled buffer.
func (h *BatchHeader) ScanRecords(batch []byte, visit func(i int32, r *RecordInfo)) error {
	data, pooled, err := h.recordsData(batch)
	if err != nil {
		return err
	}
	if pooled != nil {
		defer putBuf(pooled)
	}
	var info RecordInfo
	for i := range h.NumRecords {
		n, delta, err := readRecord(data, nil)
		if err != nil {
			return fmt.Errorf("record %d of %d: %w", i, h.NumRecords, err)
		}
		if delta != i {
			return fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, delta)
		}
		// readRecord checked every field; read the few visit needs.
		_, m := varint32(data)
		rec := data[m:n]
		p := 1
		ts, k := binary.Varint(rec[p:])
		p += k
		_, k = varint32(rec[p:])
		p += k
		kl, k := varint32(rec[p:])
		p += k + max(int(kl), 0)
		vl, _ := varint32(rec[p:])
		info = RecordInfo{OffsetDelta: delta, TimestampDelta: ts, KeyNull: kl < 0, KeyLen: max(int(kl), 0), ValueLen: max(int(vl), 0)}
		visit(i, &info)
		data = data[n:]
	}
	if len(data) != 0 {
		return fmt.Errorf("%w: %d bytes after the last of %d records", ErrInvalidRecord, len(data), h.NumRecords)
	}
	return nil
}

// SetCreateTime gives a whole, parsed batch the CreateTime timestamp type
// and MaxTimestamp ts, and recomputes the CRC: what Kafka stores for a
// batch on a CreateTime topic whatever type or maximum the producer wrote.
func SetCreateTime(batch []byte, ts int64) {
	size := batchLengthOverhead + int(int32(binary.BigEndian.Uint32(batch[offLength:])))
	attrs := binary.BigEndian.Uint16(batch[offAttributes:])
	binary.BigEndian.PutUint16(batch[offAttributes:], attrs&^attrLogAppendTime)
	binary.BigEndian.PutUint64(batch[offMaxTimestamp:], uint64(ts))
	binary.BigEndian.PutUint32(batch[offCRC:], batchCRC(batch[:size]))
}

// BuildBatchLevel is BuildBatch compressing at level (Kafka's
// compression.gzip.level, compression.lz4.level, compression.zstd.level;
// DefaultLevel for the codec's default): a broker recompressing a batch to
// its topic's compression.type.
func BuildBatchLevel(h BatchHeader, codec Codec, level int, records []Record) ([]byte, error) {
	return buildBatchLevel(h, codec, level, records, false)
}

// DefaultLevel asks BuildBatchLevel for the codec's default level.
const DefaultLevel = -1 << 31
