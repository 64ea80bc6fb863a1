package reference

import (
	"fmt"
	"time"
)

// Failure timing (issue 25): after a crash Kafka's controller keeps the
// broker's leaderships until its session times out (broker.session.timeout.ms,
// 6 s on both reference clusters; Kafka counts from the broker's last
// heartbeat, sent every 2 s, so 4-6 s after the crash, fakekafka from the
// crash). fakekafka's default fences at once; `--timing kafka` gives Kafka's
// 9 s (docs/failures.md).
func init() {
	scenarios = append(scenarios, scenario{
		name: "crash-session-timeout",
		rows: []string{"the leader's broker crashes: its partition keeps it until the broker session times out (6 s)"},
		run: func(r *run) []string {
			r.create("crashsess", nil)
			before := r.produce("crashsess", acksAll, "a0")
			crashed := time.Now()
			r.crash(1)
			right := r.meta("crashsess")
			p := r.waitLeader("crashsess", func(l int32) bool { return l >= 0 && l != 1 })
			took := time.Since(crashed)
			r.Logf("%s: new leader %d after %v", r.tg.Name(), p.leader, took)
			var when string
			switch {
			case took < 4*time.Second:
				when = "under 4 s"
			case took < 9*time.Second:
				when = "after 4-9 s"
			default:
				when = "after 9 s or more"
			}
			return []string{fmt.Sprintf("acks=all %v; right after the crash: leader %d; a new leader (not 1) %s; isr %v",
				before, right.leader, when, p.isr)}
		},
	})
}
