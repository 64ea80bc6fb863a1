package server

import "testing"

// A buffer from a class always has room for what was asked, and goes back
// to a class whose every request it can hold.
func TestResponseBufClasses(t *testing.T) {
	for _, n := range []int{1<<20 + 1, 2 << 20, 2<<20 + 1, 3 << 20, 100 << 20, 256 << 20} {
		b := getResponseBuf(n)
		if cap(*b) < n || len(*b) != 0 {
			t.Fatalf("getResponseBuf(%d): len %d cap %d", n, len(*b), cap(*b))
		}
		putResponseBuf(b)
		if again := getResponseBuf(n); cap(*again) < n {
			t.Fatalf("after a put, getResponseBuf(%d) has cap %d", n, cap(*again))
		}
	}
	if c := responseBufClass(300 << 20); c != -1 {
		t.Fatalf("300 MiB in class %d, want none", c)
	}
	// A grown buffer of 5 MiB serves the 4 MiB class, not the 8 MiB one.
	grown := make([]byte, 0, 5<<20)
	putResponseBuf(&grown)
	for range 3 {
		if b := getResponseBuf(7 << 20); cap(*b) < 7<<20 {
			t.Fatalf("an 8 MiB request got cap %d", cap(*b))
		}
	}
}
