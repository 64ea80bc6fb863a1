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

// chunkReader hands out at most the next chunk size per Read, cycling
// through sizes, and records the size of every buffer it was asked to fill.
type chunkReader struct {
	r      io.Reader
	chunks []int
	i      int
	asked  []int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	c.asked = append(c.asked, len(p))
	n := c.chunks[c.i%len(c.chunks)]
	c.i++
	return c.r.Read(p[:min(n, len(p))])
}

// TestFrameReader: the same frames as ReadFrame, whatever the connection's
// chunking, with large bodies read straight into the frame.
func TestFrameReader(t *testing.T) {
	const bufSize = 4096
	sizes := []int32{0, 3, 100, bufSize - 4, bufSize, directReadMin - 1, directReadMin + bufSize, 200_000, 7, 70_000}
	var stream []byte
	var want [][]byte
	for i, n := range sizes {
		body := bytes.Repeat([]byte{byte(i + 1)}, int(n))
		want = append(want, body)
		stream = append(stream, frame(n, body)...)
	}
	for _, chunks := range [][]int{{1 << 30}, {1}, {5, 4093, 17}, {65536, 3}} {
		src := &chunkReader{r: bytes.NewReader(stream), chunks: chunks}
		fr := NewFrameReader(src, bufSize, 0)
		for i, w := range want {
			got, err := fr.Next()
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("chunks %v, frame %d: %d bytes, %v; want %d bytes", chunks, i, len(got), err, len(w))
			}
		}
		if _, err := fr.Next(); err != io.EOF {
			t.Fatalf("chunks %v: after the last frame %v, want io.EOF", chunks, err)
		}
		direct := false
		for _, n := range src.asked {
			direct = direct || n > bufSize
		}
		if !direct {
			t.Errorf("chunks %v: no read went straight into a frame (reads asked for %v)", chunks, src.asked)
		}
	}
	// NextInto reads into the buffer it is given when that is large enough.
	fr := NewFrameReader(bytes.NewReader(stream), bufSize, 0)
	buf := make([]byte, 0, 100_000)
	for i, w := range want {
		got, err := fr.NextInto(buf)
		if err != nil || !bytes.Equal(got, w) {
			t.Fatalf("NextInto, frame %d: %d bytes, %v; want %d bytes", i, len(got), err, len(w))
		}
		if reused := cap(got) > 0 && &got[:1][0] == &buf[:1][0]; reused != (len(w) <= cap(buf)) {
			t.Errorf("NextInto, frame %d of %d bytes: buffer reused %v", i, len(w), reused)
		}
	}
	// A large frame cut short is ErrUnexpectedEOF, as from ReadFrame.
	cut := frame(100_000, make([]byte, 50_000))
	if _, err := NewFrameReader(bytes.NewReader(cut), bufSize, 0).Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut frame: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := NewFrameReader(bytes.NewReader(frame(11, nil)), bufSize, 10).Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
}
