package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec is a record batch compression type: the low three bits of the batch
// attributes.
type Codec int8

// Kafka's compression codecs, numbered as on the wire.
const (
	CodecNone Codec = iota
	CodecGzip
	CodecSnappy
	CodecLZ4
	CodecZstd
)

// String gives the codec's compression.type name.
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("Codec(%d)", int8(c))
}

func (c Codec) valid() bool { return c >= CodecNone && c <= CodecZstd }

// maxDecompressedBytes caps what one batch may inflate to, so that a small
// compressed batch cannot make the broker allocate without bound. Nothing
// legitimate comes near it: the whole request is capped at the same size.
const maxDecompressedBytes = DefaultMaxRequestBytes

// maxPooledBuf keeps rare huge batches from pinning memory in the pool.
const maxPooledBuf = 4 << 20

func errTooBig(limit int) error {
	return fmt.Errorf("%w: decompresses to more than %d bytes", ErrCorruptMessage, limit)
}

// Pools for what validation reuses between calls: decompression buffers and
// the stream readers, which are costly to allocate.
var (
	bufPool  = sync.Pool{New: func() any { return new([]byte) }}
	gzipPool sync.Pool // *gzipReader
	lz4Pool  sync.Pool // *lz4Reader
)

type gzipReader struct {
	src bytes.Reader
	r   *gzip.Reader // nil until the first stream with a valid header
}

type lz4Reader struct {
	src bytes.Reader
	r   *lz4.Reader
}

// zstdDecoder is shared by all callers: DecodeAll is safe for concurrent use
// and, without a stream, the decoder starts no goroutines.
var zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(maxDecompressedBytes))
	if err != nil {
		panic(err) // only fails on invalid options
	}
	return d
})

var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err)
	}
	return e
})

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// decompress appends the decompressed form of src to dst. Every failure
// wraps ErrCorruptMessage, including output past maxDecompressedBytes.
func decompress(dst []byte, c Codec, src []byte) ([]byte, error) {
	return decompressLimit(dst, c, src, maxDecompressedBytes)
}

// decompressLimit is decompress with the output capped at limit bytes, so
// tests can try bombs cheaply. zstd always uses maxDecompressedBytes: the
// shared decoder enforces it.
func decompressLimit(dst []byte, c Codec, src []byte, limit int) ([]byte, error) {
	var err error
	switch c {
	case CodecGzip:
		dst, err = gunzip(dst, src, limit)
	case CodecSnappy:
		dst, err = unsnappy(dst, src, limit)
	case CodecLZ4:
		dst, err = unlz4(dst, src, limit)
	case CodecZstd:
		dst, err = zstdDecoder().DecodeAll(src, dst)
	default:
		return dst, fmt.Errorf("%w: %v", ErrUnsupportedCompression, c)
	}
	if err != nil && !errors.Is(err, ErrCorruptMessage) {
		err = fmt.Errorf("%w: %v: %v", ErrCorruptMessage, c, err)
	}
	return dst, err
}

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	z, _ := gzipPool.Get().(*gzipReader)
	if z == nil {
		z = new(gzipReader)
	}
	defer func() {
		z.src.Reset(nil) // do not keep the batch alive from the pool
		gzipPool.Put(z)
	}()
	z.src.Reset(src)
	if z.r == nil {
		r, err := gzip.NewReader(&z.src)
		if err != nil {
			return dst, err
		}
		z.r = r
	} else if err := z.r.Reset(&z.src); err != nil {
		return dst, err
	}
	return readAllCapped(dst, z.r, limit)
}

func unlz4(dst, src []byte, limit int) ([]byte, error) {
	z, _ := lz4Pool.Get().(*lz4Reader)
	if z == nil {
		z = &lz4Reader{r: lz4.NewReader(nil)}
	}
	defer func() {
		z.src.Reset(nil)
		z.r.Reset(nil) // hands its block buffer back to lz4's pool
		lz4Pool.Put(z)
	}()
	z.src.Reset(src)
	z.r.Reset(&z.src)
	return readAllCapped(dst, z.r, limit)
}

// readAllCapped is io.ReadAll appending to dst, failing once it has appended
// more than limit bytes.
func readAllCapped(dst []byte, r io.Reader, limit int) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			if len(dst)-start > limit {
				return dst, errTooBig(limit)
			}
			// Double, but leave room for only one byte past the cap,
			// which is enough to tell that the cap was exceeded.
			grow := min(max(cap(dst), 4096), limit+1-(len(dst)-start))
			dst = slices.Grow(dst, grow)
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			if len(dst)-start > limit {
				return dst, errTooBig(limit)
			}
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// xerialMagic starts snappy data in the xerial (snappy-java) framing, which
// the Java client and librdkafka use: the magic, two int32s (version and
// minimum compatible version), then chunks of int32 length + snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

// unsnappy accepts both xerial-framed snappy and a single raw snappy block
// (franz-go, sarama, kafka-go).
func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	limit += len(dst) // appendSnappyBlock caps the total length
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
		return appendSnappyBlock(dst, src, limit)
	}
	src = src[xerialHeaderLen:]
	for len(src) > 0 {
		if len(src) < 4 {
			return dst, fmt.Errorf("%w: truncated xerial chunk length", ErrCorruptMessage)
		}
		n := int32(binary.BigEndian.Uint32(src))
		src = src[4:]
		if n < 0 || int(n) > len(src) {
			return dst, fmt.Errorf("%w: xerial chunk of %d bytes, %d left", ErrCorruptMessage, n, len(src))
		}
		var err error
		if dst, err = appendSnappyBlock(dst, src[:n], limit); err != nil {
			return dst, err
		}
		src = src[n:]
	}
	return dst, nil
}

// maxSnappyRatio bounds how far a snappy block can expand: the densest
// element, a 3-byte copy, yields 64 bytes. A larger claimed length is corrupt,
// and checking it first avoids allocating for it.
const maxSnappyRatio = 22

// appendSnappyBlock decodes a raw snappy block onto dst, which may grow to
// limit bytes in all.
func appendSnappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return dst, err
	}
	if n > limit-len(dst) {
		return dst, errTooBig(limit)
	}
	if n > maxSnappyRatio*len(block)+64 {
		return dst, fmt.Errorf("%w: snappy block of %d bytes claims %d", ErrCorruptMessage, len(block), n)
	}
	dst = slices.Grow(dst, n)
	// Decode writes into the spare capacity when it is large enough.
	if _, err := snappy.Decode(dst[len(dst):len(dst)+n], block); err != nil {
		return dst, err
	}
	return dst[:len(dst)+n], nil
}

// compress returns raw compressed with c (c is not CodecNone).
func compress(c Codec, raw []byte) ([]byte, error) {
	switch c {
	case CodecGzip:
		return gzipAt(raw, gzip.DefaultCompression)
	case CodecSnappy:
		return snappy.Encode(nil, raw), nil
	case CodecLZ4:
		return lz4At(raw, lz4.Fast) // lz4's default level
	case CodecZstd:
		return zstdEncoder().EncodeAll(raw, nil), nil
	}
	return nil, fmt.Errorf("%w: %v", ErrUnsupportedCompression, c)
}
