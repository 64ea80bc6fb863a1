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
