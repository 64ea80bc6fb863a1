package server

import (
	"flag"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The chaos soak is not part of the default suite: it runs the presets
// one after another, each with a new seed, for as long as asked,
//
//	go test ./server -run TestChaosSoak -chaos-soak 10m -timeout 30m -v
//
// and -chaos-soak-seed N starts the seeds at N to replay a failed one.
var (
	chaosSoakFor  = flag.Duration("chaos-soak", 0, "run TestChaosSoak for this long (0 skips it)")
	chaosSoakSeed = flag.Uint64("chaos-soak-seed", 0, "TestChaosSoak's first seed (0: from the clock)")
)

// TestChaosSoak: many seeded runs of every preset against franz-go, each
// checked by the report (no violation; under gentle no acks=all loss and
// no read that vanished).
func TestChaosSoak(t *testing.T) {
	if *chaosSoakFor == 0 {
		t.Skip("run with -chaos-soak DURATION, e.g. go test ./server -run TestChaosSoak -chaos-soak 10m -timeout 30m -v")
	}
	seed := *chaosSoakSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()) % 1_000_000
	}
	presets := []struct {
		name string
		opts []kgo.Opt
	}{
		{"gentle", []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}},
		{"rough", []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}},
		{"network", []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}},
	}
	deadline := time.Now().Add(*chaosSoakFor)
	runs := 0
	for ; time.Now().Before(deadline); seed++ {
		p := presets[runs%len(presets)]
		runs++
		ok := t.Run(fmt.Sprintf("%s/seed=%d", p.name, seed), func(t *testing.T) {
			rep := presetRunSeed(t, p.name, strconv.FormatUint(seed, 10), p.opts...)
			if p.name != "gentle" {
				return
			}
			for _, part := range rep.Partitions {
				if len(part.Lost) > 0 || len(part.ReadThenLost) > 0 {
					t.Fatalf("gentle lost records: %+v", part)
				}
			}
		})
		if !ok {
			t.Fatalf("replay with -chaos-soak-seed %d (preset %s)", seed, p.name)
		}
	}
	t.Logf("%d runs", runs)
}
