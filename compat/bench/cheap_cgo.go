//go:build cgo && linux

package bench

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static long long cheap_in_use(void) {
	struct mallinfo2 mi = mallinfo2();
	return (long long)(mi.uordblks + mi.hblkhd);
}
#else
static long long cheap_in_use(void) { return -1; }
#endif
*/
import "C"

// cHeapInUse is the C heap in use by malloc in this process (glibc's
// mallinfo2: small blocks plus mmapped ones), which is where librdkafka's
// mock cluster keeps its data.
func cHeapInUse() (int64, bool) {
	n := int64(C.cheap_in_use())
	return n, n >= 0
}
