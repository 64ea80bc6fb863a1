package protocol

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// recordData is the records of an uncompressed batch of recs, without the
// batch header.
func recordData(t testing.TB, recs []Record) []byte {
	return mustBuild(t, sampleHeader, CodecNone, recs)[BatchHeaderLen:]
}

// The fast path must take what producers send, or it saves nothing.
func TestRecordsWellFormedTakesCommonRecords(t *testing.T) {
	value := func(n int) []byte { return bytes.Repeat([]byte("v"), n) }
	cases := map[string][]Record{
		"one byte":       {{Value: []byte("x")}},
		"100 B":          {{Value: value(100)}, {Value: value(100)}, {Value: value(100)}},
		"1 KiB keyed":    {{Key: []byte("key"), Value: value(1024)}, {Key: []byte("key2"), Value: value(1024)}},
		"8000 B":         {{Value: value(8000)}},
		"null key, null": {{Key: nil, Value: nil}, {Key: []byte{}, Value: []byte{}}},
		"timestamps":     {{TimestampDelta: -64, Value: value(10)}, {TimestampDelta: 8191, Value: value(10)}},
		"headers": {{Key: []byte("k"), Value: value(50), Headers: []RecordHeader{
			{Key: "trace", Value: []byte("abc")}, {Key: "", Value: nil}, {Key: "e", Value: []byte{}}}}},
		"100 records":   make([]Record, 100),   // offset deltas of two bytes
		"10000 records": make([]Record, 10000), // and of three
	}
	for name, recs := range cases {
		if data := recordData(t, recs); !recordsWellFormed(data, int32(len(recs))) {
			t.Errorf("%s: fast path gave up on % x", name, data)
		}
	}
	// Beyond two-byte varints it leaves the batch to the exact walk, which
	// takes it.
	long := recordData(t, []Record{{Value: value(9000)}})
	if recordsWellFormed(long, 1) {
		t.Error("fast path took a three-byte varint")
	}
	if err := walkRecords(long, 1); err != nil {
		t.Fatal(err)
	}
}

// The fast path never accepts what the exact walk rejects: mutations of
// valid record data, checked both ways.
func TestRecordsWellFormedNeverAcceptsMore(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	many := make([]Record, 8200) // offset deltas of one, two and three bytes
	for i := range many {
		many[i] = Record{Value: []byte{byte(i)}}
	}
	var seeds [][]byte
	var counts []int32
	for _, recs := range [][]Record{
		sampleRecords(),
		{{Value: []byte("x")}, {Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 100)}},
		{{Key: []byte("k"), Headers: []RecordHeader{{Key: "h", Value: []byte("v")}, {Key: "", Value: nil}}}},
		{{Key: nil, Value: nil}, {Key: []byte{}, Value: []byte{}}, {Value: []byte{1}}},
		many[:70],
		many,
	} {
		seeds = append(seeds, recordData(t, recs))
		counts = append(counts, int32(len(recs)))
	}
	fast, slow := 0, 0
	for i := range 20000 {
		data := append([]byte(nil), seeds[i%len(seeds)]...)
		count := counts[i%len(seeds)]
		switch rng.IntN(4) {
		case 0: // a byte changed
			data[rng.IntN(len(data))] = byte(rng.IntN(256))
		case 1: // a byte nudged, as a length off by one
			data[rng.IntN(len(data))] += byte(rng.IntN(5)) - 2
		case 2: // cut short or grown
			if rng.IntN(2) == 0 {
				data = data[:rng.IntN(len(data))]
			} else {
				data = append(data, byte(rng.IntN(256)))
			}
		case 3: // the count off
			count += int32(rng.IntN(5)) - 2
		}
		ok := recordsWellFormed(data, count)
		err := walkRecords(data, count)
		if ok && err != nil {
			t.Fatalf("fast path took records the exact walk rejects (%v): count %d, % x", err, count, data)
		}
		if ok {
			fast++
		}
		if err == nil {
			slow++
		}
	}
	if fast == 0 || slow == 0 {
		t.Fatalf("mutations left %d batches for the fast path and %d valid: not a test", fast, slow)
	}
}

func FuzzRecordsWellFormed(f *testing.F) {
	f.Add(recordData(f, sampleRecords()), int32(4))
	f.Add(recordData(f, []Record{{Value: []byte("x")}, {Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 100)}}), int32(2))
	f.Add([]byte{16, 0, 0, 0, 1, 1, 2, 1, 0}, int32(1))
	f.Add(recordData(f, make([]Record, 70)), int32(70))
	f.Fuzz(func(t *testing.T, data []byte, count int32) {
		if recordsWellFormed(data, count) {
			if err := walkRecords(data, count); err != nil {
				t.Fatalf("fast path took records the exact walk rejects: %v", err)
			}
		}
	})
}

func BenchmarkRecordsWellFormed(b *testing.B) {
	recs := make([]Record, 10)
	for i := range recs {
		recs[i] = Record{Value: bytes.Repeat([]byte("v"), 100)}
	}
	data := recordData(b, recs)
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if !recordsWellFormed(data, 10) {
				b.Fatal("not taken")
			}
		}
	})
	b.Run("exact", func(b *testing.B) {
		for b.Loop() {
			if err := walkRecords(data, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Encodings the fast path must leave to the exact walk, or judge alike:
// non-minimal varints where a one-byte compare would misread them.
func TestRecordsWellFormedEdgeEncodings(t *testing.T) {
	// raw prefixes a record body with its length; rec is attributes,
	// timestamp delta, offset delta 0, null key, null value, then headers.
	raw := func(body ...byte) []byte { return append([]byte{byte(len(body) << 1)}, body...) }
	rec := func(headers ...byte) []byte { return raw(append([]byte{0, 0, 0, 1, 1}, headers...)...) }
	cases := map[string][]byte{
		"null header key, two bytes":     rec(2, 0x81, 0x00, 0), // one header, key length -1 non-minimal
		"null header key":                rec(2, 1, 0),          // one header, key length -1
		"no headers, two bytes":          rec(0x80, 0x00),       // header count 0 non-minimal
		"empty header key and value":     rec(2, 0, 0),          // valid
		"header value null, two bytes":   rec(2, 0, 0x81, 0x00), // valid: -1 non-minimal
		"offset delta 0 in two bytes":    raw(0, 0, 0x80, 0x00, 1, 1, 0),
		"key null in two bytes":          raw(0, 0, 0, 0x81, 0x00, 1, 0),
		"timestamp delta in three bytes": raw(0, 0x80, 0x80, 0, 0, 1, 1, 0),
	}
	invalid := map[string]bool{"null header key, two bytes": true, "null header key": true}
	for name, data := range cases {
		ok, err := recordsWellFormed(data, 1), walkRecords(data, 1)
		if (err != nil) != invalid[name] {
			t.Errorf("%s: the exact walk says %v", name, err)
		}
		if ok && err != nil {
			t.Errorf("%s: fast path took what the exact walk rejects: %v", name, err)
		}
	}
}
