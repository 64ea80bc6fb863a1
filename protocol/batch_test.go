package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy/xerial"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var allCodecs = []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

// sampleRecords covers the encodings that matter: null and empty keys and
// values, headers with null values, negative and large timestamp deltas.
func sampleRecords() []Record {
	return []Record{
		{OffsetDelta: 0, Key: []byte("k0"), Value: []byte("v0")},
		{OffsetDelta: 1, TimestampDelta: 5, Key: nil, Value: []byte("no key")},
		{OffsetDelta: 2, TimestampDelta: -3, Key: []byte{}, Value: nil},
		{OffsetDelta: 3, TimestampDelta: 1 << 40, Key: []byte("k3"), Value: bytes.Repeat([]byte("x"), 300),
			Headers: []RecordHeader{{Key: "h1", Value: []byte("one")}, {Key: "", Value: nil}, {Key: "h3", Value: []byte{}}}},
	}
}

// bigRecords compress to several xerial chunks and lz4 blocks.
func bigRecords(n, size int) []Record {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]Record, n)
	for i := range recs {
		v := make([]byte, size)
		for j := range v {
			v[j] = "abcdefgh"[rng.IntN(8)]
		}
		recs[i] = Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "key-%d", i), Value: v}
	}
	return recs
}

var sampleHeader = BatchHeader{
	BaseOffset:           0,
	PartitionLeaderEpoch: -1,
	BaseTimestamp:        1_700_000_000_000,
	ProducerID:           42,
	ProducerEpoch:        3,
	BaseSequence:         10,
}

func mustBuild(t testing.TB, h BatchHeader, c Codec, recs []Record) []byte {
	t.Helper()
	b, err := BuildBatch(h, c, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuildAndReadEachCodec(t *testing.T) {
	for _, c := range allCodecs {
		for name, recs := range map[string][]Record{"sample": sampleRecords(), "big": bigRecords(200, 1000), "empty": nil} {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				b := mustBuild(t, sampleHeader, c, recs)
				h, err := ParseBatchHeader(b)
				if err != nil {
					t.Fatal(err)
				}
				if h.Size() != len(b) || h.Magic != 2 || h.Compression() != c || h.NumRecords != int32(len(recs)) {
					t.Fatalf("header %+v for %d bytes", h, len(b))
				}
				if h.ProducerID != 42 || h.ProducerEpoch != 3 || h.BaseSequence != 10 || h.PartitionLeaderEpoch != -1 ||
					h.BaseTimestamp != sampleHeader.BaseTimestamp || h.IsTransactional() || h.IsControl() || h.LogAppendTime() {
					t.Fatalf("header fields not kept: %+v", h)
				}
				if len(recs) > 0 {
					maxDelta := int64(0)
					for _, r := range recs {
						maxDelta = max(maxDelta, r.TimestampDelta)
					}
					if h.LastOffsetDelta != int32(len(recs)-1) || h.MaxTimestamp != h.BaseTimestamp+maxDelta {
						t.Fatalf("last offset delta %d, max timestamp %d", h.LastOffsetDelta, h.MaxTimestamp)
					}
				}
				if err := VerifyCRC(b); err != nil {
					t.Fatal(err)
				}
				if err := ValidateRecords(b); len(recs) > 0 && err != nil {
					t.Fatal(err)
				} else if len(recs) == 0 && !errors.Is(err, ErrInvalidRecord) {
					t.Fatalf("empty batch: %v, want ErrInvalidRecord", err)
				}
				got, err := Records(b)
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) == 0 {
					if len(got) != 0 {
						t.Fatalf("%d records from an empty batch", len(got))
					}
					return
				}
				if !reflect.DeepEqual(got, recs) {
					t.Fatalf("records differ:\n got %+v\nwant %+v", got, recs)
				}
			})
		}
	}
}

func TestRecordsDoNotAliasBatch(t *testing.T) {
	b := mustBuild(t, sampleHeader, CodecNone, sampleRecords())
	orig := append([]byte(nil), b...)
	recs, err := Records(b)
	if err != nil {
		t.Fatal(err)
	}
	recs[0].Key[0] = 'X'
	if !bytes.Equal(b, orig) {
		t.Fatal("changing a decoded key changed the batch")
	}
}

func TestBuildBatchOverridesDerivedFields(t *testing.T) {
	h := sampleHeader
	h.Length, h.CRC, h.Magic, h.NumRecords, h.LastOffsetDelta = 1, 2, 0, 99, 99
	h.Attributes = attrTransactional | int16(CodecZstd)
	recs := sampleRecords()
	for i := range recs {
		recs[i].OffsetDelta = 7 // ignored: deltas are always 0..n-1
	}
	b := mustBuild(t, h, CodecGzip, recs)
	got, err := ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Compression() != CodecGzip || !got.IsTransactional() || got.NumRecords != 4 || got.LastOffsetDelta != 3 {
		t.Fatalf("header %+v", got)
	}
	if err := ValidateRecords(b); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildBatch(h, Codec(5), recs); !errors.Is(err, ErrUnsupportedCompression) {
		t.Fatalf("codec 5: %v", err)
	}
}

func TestBuildBatchLogAppendTimeKeepsMaxTimestamp(t *testing.T) {
	h := sampleHeader
	h.Attributes = attrLogAppendTime
	h.MaxTimestamp = 123
	got, err := ParseBatchHeader(mustBuild(t, h, CodecNone, sampleRecords()))
	if err != nil {
		t.Fatal(err)
	}
	if !got.LogAppendTime() || got.MaxTimestamp != 123 {
		t.Fatalf("header %+v", got)
	}
}

func TestVerifyCRCDetectsEveryFlippedByte(t *testing.T) {
	b := mustBuild(t, sampleHeader, CodecNone, sampleRecords())
	for i := offAttributes; i < len(b); i++ {
		c := append([]byte(nil), b...)
		c[i] ^= 0x01
		if err := VerifyCRC(c); !errors.Is(err, ErrCorruptMessage) && !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("flipped byte %d: %v", i, err)
		}
	}
	c := append([]byte(nil), b...)
	c[offCRC] ^= 0x80
	if err := VerifyCRC(c); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("flipped CRC: %v", err)
	}
}

func TestInPlaceRewritesKeepCRC(t *testing.T) {
	for _, c := range allCodecs {
		b := mustBuild(t, sampleHeader, c, sampleRecords())
		SetBaseOffset(b, 1<<40+17)
		SetPartitionLeaderEpoch(b, 9)
		if err := VerifyCRC(b); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		h, _ := ParseBatchHeader(b)
		if h.BaseOffset != 1<<40+17 || h.PartitionLeaderEpoch != 9 || h.LastOffset() != 1<<40+17+3 {
			t.Fatalf("%v: header %+v", c, h)
		}
		if err := ValidateRecords(b); err != nil {
			t.Fatalf("%v: %v", c, err)
		}

		SetLogAppendTime(b, 1_800_000_000_000)
		if err := VerifyCRC(b); err != nil {
			t.Fatalf("%v after SetLogAppendTime: %v", c, err)
		}
		h, _ = ParseBatchHeader(b)
		if !h.LogAppendTime() || h.MaxTimestamp != 1_800_000_000_000 || h.Compression() != c ||
			h.BaseTimestamp != sampleHeader.BaseTimestamp || h.ProducerID != 42 {
			t.Fatalf("%v after SetLogAppendTime: %+v", c, h)
		}
	}
}

// withNumRecords patches the record count and fixes the CRC.
func withNumRecords(b []byte, n int32) []byte {
	b = append([]byte(nil), b...)
	binary.BigEndian.PutUint32(b[offNumRecords:], uint32(n))
	binary.BigEndian.PutUint32(b[offCRC:], batchCRC(b))
	return b
}

// uncompressedWith builds an uncompressed batch around raw record bytes.
func uncompressedWith(raw []byte, numRecords, lastOffsetDelta int32) []byte {
	b, err := BuildBatch(sampleHeader, CodecNone, nil)
	if err != nil {
		panic(err)
	}
	b = append(b, raw...)
	binary.BigEndian.PutUint32(b[offLength:], uint32(len(b)-batchLengthOverhead))
	binary.BigEndian.PutUint32(b[offNumRecords:], uint32(numRecords))
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], uint32(lastOffsetDelta))
	binary.BigEndian.PutUint32(b[offCRC:], batchCRC(b))
	return b
}

func TestValidateRecordsRejects(t *testing.T) {
	good := mustBuild(t, sampleHeader, CodecNone, sampleRecords())
	rec := func(offsetDelta int32) []byte {
		return appendRecord(nil, &Record{Key: []byte("k"), Value: []byte("v")}, offsetDelta)
	}
	cat := func(a ...[]byte) []byte { return bytes.Join(a, nil) }

	truncated := append([]byte(nil), good[:len(good)-5]...)
	binary.BigEndian.PutUint32(truncated[offLength:], uint32(len(truncated)-batchLengthOverhead))

	// A record whose length prefix claims one byte more than its fields.
	long := rec(0)
	long[0] += 2 // zigzag: +1 in value
	long = append(long, 0)

	// A record with a null header key.
	// attributes, timestamp delta, offset delta, null key, null value, one
	// header, null header key, empty header value; length 8 (zigzag 16)
	nullHeaderKey := []byte{16, 0, 0, 0, 1, 1, 2, 1, 0}

	tests := []struct {
		name  string
		batch []byte
		want  error
	}{
		{"more records claimed", withNumRecords(good, 5), ErrInvalidRecord},
		{"fewer records claimed", withNumRecords(good, 3), ErrInvalidRecord},
		{"huge count", withNumRecords(good, 1<<31-1), ErrInvalidRecord},
		{"negative count", withNumRecords(good, -1), ErrInvalidRecord},
		{"zero count", uncompressedWith(nil, 0, 0), ErrInvalidRecord},
		{"truncated records", truncated, ErrInvalidRecord},
		{"length longer than fields", uncompressedWith(long, 1, 0), ErrInvalidRecord},
		{"offset deltas out of order", uncompressedWith(cat(rec(1), rec(0)), 2, 1), ErrInvalidRecord},
		{"offset delta gap", uncompressedWith(cat(rec(0), rec(2)), 2, 1), ErrInvalidRecord},
		{"last offset delta wrong", uncompressedWith(cat(rec(0), rec(1)), 2, 2), ErrInvalidRecord},
		{"trailing garbage", uncompressedWith(cat(rec(0), []byte{0}), 1, 0), ErrInvalidRecord},
		{"zero record length", uncompressedWith([]byte{0}, 1, 0), ErrInvalidRecord},
		{"null header key", uncompressedWith(nullHeaderKey, 1, 0), ErrInvalidRecord},
		{"batch cut short", good[:len(good)-1], ErrCorruptMessage},
		{"shorter than a header", good[:BatchHeaderLen-1], ErrCorruptMessage},
		{"magic 1", func() []byte { b := append([]byte(nil), good...); b[offMagic] = 1; return b }(), ErrUnsupportedMagic},
		{"codec 6", func() []byte {
			b := append([]byte(nil), good...)
			b[offAttributes+1] |= 6
			return b
		}(), ErrUnsupportedCompression},
		{"gzip garbage", func() []byte {
			b := append([]byte(nil), good...)
			b[offAttributes+1] |= byte(CodecGzip)
			return b
		}(), ErrCorruptMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidateRecords(tt.batch); !errors.Is(err, tt.want) {
				t.Fatalf("ValidateRecords: %v, want %v", err, tt.want)
			}
			if tt.want != ErrInvalidRecord || strings.Contains(tt.name, "delta") || tt.name == "zero count" {
				return // Records accepts empty batches and any offset deltas
			}
			if _, err := Records(tt.batch); !errors.Is(err, tt.want) {
				t.Fatalf("Records: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParseBatchHeaderRejects(t *testing.T) {
	good := mustBuild(t, sampleHeader, CodecNone, sampleRecords())
	patch := func(off int, v uint32) []byte {
		b := append([]byte(nil), good...)
		binary.BigEndian.PutUint32(b[off:], v)
		return b
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrCorruptMessage},
		{"16 bytes", good[:16], ErrCorruptMessage},
		{"old magic before short header", append(append([]byte(nil), good[:16]...), 1), ErrUnsupportedMagic},
		{"60 bytes", good[:60], ErrCorruptMessage},
		{"length below header", patch(offLength, 48), ErrCorruptMessage},
		{"negative length", patch(offLength, 0xffffffff), ErrCorruptMessage},
		{"length past end", patch(offLength, uint32(len(good))), ErrCorruptMessage},
		{"negative count", patch(offNumRecords, 0x80000000), ErrInvalidRecord},
		{"negative last offset delta", patch(offLastOffsetDelta, 0xffffffff), ErrInvalidRecord},
	}
	for _, tt := range tests {
		if _, err := ParseBatchHeader(tt.in); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// Trailing bytes after the batch are not part of it.
	if h, err := ParseBatchHeader(append(append([]byte(nil), good...), 1, 2, 3)); err != nil || h.Size() != len(good) {
		t.Errorf("with trailing bytes: %v, size %d", err, h.Size())
	}
}

func TestNextBatch(t *testing.T) {
	a := mustBuild(t, sampleHeader, CodecNone, sampleRecords())
	b := mustBuild(t, sampleHeader, CodecSnappy, sampleRecords())
	all := append(append([]byte(nil), a...), b...)

	first, rest, err := NextBatch(all)
	if err != nil || !bytes.Equal(first, a) || !bytes.Equal(rest, b) {
		t.Fatalf("first split: %v", err)
	}
	if cap(first) != len(first) {
		t.Fatal("batch capacity reaches into the rest")
	}
	second, rest, err := NextBatch(rest)
	if err != nil || !bytes.Equal(second, b) || len(rest) != 0 {
		t.Fatalf("second split: %v, %d left", err, len(rest))
	}
	if _, _, err := NextBatch(all[:len(a)-1]); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("partial batch: %v", err)
	}
	if _, _, err := NextBatch(nil); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("empty: %v", err)
	}
}

func TestBuildControlBatch(t *testing.T) {
	for _, commit := range []bool{false, true} {
		b := BuildControlBatch(77, 4, commit, 12, 1_700_000_000_123)
		if err := VerifyCRC(b); err != nil {
			t.Fatal(err)
		}
		if err := ValidateRecords(b); err != nil {
			t.Fatal(err)
		}
		h, _ := ParseBatchHeader(b)
		if !h.IsControl() || !h.IsTransactional() || h.ProducerID != 77 || h.ProducerEpoch != 4 ||
			h.NumRecords != 1 || h.MaxTimestamp != 1_700_000_000_123 || h.BaseSequence != -1 || h.Compression() != CodecNone {
			t.Fatalf("header %+v", h)
		}
		recs, err := Records(b)
		if err != nil {
			t.Fatal(err)
		}
		typ := []byte{0, 0, 0, 0}
		if commit {
			typ[3] = 1
		}
		if !bytes.Equal(recs[0].Key, typ) || !bytes.Equal(recs[0].Value, []byte{0, 0, 0, 0, 0, 12}) {
			t.Fatalf("record %+v", recs[0])
		}
	}
}

// kmsgBatch encodes recs with franz-go's own types, computing the length
// and CRC the way a producer does.
func kmsgBatch(recs []kmsg.Record, attrs int16) (kmsg.RecordBatch, []byte) {
	var raw []byte
	for i := range recs {
		r := &recs[i]
		r.Length = 0
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the zero length took one byte
		raw = r.AppendTo(raw)
	}
	rb := kmsg.RecordBatch{
		FirstOffset:          1000,
		PartitionLeaderEpoch: 6,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(len(recs) - 1),
		FirstTimestamp:       1_700_000_000_000,
		MaxTimestamp:         1_700_000_000_009,
		ProducerID:           5,
		ProducerEpoch:        2,
		FirstSequence:        20,
		NumRecords:           int32(len(recs)),
		Records:              raw,
	}
	rb.Length = int32(len(rb.AppendTo(nil)) - 12)
	b := rb.AppendTo(nil)
	rb.CRC = int32(crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return rb, rb.AppendTo(nil)
}

func TestAgreesWithKmsg(t *testing.T) {
	krecs := []kmsg.Record{
		{TimestampDelta64: 0, OffsetDelta: 0, Key: []byte("a"), Value: []byte("1")},
		{TimestampDelta64: 9, OffsetDelta: 1, Key: nil, Value: []byte("2"), Headers: []kmsg.Header{{Key: "h", Value: []byte("v")}}},
		{TimestampDelta64: 4, OffsetDelta: 2, Key: []byte{}, Value: nil},
	}
	rb, wire := kmsgBatch(krecs, attrTransactional)

	h, err := ParseBatchHeader(wire)
	if err != nil {
		t.Fatal(err)
	}
	want := BatchHeader{
		BaseOffset: rb.FirstOffset, Length: rb.Length, PartitionLeaderEpoch: rb.PartitionLeaderEpoch, Magic: rb.Magic,
		CRC: uint32(rb.CRC), Attributes: rb.Attributes, LastOffsetDelta: rb.LastOffsetDelta,
		BaseTimestamp: rb.FirstTimestamp, MaxTimestamp: rb.MaxTimestamp, ProducerID: rb.ProducerID,
		ProducerEpoch: rb.ProducerEpoch, BaseSequence: rb.FirstSequence, NumRecords: rb.NumRecords,
	}
	if h != want {
		t.Fatalf("header\n got %+v\nwant %+v", h, want)
	}
	if h.Size() != len(wire) || !h.IsTransactional() {
		t.Fatalf("size %d of %d", h.Size(), len(wire))
	}
	if err := VerifyCRC(wire); err != nil {
		t.Fatal(err)
	}
	if err := ValidateRecords(wire); err != nil {
		t.Fatal(err)
	}
	recs, err := Records(wire)
	if err != nil {
		t.Fatal(err)
	}
	var ours []Record
	for i, kr := range krecs {
		r := Record{OffsetDelta: kr.OffsetDelta, TimestampDelta: kr.TimestampDelta64, Key: kr.Key, Value: kr.Value}
		for _, kh := range kr.Headers {
			r.Headers = append(r.Headers, RecordHeader{Key: kh.Key, Value: kh.Value})
		}
		if !reflect.DeepEqual(recs[i], r) {
			t.Fatalf("record %d\n got %+v\nwant %+v", i, recs[i], r)
		}
		ours = append(ours, r)
	}

	// The other way: BuildBatch writes exactly what franz-go writes, and
	// kmsg reads our batches.
	built, err := BuildBatch(BatchHeader{
		BaseOffset: rb.FirstOffset, PartitionLeaderEpoch: rb.PartitionLeaderEpoch, Attributes: rb.Attributes,
		BaseTimestamp: rb.FirstTimestamp, ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch,
		BaseSequence: rb.FirstSequence,
	}, CodecNone, ours)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, wire) {
		t.Fatalf("BuildBatch differs from kmsg:\n got %x\nwant %x", built, wire)
	}
	var back kmsg.RecordBatch
	if err := back.ReadFrom(built); err != nil {
		t.Fatal(err)
	}
	data := back.Records
	for i := range krecs {
		l, n := binary.Varint(data)
		var kr kmsg.Record
		if err := kr.ReadFrom(data[:n+int(l)]); err != nil {
			t.Fatalf("kmsg reads record %d: %v", i, err)
		}
		if kr.OffsetDelta != int32(i) || !bytes.Equal(kr.Key, krecs[i].Key) || (kr.Key == nil) != (krecs[i].Key == nil) ||
			!bytes.Equal(kr.Value, krecs[i].Value) || kr.TimestampDelta64 != krecs[i].TimestampDelta64 || len(kr.Headers) != len(krecs[i].Headers) {
			t.Fatalf("kmsg record %d: %+v, want %+v", i, kr, krecs[i])
		}
		data = data[n+int(l):]
	}
	if len(data) != 0 {
		t.Fatalf("%d bytes left", len(data))
	}
}

// xerialChunks counts the chunks of well-formed xerial data.
func xerialChunks(data []byte) int {
	n := 0
	for data = data[xerialHeaderLen:]; len(data) >= 4; n++ {
		data = data[4+binary.BigEndian.Uint32(data):]
	}
	return n
}

// withCompressed builds an uncompressed batch and swaps in a compressed
// body made by an independent encoder.
func withCompressed(t testing.TB, recs []Record, c Codec, enc func([]byte) []byte) []byte {
	plain := mustBuild(t, sampleHeader, CodecNone, recs)
	b := append([]byte(nil), plain[:BatchHeaderLen]...)
	b = append(b, enc(plain[BatchHeaderLen:])...)
	binary.BigEndian.PutUint32(b[offLength:], uint32(len(b)-batchLengthOverhead))
	b[offAttributes+1] |= byte(c)
	binary.BigEndian.PutUint32(b[offCRC:], batchCRC(b))
	return b
}

func TestXerialSnappy(t *testing.T) {
	for name, recs := range map[string][]Record{"one chunk": sampleRecords(), "many chunks": bigRecords(100, 1000)} {
		t.Run(name, func(t *testing.T) {
			b := withCompressed(t, recs, CodecSnappy, func(raw []byte) []byte { return xerial.Encode(nil, raw) })
			data := b[BatchHeaderLen:]
			if !bytes.HasPrefix(data, xerialMagic) {
				t.Fatal("not xerial framed")
			}
			if chunks := xerialChunks(data); name == "many chunks" && chunks < 2 {
				t.Fatalf("%d chunks, want several", chunks)
			}
			if err := ValidateRecords(b); err != nil {
				t.Fatal(err)
			}
			got, err := Records(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, recs) {
				t.Fatal("records differ")
			}
		})
	}
	// Broken framing.
	for name, body := range map[string][]byte{
		"cut chunk length": append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0),
		"chunk past end":   append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9, 1),
		"negative chunk":   append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0, 0, 0),
	} {
		b := withCompressed(t, sampleRecords(), CodecSnappy, func([]byte) []byte { return body })
		if err := ValidateRecords(b); !errors.Is(err, ErrCorruptMessage) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDecompressionBombs(t *testing.T) {
	// Through the public API with the real cap: inputs that claim more
	// than the cap must fail before anything that size is allocated.
	zstdClaim := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic, single segment with an 8-byte content size
	zstdClaim = binary.LittleEndian.AppendUint64(zstdClaim, maxDecompressedBytes+1)
	zstdClaim = append(zstdClaim, 0x03|0x08, 0, 0, 0) // last RLE block of 1 byte (the content size lies)
	claims := map[string]struct {
		c    Codec
		body []byte
	}{
		"zstd content size":       {CodecZstd, zstdClaim},
		"snappy claimed length":   {CodecSnappy, binary.AppendUvarint(nil, maxDecompressedBytes+1)},
		"snappy impossible ratio": {CodecSnappy, append(binary.AppendUvarint(nil, 1<<20), 0)},
	}
	for name, tt := range claims {
		b := withCompressed(t, sampleRecords()[:1], tt.c, func([]byte) []byte { return tt.body })
		if err := ValidateRecords(b); !errors.Is(err, ErrCorruptMessage) {
			t.Errorf("%s: ValidateRecords: %v", name, err)
		}
		if _, err := Records(b); !errors.Is(err, ErrCorruptMessage) {
			t.Errorf("%s: Records: %v", name, err)
		}
	}

	// Real bombs against a small cap: exactly the cap decodes, one byte
	// more does not.
	const limit = 1 << 20
	encoders := map[string]struct {
		c   Codec
		enc func([]byte) []byte
	}{
		"gzip":          {CodecGzip, func(b []byte) []byte { out, _ := compress(CodecGzip, b); return out }},
		"lz4":           {CodecLZ4, func(b []byte) []byte { out, _ := compress(CodecLZ4, b); return out }},
		"snappy":        {CodecSnappy, func(b []byte) []byte { out, _ := compress(CodecSnappy, b); return out }},
		"snappy xerial": {CodecSnappy, func(b []byte) []byte { return xerial.Encode(nil, b) }},
		"zstd":          {CodecZstd, func(b []byte) []byte { out, _ := compress(CodecZstd, b); return out }},
	}
	for name, e := range encoders {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{limit, limit + 1} {
				out, err := decompressLimit(nil, e.c, e.enc(make([]byte, n)), limit)
				switch {
				case e.c == CodecZstd: // capped by the decoder at maxDecompressedBytes
					if err != nil || len(out) != n {
						t.Fatalf("%d bytes: %v", n, err)
					}
				case n <= limit && (err != nil || len(out) != n):
					t.Fatalf("%d bytes at limit %d: %v, got %d", n, limit, err, len(out))
				case n > limit && !errors.Is(err, ErrCorruptMessage):
					t.Fatalf("%d bytes at limit %d: %v", n, limit, err)
				}
			}
		})
	}
}

func TestCodecString(t *testing.T) {
	want := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	for i, c := range allCodecs {
		if c.String() != want[i] {
			t.Errorf("%d: %q", i, c.String())
		}
	}
	if s := Codec(7).String(); s != "Codec(7)" {
		t.Errorf("Codec(7) = %q", s)
	}
}

func TestValidateRecordsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := mustBuild(t, sampleHeader, CodecNone, bigRecords(100, 100))
	if n := testing.AllocsPerRun(100, func() {
		if err := ValidateRecords(b); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per uncompressed validation", n)
	}
}

func FuzzParseBatch(f *testing.F) {
	for _, c := range allCodecs {
		f.Add(mustBuild(f, sampleHeader, c, sampleRecords()))
		f.Add(mustBuild(f, sampleHeader, c, nil))
	}
	good := mustBuild(f, sampleHeader, CodecNone, sampleRecords())
	f.Add(good[:len(good)-3])
	f.Add(good[:BatchHeaderLen])
	f.Add(withNumRecords(good, 5))
	f.Add(withNumRecords(good, 1<<31-1))
	f.Add(BuildControlBatch(1, 2, true, 3, 4))
	_, kb := kmsgBatch([]kmsg.Record{{Key: []byte("k"), Value: []byte("v")}}, 0)
	f.Add(kb)
	f.Add(withCompressed(f, sampleRecords(), CodecSnappy, func(raw []byte) []byte { return xerial.Encode(nil, raw) }))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		h, herr := ParseBatchHeader(in)
		crcErr := VerifyCRC(in)
		verr := ValidateRecords(in)
		recs, rerr := Records(in)
		batch, _, nerr := NextBatch(in)
		if herr != nil {
			if crcErr == nil || verr == nil || rerr == nil || nerr == nil {
				t.Fatalf("header error %v not reported by all: %v %v %v %v", herr, crcErr, verr, rerr, nerr)
			}
			return
		}
		if nerr != nil || len(batch) != h.Size() {
			t.Fatalf("NextBatch: %v, %d bytes, header says %d", nerr, len(batch), h.Size())
		}
		if verr != nil {
			return
		}
		if rerr != nil || len(recs) != int(h.NumRecords) {
			t.Fatalf("validated but Records: %v, %d records of %d", rerr, len(recs), h.NumRecords)
		}
		// A valid batch survives a rebuild unchanged in content.
		rebuilt, err := BuildBatch(h, h.Compression(), recs)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateRecords(rebuilt); err != nil {
			t.Fatalf("rebuilt batch: %v", err)
		}
		again, err := Records(rebuilt)
		if err != nil || !reflect.DeepEqual(again, recs) {
			t.Fatalf("rebuilt records differ: %v", err)
		}
	})
}

func benchBatch(b *testing.B, c Codec) []byte {
	recs := make([]Record, 100)
	for i := range recs {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, 100)
		recs[i] = Record{Key: fmt.Appendf(nil, "key-%03d", i), Value: v}
	}
	return mustBuild(b, sampleHeader, c, recs)
}

func BenchmarkValidateRecords(b *testing.B) {
	for _, c := range allCodecs {
		b.Run(c.String(), func(b *testing.B) {
			batch := benchBatch(b, c)
			b.ReportAllocs()
			b.SetBytes(int64(len(batch)))
			for b.Loop() {
				if err := ValidateRecords(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseBatchHeader(b *testing.B) {
	batch := benchBatch(b, CodecNone)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseBatchHeader(batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyCRC(b *testing.B) {
	batch := benchBatch(b, CodecNone)
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		if err := VerifyCRC(batch); err != nil {
			b.Fatal(err)
		}
	}
}

func TestVarint32(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 1 << 20, -1 << 31, 1<<31 - 1} {
		b := binary.AppendVarint(nil, v)
		got, n := varint32(b)
		if n != len(b) || int64(got) != v {
			t.Errorf("%d: got %d, %d bytes of %d", v, got, n, len(b))
		}
	}
	for _, b := range [][]byte{
		nil,
		{0x80},                             // truncated
		binary.AppendVarint(nil, 1<<31),    // past int32
		binary.AppendVarint(nil, -1<<31-1), // past int32
		{0x80, 0x80, 0x80, 0x80, 0x80, 0},  // six bytes for zero
	} {
		if _, n := varint32(b); n > 0 {
			t.Errorf("% x accepted", b)
		}
	}
}
