package protocol

import "fmt"

// ValidateRecords checks that the records of the batch at the start of batch
// agree with its header, as Kafka does for a Produce: it decompresses them if
// needed and walks every record. The batch must hold at least one record (an
// empty batch has no offset range to assign), the record count must equal
// NumRecords, each record's length must match its fields, offset deltas must
// run 0..n-1, and LastOffsetDelta must be NumRecords-1. It does not check the
// CRC, nor produce policy such as control batches from clients.
//
// For uncompressed batches it does not allocate; compressed ones reuse
// pooled buffers and decoders.
func ValidateRecords(batch []byte) error {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return err
	}
	return h.ValidateRecords(batch)
}

// ValidateRecords is the package's ValidateRecords for a batch whose header
// h was already parsed from it.
func (h *BatchHeader) ValidateRecords(batch []byte) error {
	data, pooled, err := h.recordsData(batch)
	if err != nil {
		return err
	}
	if pooled != nil {
		defer putBuf(pooled)
	}
	if recordsWellFormed(data, h.NumRecords) {
		return nil
	}
	return walkRecords(data, h.NumRecords)
}

// recordsData checks the header's record count against its last offset
// delta and returns the batch's records; a compressed batch's are
// decompressed into pooled, which the caller gives back with putBuf (nil
// for an uncompressed batch; no closure, so nothing is allocated).
func (h *BatchHeader) recordsData(batch []byte) (data []byte, pooled *[]byte, err error) {
	if h.NumRecords == 0 {
		return nil, nil, fmt.Errorf("%w: empty batch", ErrInvalidRecord)
	}
	if h.LastOffsetDelta != h.NumRecords-1 {
		return nil, nil, fmt.Errorf("%w: last offset delta %d with %d records", ErrInvalidRecord, h.LastOffsetDelta, h.NumRecords)
	}
	data = batch[BatchHeaderLen:h.Size()]
	c := h.Compression()
	if c == CodecNone {
		return data, nil, nil
	}
	if !c.valid() {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnsupportedCompression, c)
	}
	buf := getBuf()
	*buf, err = decompress((*buf)[:0], c, data)
	if err != nil {
		putBuf(buf)
		return nil, nil, err
	}
	return *buf, buf, nil
}

// walkRecords checks count records of data one by one with readRecord and
// says exactly what is wrong with the first bad one.
func walkRecords(data []byte, count int32) error {
	for i := range count {
		n, delta, err := readRecord(data, nil)
		if err != nil {
			return fmt.Errorf("record %d of %d: %w", i, count, err)
		}
		if delta != i {
			return fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, delta)
		}
		data = data[n:]
	}
	if len(data) != 0 {
		return fmt.Errorf("%w: %d bytes after the last of %d records", ErrInvalidRecord, len(data), count)
	}
	return nil
}

// recordsWellFormed is walkRecords' fast path, one tight pass over the
// records: it makes the same checks, but reads only varints of one or two
// bytes (every length of records up to 8 KiB), skips the timestamp delta
// without decoding it, matches each offset delta against the encoding it
// must have, and gives up on anything else (a longer or non-minimal varint
// among them). It never accepts what walkRecords rejects; when it says
// false, walkRecords decides and names the error. A mutation test and a
// fuzz target hold the two to that.
func recordsWellFormed(data []byte, count int32) bool {
	p := 0
	for i := range count {
		length, n := shortVarint(data, p)
		if n == 0 || length < 1 || int(length) > len(data)-p-n {
			return false
		}
		p += n
		rec := data[p : p+int(length)]
		p += int(length)
		// The attributes (unused in v2 records) are rec[0]; the timestamp
		// delta is any varint of one or two bytes.
		q := 2
		if uint(q-1) >= uint(len(rec)) {
			return false
		}
		if rec[q-1] >= 0x80 {
			if uint(q) >= uint(len(rec)) || rec[q] >= 0x80 {
				return false
			}
			q++
		}
		// The offset delta must be i: zigzag 2i, in one byte below 64,
		// two below 8192, three below 2^20.
		switch zz := uint32(i) << 1; {
		case zz < 1<<7:
			if uint(q) >= uint(len(rec)) || rec[q] != byte(zz) {
				return false
			}
			q++
		case zz < 1<<14:
			if uint(q+1) >= uint(len(rec)) || rec[q] != byte(zz)|0x80 || rec[q+1] != byte(zz>>7) {
				return false
			}
			q += 2
		case zz < 1<<21:
			if uint(q+2) >= uint(len(rec)) || rec[q] != byte(zz)|0x80 || rec[q+1] != byte(zz>>7)|0x80 || rec[q+2] != byte(zz>>14) {
				return false
			}
			q += 3
		default:
			return false
		}
		// The key, often null (-1: a single 0x01), then the value.
		if uint(q) < uint(len(rec)) && rec[q] == 0x01 {
			q++
		} else if q = skipBytes(rec, q); q < 0 {
			return false
		}
		value, n := shortVarint(rec, q)
		if n == 0 || value < -1 || int(value) > len(rec)-q-n {
			return false
		}
		q += n + max(int(value), 0)
		// Usually no headers: a single 0x00.
		if uint(q) < uint(len(rec)) && rec[q] == 0 {
			if q+1 != len(rec) {
				return false
			}
			continue
		}
		headers, n := shortVarint(rec, q)
		if n == 0 || headers < 0 || int(headers) > (len(rec)-q-n)/2 {
			return false
		}
		q += n
		for range headers {
			l, n := shortVarint(rec, q) // header key: never null
			if n == 0 || l < 0 || int(l) > len(rec)-q-n {
				return false
			}
			q += n + int(l)
			if q = skipBytes(rec, q); q < 0 {
				return false
			}
		}
		if q != len(rec) {
			return false
		}
	}
	return p == len(data)
}

// skipBytes skips a byte string at rec[q:] (a varint length of one or two
// bytes, -1 for null, then the bytes) and returns where it ends, or -1.
func skipBytes(rec []byte, q int) int {
	l, n := shortVarint(rec, q)
	if n == 0 || l < -1 || int(l) > len(rec)-q-n {
		return -1
	}
	return q + n + max(int(l), 0)
}

// shortVarint reads a zigzag varint of one or two bytes at b[p:]; n is 0
// for a longer one or one cut short. (The unsigned comparisons spare the
// bounds checks.)
func shortVarint(b []byte, p int) (v int32, n int) {
	if uint(p) >= uint(len(b)) {
		return 0, 0
	}
	x := uint32(b[p])
	n = 1
	if x >= 0x80 {
		if uint(p+1) >= uint(len(b)) || b[p+1] >= 0x80 {
			return 0, 0
		}
		x = x&0x7f | uint32(b[p+1])<<7
		n = 2
	}
	return int32(x>>1) ^ -int32(x&1), n
}
