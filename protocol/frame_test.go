package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// countingReader counts the bytes handed out, to prove what was not read.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func frame(size int32, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(size)), body...)
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name     string
		in       []byte
		max      int32
		want     []byte
		wantErr  error
		wantRead int // bytes consumed from the reader; -1 = do not check
	}{
		{name: "ok", in: frame(3, []byte("abc")), max: 10, want: []byte("abc"), wantRead: 7},
		{name: "ok at max", in: frame(3, []byte("abc")), max: 3, want: []byte("abc"), wantRead: 7},
		{name: "empty body", in: frame(0, nil), max: 10, want: []byte{}, wantRead: 4},
		{name: "leaves next frame", in: append(frame(1, []byte("x")), frame(1, []byte("y"))...), max: 10, want: []byte("x"), wantRead: -1},
		{name: "default max", in: frame(3, []byte("abc")), max: 0, want: []byte("abc"), wantRead: 7},
		{name: "over max", in: frame(11, make([]byte, 11)), max: 10, wantErr: ErrFrameTooLarge, wantRead: 4},
		{name: "over default max", in: frame(DefaultMaxRequestBytes+1, make([]byte, 64)), max: -1, wantErr: ErrFrameTooLarge, wantRead: 4},
		{name: "negative", in: frame(-1, make([]byte, 8)), max: 10, wantErr: ErrFrameTooLarge, wantRead: 4},
		{name: "min int32", in: frame(-1<<31, make([]byte, 8)), max: 10, wantErr: ErrFrameTooLarge, wantRead: 4},
		{name: "clean EOF", in: nil, max: 10, wantErr: io.EOF, wantRead: 0},
		{name: "truncated prefix", in: []byte{0, 0}, max: 10, wantErr: io.ErrUnexpectedEOF, wantRead: 2},
		{name: "prefix without body", in: frame(5, nil), max: 10, wantErr: io.ErrUnexpectedEOF, wantRead: 4},
		{name: "truncated body", in: frame(5, []byte("ab")), max: 10, wantErr: io.ErrUnexpectedEOF, wantRead: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &countingReader{r: bytes.NewReader(tt.in)}
			got, err := ReadFrame(cr, tt.max)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == io.EOF && err != io.EOF {
				t.Fatalf("clean EOF must be io.EOF itself, got %v", err)
			}
			if !bytes.Equal(got, tt.want) || (tt.want != nil) != (got != nil) {
				t.Fatalf("body = %q, want %q", got, tt.want)
			}
			if tt.wantRead >= 0 && cr.n != tt.wantRead {
				t.Fatalf("read %d bytes, want %d", cr.n, tt.wantRead)
			}
		})
	}
}

func TestReadFrameFreshBuffers(t *testing.T) {
	in := append(frame(3, []byte("abc")), frame(3, []byte("def"))...)
	r := bytes.NewReader(in)
	a, err := ReadFrame(r, 10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadFrame(r, 10)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != "abc" || string(b) != "def" {
		t.Fatalf("frames %q %q; the first must survive reading the second", a, b)
	}
	if _, err := ReadFrame(r, 10); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0})
	f.Add(frame(0, nil))
	f.Add(frame(3, []byte("abc")))
	f.Add(frame(3, []byte("ab")))
	f.Add(frame(-1, []byte("abc")))
	f.Add(frame(1<<20, []byte("abc")))
	f.Fuzz(func(t *testing.T, in []byte) {
		const limit = 1 << 16
		body, err := ReadFrame(bytes.NewReader(in), limit)
		if err != nil {
			if body != nil {
				t.Fatal("body with an error")
			}
			return
		}
		size := int32(binary.BigEndian.Uint32(in))
		if size < 0 || size > limit || int(size) != len(body) || !bytes.Equal(body, in[4:4+size]) {
			t.Fatalf("size %d, body %d bytes", size, len(body))
		}
	})
}
