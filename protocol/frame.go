package protocol

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxRequestBytes is Kafka's socket.request.max.bytes default.
const DefaultMaxRequestBytes = 100 << 20

// ErrFrameTooLarge is returned by ReadFrame when a size prefix is negative or
// above the limit. The connection cannot be resynchronised after it, so the
// caller should close it.
var ErrFrameTooLarge = errors.New("protocol: frame size out of range")

// ReadFrame reads one size-prefixed frame from r and returns its body without
// the 4-byte prefix. The body is always a fresh slice: callers keep sub-slices
// of it (record batches) for as long as the log lives.
//
// A maxSize of 0 or less means DefaultMaxRequestBytes. A size prefix above it or
// below zero gives an error wrapping ErrFrameTooLarge and the body is not
// read. io.EOF is returned only for a clean EOF before the prefix; a frame cut
// short anywhere else gives io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, maxSize int32) ([]byte, error) {
	body, err := readFrameHead(r, maxSize, nil)
	if err == nil {
		err = readBody(r, body)
	}
	if err != nil {
		return nil, err
	}
	return body, nil
}

// readFrameHead reads a size prefix and returns the body it announces: buf
// resliced when its capacity suffices, else a new slice.
func readFrameHead(r io.Reader, maxSize int32, buf []byte) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxRequestBytes
	}
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err // io.EOF or io.ErrUnexpectedEOF, as io.ReadFull reports them
	}
	size := int32(binary.BigEndian.Uint32(prefix[:]))
	if size < 0 || size > maxSize {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, size, maxSize)
	}
	if buf != nil && int(size) <= cap(buf) {
		return buf[:size], nil
	}
	return make([]byte, size), nil
}

func readBody(r io.Reader, body []byte) error {
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// directReadMin is the part of a frame, beyond what the buffer holds, from
// which FrameReader reads it straight from the connection.
const directReadMin = 16 << 10

// FrameReader reads frames as ReadFrame does, from a connection through a
// buffer that small frames share (one read system call for many pipelined
// requests). A large frame's body is read into the frame itself, after
// what the buffer already holds: through the buffer every byte of it would
// be copied twice, and Produce requests are mostly record bytes.
type FrameReader struct {
	src     io.Reader
	buf     *bufio.Reader
	maxSize int32
}

// NewFrameReader reads from src with a buffer of bufSize bytes; maxSize is
// as for ReadFrame.
func NewFrameReader(src io.Reader, bufSize int, maxSize int32) *FrameReader {
	return &FrameReader{src: src, buf: bufio.NewReaderSize(src, bufSize), maxSize: maxSize}
}

// Next reads the next frame into a fresh slice; its errors are ReadFrame's.
func (f *FrameReader) Next() ([]byte, error) { return f.NextInto(nil) }

// NextInto is Next reading into buf when it is large enough (a client that
// is done with each frame before the next).
func (f *FrameReader) NextInto(buf []byte) ([]byte, error) {
	body, err := readFrameHead(f.buf, f.maxSize, buf)
	if err != nil {
		return nil, err
	}
	if n := f.buf.Buffered(); len(body)-n < directReadMin {
		err = readBody(f.buf, body)
	} else if err = readBody(f.buf, body[:n]); err == nil {
		// The buffer is empty now, so the rest comes next on the connection.
		err = readBody(f.src, body[n:])
	}
	if err != nil {
		return nil, err
	}
	return body, nil
}
