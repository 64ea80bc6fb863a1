package protocol

import (
	"bytes"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression at a chosen level, for a broker that recompresses produced
// batches to its topic's compression.type with compression.<codec>.level.
// Snappy has no levels. Out-of-range levels (the topic configs are
// validated before they get here) fall back to the codec's default.

// zstdEncoders holds one encoder per zstd level used; EncodeAll is safe for
// concurrent use.
var zstdEncoders sync.Map // zstd.EncoderLevel -> *zstd.Encoder

func compressLevel(c Codec, level int, raw []byte) ([]byte, error) {
	if level == DefaultLevel {
		return compress(c, raw)
	}
	switch c {
	case CodecGzip:
		if level < gzip.DefaultCompression || level > gzip.BestCompression {
			return compress(c, raw)
		}
		return gzipAt(raw, level)
	case CodecLZ4:
		// Kafka's levels 1-17 (LZ4 HC above 9); lz4/v4 has 1-9.
		l := lz4.Fast
		if level > 1 {
			l = lz4.CompressionLevel(1 << (8 + min(level, 9)))
		}
		return lz4At(raw, l)
	case CodecZstd:
		l := zstd.EncoderLevelFromZstd(level)
		e, ok := zstdEncoders.Load(l)
		if !ok {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(l))
			if err != nil {
				return nil, err
			}
			e, _ = zstdEncoders.LoadOrStore(l, enc)
		}
		return e.(*zstd.Encoder).EncodeAll(raw, nil), nil
	}
	return compress(c, raw)
}

// gzipAt compresses raw with gzip at level.
func gzipAt(raw []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// lz4At compresses raw as an LZ4 frame with 64 KiB blocks (Kafka's) at
// level.
func lz4At(raw []byte, level lz4.CompressionLevel) ([]byte, error) {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.CompressionLevelOption(level)); err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
