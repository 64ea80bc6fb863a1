package server

import (
	"slices"
	"testing"
)

// TestJavaTopicPartitionOrder: the iteration order of a java.util.HashMap
// keyed by __consumer_offsets TopicPartitions, as Java 17 printed it for
// these insertion orders by computeIfAbsent (the last one grows the table
// to 32).
func TestJavaTopicPartitionOrder(t *testing.T) {
	for _, tc := range []struct{ in, want []int32 }{
		{[]int32{7, 3, 12, 0, 45}, []int32{0, 45, 12, 7, 3}},
		{[]int32{3, 35, 1, 33, 17}, []int32{35, 3, 17, 33, 1}}, // one bin: the newest first
		{[]int32{49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 1, 2, 3},
			[]int32{47, 48, 45, 46, 43, 44, 41, 42, 49, 39, 40, 37, 38, 3, 35, 36, 1, 2}},
	} {
		if got := javaTopicPartitionOrder(offsetsTopic, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.in, got, tc.want)
		}
	}
}
