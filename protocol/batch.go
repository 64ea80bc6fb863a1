package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Magic v2 record batch layout (KIP-98). Offsets of the header fields:
const (
	offBaseOffset      = 0  // int64
	offLength          = 8  // int32, bytes after this field
	offLeaderEpoch     = 12 // int32 partitionLeaderEpoch
	offMagic           = 16 // int8
	offCRC             = 17 // uint32, CRC-32C of everything after it
	offAttributes      = 21 // int16
	offLastOffsetDelta = 23 // int32
	offBaseTimestamp   = 27 // int64
	offMaxTimestamp    = 35 // int64
	offProducerID      = 43 // int64
	offProducerEpoch   = 51 // int16
	offBaseSequence    = 53 // int32
	offNumRecords      = 57 // int32

	// BatchHeaderLen is the size of a v2 batch header; the records follow.
	BatchHeaderLen = 61

	// batchLengthOverhead is what Size adds to the length field: the base
	// offset and the length field itself.
	batchLengthOverhead = offLeaderEpoch
)

// Attribute bits.
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

// Errors about record batches. The server answers a Produce with the Kafka
// code given for each.
var (
	// ErrCorruptMessage: CORRUPT_MESSAGE (2). The batch frame is broken: short,
	// wrong length, bad CRC, or compressed data that does not decompress.
	ErrCorruptMessage = errors.New("protocol: corrupt record batch")
	// ErrUnsupportedMagic: the batch is not magic v2. Produce v3+ only carries
	// v2, so Kafka answers INVALID_RECORD (87).
	ErrUnsupportedMagic = errors.New("protocol: unsupported record batch magic")
	// ErrInvalidRecord: INVALID_RECORD (87). The frame is sound but the records
	// disagree with the header or with themselves.
	ErrInvalidRecord = errors.New("protocol: invalid record")
	// ErrUnsupportedCompression: UNSUPPORTED_COMPRESSION_TYPE (76). The
	// attributes name a codec Kafka does not have.
	ErrUnsupportedCompression = errors.New("protocol: unsupported compression type")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BatchHeader is the decoded header of a v2 record batch.
type BatchHeader struct {
	BaseOffset           int64
	Length               int32 // batchLength: bytes after this field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Compression is the codec named by the attributes; it may be out of range
// (see ErrUnsupportedCompression).
func (h *BatchHeader) Compression() Codec { return Codec(h.Attributes & attrCodecMask) }

// IsTransactional reports the transactional attribute.
func (h *BatchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// IsControl reports a control batch (transaction markers).
func (h *BatchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// LogAppendTime reports that MaxTimestamp is the broker's append time
// rather than the producer's create time.
func (h *BatchHeader) LogAppendTime() bool { return h.Attributes&attrLogAppendTime != 0 }

// LastOffset is the offset of the batch's last record.
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Size is the size of the whole batch in bytes.
func (h *BatchHeader) Size() int { return batchLengthOverhead + int(h.Length) }

// ParseBatchHeader decodes the header of the v2 batch at the start of b
// without checking the CRC. b may hold more after the batch, but the whole
// batch must fit in b. Errors wrap ErrCorruptMessage (short input, impossible
// length), ErrUnsupportedMagic or ErrInvalidRecord (negative counts).
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	var h BatchHeader
	// Every message format keeps magic at byte 16, so check it before the
	// v2 length: an old-format message set gets the clearer error.
	if len(b) <= offMagic {
		return h, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptMessage, len(b))
	}
	h.Magic = int8(b[offMagic])
	if h.Magic != 2 {
		return h, fmt.Errorf("%w: %d", ErrUnsupportedMagic, h.Magic)
	}
	if len(b) < BatchHeaderLen {
		return h, fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptMessage, len(b))
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[offBaseOffset:]))
	h.Length = int32(binary.BigEndian.Uint32(b[offLength:]))
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
	h.CRC = binary.BigEndian.Uint32(b[offCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[offAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[offBaseTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[offMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[offProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[offProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[offBaseSequence:]))
	h.NumRecords = int32(binary.BigEndian.Uint32(b[offNumRecords:]))

	if h.Length < BatchHeaderLen-batchLengthOverhead {
		return h, fmt.Errorf("%w: batch length %d is shorter than a batch header", ErrCorruptMessage, h.Length)
	}
	if int64(h.Length) > int64(len(b)-batchLengthOverhead) {
		return h, fmt.Errorf("%w: batch length %d but only %d bytes follow", ErrCorruptMessage, h.Length, len(b)-batchLengthOverhead)
	}
	if h.NumRecords < 0 {
		return h, fmt.Errorf("%w: record count %d", ErrInvalidRecord, h.NumRecords)
	}
	if h.LastOffsetDelta < 0 {
		return h, fmt.Errorf("%w: last offset delta %d", ErrInvalidRecord, h.LastOffsetDelta)
	}
	return h, nil
}

// NextBatch splits the first batch off records, e.g. a Produce partition's
// records field. The batch's capacity is clipped to its length, so appending
// to it can never write into rest.
func NextBatch(records []byte) (batch, rest []byte, err error) {
	h, err := ParseBatchHeader(records)
	if err != nil {
		return nil, records, err
	}
	n := h.Size()
	return records[:n:n], records[n:], nil
}

// VerifyCRC checks the CRC-32C of the batch at the start of batch. A mismatch
// wraps ErrCorruptMessage.
func VerifyCRC(batch []byte) error {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return err
	}
	return h.VerifyCRC(batch)
}

// VerifyCRC is the package's VerifyCRC for a batch whose header h was
// already parsed from it, so a caller that checks several things parses
// the header once.
func (h *BatchHeader) VerifyCRC(batch []byte) error {
	if got := batchCRC(batch[:h.Size()]); got != h.CRC {
		return fmt.Errorf("%w: CRC is %#08x, header says %#08x", ErrCorruptMessage, got, h.CRC)
	}
	return nil
}

// batchCRC computes the CRC of a whole batch: it covers everything after
// the CRC field, which is why the base offset and leader epoch can be
// rewritten without touching it.
func batchCRC(batch []byte) uint32 {
	return crc32.Checksum(batch[offAttributes:], castagnoli)
}

// SetBaseOffset rewrites the base offset of a batch in place. The CRC
// does not cover it, so it stays valid.
func SetBaseOffset(batch []byte, offset int64) {
	binary.BigEndian.PutUint64(batch[offBaseOffset:], uint64(offset))
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch of a batch in
// place. The CRC does not cover it, so it stays valid.
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[offLeaderEpoch:], uint32(epoch))
}

// SetLogAppendTime stamps a whole batch with the broker's append time, for
// topics with message.timestamp.type=LogAppendTime: it sets the timestamp
// type attribute and MaxTimestamp, which consumers then use for every record,
// and recomputes the CRC since both fields are covered by it. batch must
// start with a whole, parsed batch.
func SetLogAppendTime(batch []byte, ts int64) {
	size := batchLengthOverhead + int(int32(binary.BigEndian.Uint32(batch[offLength:])))
	attrs := binary.BigEndian.Uint16(batch[offAttributes:])
	binary.BigEndian.PutUint16(batch[offAttributes:], attrs|attrLogAppendTime)
	binary.BigEndian.PutUint64(batch[offMaxTimestamp:], uint64(ts))
	binary.BigEndian.PutUint32(batch[offCRC:], batchCRC(batch[:size]))
}

// Record is one decoded record of a batch.
type Record struct {
	OffsetDelta    int32
	TimestampDelta int64
	Key, Value     []byte // nil when null
	Headers        []RecordHeader
}

// RecordHeader is one record header. Kafka does not allow a null key.
type RecordHeader struct {
	Key   string
	Value []byte // nil when null
}

// Records decodes the records of the batch at the start of batch,
// decompressing them if needed. It checks the structure as ValidateRecords
// does, except that it accepts empty batches and reports offset deltas as
// found. Keys and values do not alias batch. Meant for tests and tools: it
// allocates freely.
func Records(batch []byte) ([]Record, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return nil, err
	}
	data := batch[BatchHeaderLen:h.Size()]
	if c := h.Compression(); c == CodecNone {
		data = append([]byte(nil), data...)
	} else if !c.valid() {
		return nil, fmt.Errorf("%w: %v", ErrUnsupportedCompression, c)
	} else if data, err = decompress(nil, c, data); err != nil {
		return nil, err
	}
	// The smallest record takes 7 bytes; do not trust the count for the
	// allocation.
	recs := make([]Record, 0, min(int(h.NumRecords), len(data)/7))
	for i := range h.NumRecords {
		var r Record
		n, _, err := readRecord(data, &r)
		if err != nil {
			return nil, fmt.Errorf("record %d of %d: %w", i, h.NumRecords, err)
		}
		recs = append(recs, r)
		data = data[n:]
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last of %d records", ErrInvalidRecord, len(data), h.NumRecords)
	}
	return recs, nil
}

// readRecord decodes the record at the front of b and returns its size and
// offset delta. When r is not nil it is filled, with slices aliasing b.
//
// Record layout: length varint | attributes int8 | timestampDelta varlong |
// offsetDelta varint | key (varint length, -1 = null) | value (same) |
// header count varint | headers (key varint length + bytes, value as above).
// Varints are zigzag encoded, as in encoding/binary.
func readRecord(b []byte, r *Record) (int, int32, error) {
	length, n := varint32(b)
	if n <= 0 {
		return 0, 0, fmt.Errorf("%w: bad record length", ErrInvalidRecord)
	}
	if length < 1 || int(length) > len(b)-n {
		return 0, 0, fmt.Errorf("%w: record length %d with %d bytes left", ErrInvalidRecord, length, len(b)-n)
	}
	size := n + int(length)
	rec := b[n:size]
	p := 1 // skip attributes: unused in v2 records

	tsDelta, n := binary.Varint(rec[p:])
	if n <= 0 {
		return 0, 0, fmt.Errorf("%w: bad timestamp delta", ErrInvalidRecord)
	}
	p += n
	offsetDelta, n := varint32(rec[p:])
	if n <= 0 {
		return 0, 0, fmt.Errorf("%w: bad offset delta", ErrInvalidRecord)
	}
	p += n
	key, p, err := readBytes(rec, p, "key")
	if err != nil {
		return 0, 0, err
	}
	value, p, err := readBytes(rec, p, "value")
	if err != nil {
		return 0, 0, err
	}
	count, n := varint32(rec[p:])
	// A header takes at least two bytes; the bound keeps a huge count from
	// driving the loop or the allocation.
	if n <= 0 || count < 0 || int(count) > (len(rec)-p-n)/2 {
		return 0, 0, fmt.Errorf("%w: bad header count", ErrInvalidRecord)
	}
	p += n
	if r != nil {
		r.OffsetDelta, r.TimestampDelta, r.Key, r.Value = offsetDelta, tsDelta, key, value
		if count > 0 {
			r.Headers = make([]RecordHeader, 0, count)
		}
	}
	for range count {
		var hk, hv []byte
		hk, p, err = readBytes(rec, p, "header key")
		if err != nil {
			return 0, 0, err
		}
		if hk == nil {
			return 0, 0, fmt.Errorf("%w: null header key", ErrInvalidRecord)
		}
		hv, p, err = readBytes(rec, p, "header value")
		if err != nil {
			return 0, 0, err
		}
		if r != nil {
			r.Headers = append(r.Headers, RecordHeader{Key: string(hk), Value: hv})
		}
	}
	if p != len(rec) {
		return 0, 0, fmt.Errorf("%w: record length %d, fields take %d", ErrInvalidRecord, length, p)
	}
	return size, offsetDelta, nil
}

// readBytes reads a varint-length-prefixed byte string at rec[p:]; length -1
// is null and gives nil.
func readBytes(rec []byte, p int, what string) ([]byte, int, error) {
	l, n := varint32(rec[p:])
	if n <= 0 || l < -1 || int(l) > len(rec)-p-n {
		return nil, p, fmt.Errorf("%w: bad %s length", ErrInvalidRecord, what)
	}
	p += n
	if l < 0 {
		return nil, p, nil
	}
	return rec[p : p+int(l) : p+int(l)], p + int(l), nil
}

// varint32 reads a zigzag varint that must fit an int32 in at most five
// bytes, as Kafka requires; n <= 0 means it does not.
func varint32(b []byte) (int32, int) {
	if len(b) > 0 && b[0] < 0x80 { // one byte: most lengths and deltas
		return int32(b[0]>>1) ^ -int32(b[0]&1), 1
	}
	v, n := binary.Varint(b)
	if n <= 0 || n > 5 || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, -1
	}
	return int32(v), n
}
