package reference

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// scenario is written once and run on both targets; each row is one thing
// a client observed, compared between them.
type scenario struct {
	name string
	rows []string
	run  func(r *run) []string
}

const (
	acksAll = -1
	acks1   = 1
)

var scenarios = []scenario{
	{
		name: "acks",
		rows: []string{"acks=0, 1 and all on a healthy cluster"},
		run: func(r *run) []string {
			r.create("acks", nil)
			// One connection, as a producer has: a broker handles its
			// requests in order, so the acks=0 batch lands first.
			cn, err := Dial(r.ctx, r.tg.Addr(1))
			if err != nil {
				r.Fatal(err)
			}
			defer cn.Close()
			var out []string
			for _, c := range []struct {
				acks   int16
				prefix string
			}{{0, "z"}, {1, "o"}, {-1, "a"}} {
				resp, err := cn.Do(r.ctx, produceReq(11, "acks", 0, c.acks, batch(r, -1, -1, -1, vals(c.prefix, 0, 5))))
				res := produced{base: -1}
				if err != nil {
					r.Fatal(err)
				} else if resp != nil {
					p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
					res = produced{p.ErrorCode, p.BaseOffset}
				}
				out = append(out, fmt.Sprintf("acks=%d %v", c.acks, res))
			}
			r.waitFor("the HW to reach 15", func() bool { return r.fetch(1, "acks", 0, 0).hw == 15 })
			out = append(out, r.offsets("acks"), "read "+r.readAll(1, "acks"))
			return []string{strings.Join(out, "; ")}
		},
	},
	{
		name: "not-enough-replicas",
		rows: []string{
			"min.insync.replicas=3, follower 3 paused until it leaves the ISR",
			"… follower 3 resumed and back in the ISR",
		},
		run: func(r *run) []string {
			r.create("nerep", map[string]string{"min.insync.replicas": "3"})
			before := fmt.Sprintf("acks=all %v", r.produce("nerep", acksAll, "a0"))
			r.pause(3)
			// A follower of an idle partition stays in sync: only a record
			// it does not fetch puts it behind.
			behind := r.produce("nerep", acks1, "o0")
			p := r.waitISR("nerep", 1, 2)
			during := fmt.Sprintf("%s; acks=1 %v; %v; acks=all %v; acks=1 %v; %s", before, behind, p,
				r.produce("nerep", acksAll, "a1"), r.produce("nerep", acks1, "o1"), r.offsets("nerep"))
			r.resume(3)
			p = r.waitISR("nerep", 1, 2, 3)
			r.waitFor("the HW to reach 3", func() bool { return r.fetch(1, "nerep", 0, 0).hw == 3 })
			after := fmt.Sprintf("%v; acks=all %v; %s; read %s", p, r.produce("nerep", acksAll, "a2"), r.offsets("nerep"), r.readAll(1, "nerep"))
			return []string{during, after}
		},
	},
	{
		name: "acks1-loss",
		rows: []string{
			"acks=1 records lost: followers paused, leader crashes before the ISR shrinks",
			"… the old leader restarts, truncates, and is elected again (preferred)",
		},
		run: func(r *run) []string {
			r.create("loss", nil)
			a := r.produce("loss", acksAll, vals("a", 0, 5)...)
			r.pause(2)
			r.pause(3)
			r.letParkedFetchesExpire()
			o := r.produce("loss", acks1, vals("o", 0, 5)...)
			r.crash(1)
			r.resume(2)
			r.resume(3)
			p := r.waitLeader("loss", func(l int32) bool { return l == 2 || l == 3 })
			b := r.produce("loss", acksAll, vals("b", 0, 3)...)
			first := fmt.Sprintf("acks=all %v, acks=1 %v; after the crash %v; acks=all %v; %s; read %s; %s",
				a, o, p, b, r.offsets("loss"), r.readAll(p.leader, "loss"), r.endOffsetFor(p.leader, "loss", 0))
			r.start(1)
			r.waitISR("loss", 1, 2, 3)
			e := r.elect("loss", 0)
			p = r.waitLeader("loss", func(l int32) bool { return l == 1 })
			second := fmt.Sprintf("preferred election %s; %v; read from 1: %s", e, p, r.readAll(1, "loss"))
			return []string{first, second}
		},
	},
	{
		name: "unclean",
		rows: []string{
			"unclean election of a crashed, lagging replica: what a consumer at the old end sees",
			"… the old replicas restart and truncate to the new leader's log",
		},
		run: func(r *run) []string {
			r.create("unclean", nil)
			r.produce("unclean", acksAll, vals("a", 0, 5)...)
			// Broker 3 crashes rather than pauses: a SIGSTOPped Kafka broker
			// still has its parked fetch answered into its socket, and
			// appends those records the moment it resumes.
			r.crash(3)
			b := r.produce("unclean", acksAll, vals("b", 0, 5)...) // done once 3 leaves the ISR
			r.waitISR("unclean", 1, 2)
			r.crash(1)
			r.waitLeader("unclean", func(l int32) bool { return l == 2 })
			r.crash(2)
			r.start(3)
			p := r.waitLeader("unclean", func(l int32) bool { return l == -1 })
			r.waitFor("broker 3 alone in Metadata", func() bool {
				b := r.meta("unclean").brokers
				return len(b) == 1 && b[0] == 3
			})
			clean := r.elect("unclean", 0)
			unclean := r.elect("unclean", 1)
			q := r.waitLeader("unclean", func(l int32) bool { return l == 3 })
			c := r.produce("unclean", acks1, vals("c", 0, 3)...)
			first := fmt.Sprintf("acks=all %v; leaderless %v; preferred election %s, unclean %s; %v; acks=1 %v; %s; fetch at 10: %v; %s",
				b, p, clean, unclean, q, c, r.offsets("unclean"), r.fetch(3, "unclean", 10, 0), r.endOffsetFor(3, "unclean", 1))
			r.start(1)
			r.start(2)
			r.waitISR("unclean", 1, 2, 3)
			e := r.elect("unclean", 0)
			q = r.waitLeader("unclean", func(l int32) bool { return l == 1 })
			second := fmt.Sprintf("preferred election %s; %v; read from 1: %s", e, q, r.readAll(1, "unclean"))
			return []string{first, second}
		},
	},
	{
		name: "fetch-hw",
		rows: []string{"fetch below, at, between HW and LEO, at and past the LEO (followers paused, acks=1)"},
		run: func(r *run) []string {
			r.create("fhw", nil)
			r.produce("fhw", acksAll, vals("a", 0, 5)...)
			r.pause(2)
			r.pause(3)
			o := r.produce("fhw", acks1, vals("o", 0, 5)...)
			var out []string
			out = append(out, fmt.Sprintf("acks=1 %v", o), r.offsets("fhw"))
			for _, at := range []int64{3, 5, 7, 10, 11} {
				out = append(out, fmt.Sprintf("at %d: %v", at, r.fetch(1, "fhw", at, 0)))
			}
			out = append(out, fmt.Sprintf("read_committed at 3: %v", r.fetch(1, "fhw", 3, 1)))
			r.resume(2)
			r.resume(3)
			r.waitFor("the HW to reach 10", func() bool { return r.fetch(1, "fhw", 0, 0).hw == 10 })
			return []string{strings.Join(out, "; ")}
		},
	},
	{
		name: "delete-records",
		rows: []string{"DeleteRecords: to 4, then past the HW, then to the HW (-1)"},
		run: func(r *run) []string {
			r.create("delrec", nil)
			r.produce("delrec", acksAll, vals("a", 0, 10)...)
			var out []string
			for _, to := range []int64{4, 20, -1} {
				out = append(out, fmt.Sprintf("to %d: %s", to, r.deleteRecords("delrec", to)))
				if to == 4 {
					out = append(out, r.offsets("delrec"), fmt.Sprintf("fetch at 2: %v", r.fetch(1, "delrec", 2, 0)))
				}
			}
			out = append(out, r.offsets("delrec"))
			return []string{strings.Join(out, "; ")}
		},
	},
}
