package group

// javaHashOrder is the order in which a java.util.HashMap with default
// settings, filled with keys in the given order, iterates them: Kafka
// lists some topics in that order (a status's "Internal topics are
// missing: ..."), and an answer should read the same.
func javaHashOrder(keys []string) []string {
	n := 16
	for float64(len(keys)) > 0.75*float64(n) {
		n *= 2
	}
	buckets := make([][]string, n)
	for _, k := range keys {
		var h int32
		for _, c := range []rune(k) { // String.hashCode over UTF-16 units (BMP here)
			h = 31*h + int32(c)
		}
		i := (uint32(h) ^ uint32(h)>>16) & uint32(n-1)
		buckets[i] = append(buckets[i], k)
	}
	out := make([]string, 0, len(keys))
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}
