package authorizer

import (
	"fmt"
	"testing"
)

// BenchmarkAuthorize is one produce-path check against 100 bindings.
func BenchmarkAuthorize(b *testing.B) {
	s := &Set{}
	for i := range 100 {
		s = s.Add(allow(ResourceTopic, PatternLiteral, fmt.Sprintf("topic-%d", i), fmt.Sprintf("User:u%d", i%10), OpWrite))
	}
	a := Action{"User:u3", "127.0.0.1", OpWrite, ResourceTopic, "topic-53"}
	for b.Loop() {
		if !s.Authorize(a) {
			b.Fatal("denied")
		}
	}
}
