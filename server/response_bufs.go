package server

import (
	"math/bits"
	"sync"
)

// maxConnOut is the largest response buffer a connection keeps between
// responses: an idle consumer must not pin a big fetch's buffer.
const maxConnOut = 1 << 20

// Fetch responses above maxConnOut are encoded into buffers shared by every
// connection through pools by power-of-two size, so a busy consumer does
// not allocate (and the runtime clear) megabytes per response, and the GC
// still frees what nobody uses.
var responseBufs [8]sync.Pool // 2 MiB, 4 MiB, ... 256 MiB

// responseBufClass is the pool for n bytes, or -1 past the largest.
func responseBufClass(n int) int {
	c := bits.Len(uint(n-1)) - 21 // 2 MiB is class 0
	if c < 0 {
		c = 0
	}
	if c >= len(responseBufs) {
		return -1
	}
	return c
}

// getResponseBuf returns an empty buffer with room for n bytes.
func getResponseBuf(n int) *[]byte {
	c := responseBufClass(n)
	if c >= 0 {
		if b, _ := responseBufs[c].Get().(*[]byte); b != nil {
			*b = (*b)[:0] // put back with what it held
			return b
		}
		n = 1 << (c + 21)
	}
	b := make([]byte, 0, n)
	return &b
}

// putResponseBuf returns b to its pool once written.
func putResponseBuf(b *[]byte) {
	// A response that outgrew its size hint was reallocated by append:
	// file it under the largest class it can serve.
	if c := bits.Len(uint(cap(*b))) - 1 - 21; c >= 0 && c < len(responseBufs) {
		responseBufs[c].Put(b)
	}
}

// fetchSpace is where a connection gathers the record bytes of a Fetch
// response's partitions that return more than one batch (one stored
// batch goes out as it is): buffers from the pools above, taken for the
// response being built and given back once it is written, so that a
// consumer's fetches do not each allocate, clear and collect their size in
// new memory. raws is readPartition's scratch list of batches.
type fetchSpace struct {
	cur  *[]byte   // the buffer being filled; nil when none is held
	full []*[]byte // earlier buffers of the same response
	raws [][]byte
}

// take returns n bytes of space, valid until reset or release.
func (fs *fetchSpace) take(n int) []byte {
	if fs.cur == nil || cap(*fs.cur)-len(*fs.cur) < n {
		if fs.cur != nil {
			fs.full = append(fs.full, fs.cur) // still holds earlier partitions
		}
		fs.cur = getResponseBuf(n)
	}
	b := *fs.cur
	start := len(b)
	*fs.cur = b[:start+n]
	return b[start : start+n : start+n]
}

// reset makes all the space free again, for a response built anew.
func (fs *fetchSpace) reset() {
	fs.release()
}

// release gives the space back to the pools once the response is written.
func (fs *fetchSpace) release() {
	for _, b := range fs.full {
		putResponseBuf(b)
	}
	clear(fs.full)
	fs.full = fs.full[:0]
	if fs.cur != nil {
		putResponseBuf(fs.cur)
		fs.cur = nil
	}
}
