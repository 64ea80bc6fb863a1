package protocol

import (
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
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}
