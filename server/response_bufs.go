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
// batch goes out as it is), so that a consumer's fetches do not each
// allocate, clear and collect their size in new memory: a small response's
// go into the connection's own buffer (kept, up to fetchSpaceOwn), a large
// one's into buffers from the pools above, taken for the response being
// built and given back once it is written. raws is readPartition's scratch
// list of batches.
type fetchSpace struct {
	own  []byte    // the connection's buffer for small responses
	cur  *[]byte   // the pooled buffer being filled; nil when none is held
	full []*[]byte // earlier pooled buffers of the same response
	raws [][]byte
}

// fetchSpaceOwn is the most a connection keeps of its own: a test's
// consumer fetching a few batches reuses it, and never pays for a pooled
// buffer of 2 MiB that a collection may have emptied.
const fetchSpaceOwn = 64 << 10

// take returns n bytes of space, valid until reset or release.
func (fs *fetchSpace) take(n int) []byte {
	if fs.cur == nil && len(fs.own)+n <= fetchSpaceOwn {
		if cap(fs.own)-len(fs.own) < n {
			// A bigger one; the old one stays with the partitions
			// already in it.
			fs.own = make([]byte, 0, min(fetchSpaceOwn, max(2*cap(fs.own), len(fs.own)+n, 4<<10)))
		}
		return carve(&fs.own, n)
	}
	if fs.cur == nil || cap(*fs.cur)-len(*fs.cur) < n {
		if fs.cur != nil {
			fs.full = append(fs.full, fs.cur) // still holds earlier partitions
		}
		fs.cur = getResponseBuf(n)
	}
	return carve(fs.cur, n)
}

// carve takes n bytes off the end of *b, which has room for them.
func carve(b *[]byte, n int) []byte {
	start := len(*b)
	*b = (*b)[:start+n]
	return (*b)[start : start+n : start+n]
}

// release gives the space back once the response is written, or before
// a response is built anew.
func (fs *fetchSpace) release() {
	fs.own = fs.own[:0]
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
