package reference

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transactions and read_committed: a raw transactional producer (txn) and
// raw fetches, so the error codes, markers and offsets of each step are
// compared, plus a franz-go read_committed consumer for what a client keeps.
func init() {
	scenarios = append(scenarios,
		scenario{
			name: "txn-commit-abort",
			rows: []string{
				"transactions: commit, abort, commit; a read_uncommitted fetch (records and markers)",
				"… a read_committed fetch (AbortedTransactions) and a read_committed franz-go consumer",
			},
			run: func(r *run) []string {
				return r.txnAttempts("txn", "ref-txn", func(topic, id string) []string {
					r.create(topic, nil)
					x := r.initTxn(id, time.Minute)
					var steps []string
					for _, t := range []struct {
						prefix string
						n      int
						commit bool
					}{{"t", 3, true}, {"a", 3, false}, {"c", 2, true}} {
						add := x.addPartition(topic)
						p := x.produce(topic, vals(t.prefix, 0, t.n)...)
						steps = append(steps, fmt.Sprintf("add %s, produce %v, end(commit=%v) %s", add, p, t.commit, x.end(t.commit)))
					}
					r.waitStable(topic)
					u := r.fetch(1, topic, 0, 0)
					first := fmt.Sprintf("InitProducerId %s; %s; %s; read_uncommitted: records %s, markers %s",
						errName(x.initErr), strings.Join(steps, "; "), r.offsets(topic), spans(u.offsets, u.values), strings.Join(u.markers, " "))
					cl := r.client(kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
						kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
					second := fmt.Sprintf("%s; franz-go read_committed consumer: %s", r.committedView(topic), r.consume(cl, 5))
					return []string{first, second}
				})
			},
		},
		scenario{
			name: "txn-open-lso",
			rows: []string{
				"an open transaction holds the LSO back: ListOffsets (isolation 0 and 1), read_committed fetch at and below the LSO",
				"… the transaction commits: the LSO moves past its marker",
			},
			run: func(r *run) []string {
				return r.txnAttempts("txnopen", "ref-open", func(topic, id string) []string {
					r.create(topic, nil)
					p0 := r.produce(topic, acksAll, vals("p", 0, 2)...)
					x := r.initTxn(id, time.Minute)
					add := x.addPartition(topic)
					h := x.produce(topic, vals("h", 0, 3)...)
					p1 := r.produce(topic, acksAll, vals("p", 2, 4)...)
					below := r.fetch(1, topic, 0, 1)
					at := r.fetch(1, topic, 2, 1)
					first := fmt.Sprintf("acks=all %v; add %s, produce %v (open); acks=all %v; %s; read_committed at 0: %v; at the LSO: %v; read_uncommitted at 2: %v",
						p0, add, h, p1, r.offsets(topic), below, at, r.fetch(1, topic, 2, 0))
					end := x.end(true)
					r.waitStable(topic)
					second := fmt.Sprintf("end(commit) %s; %s; %s", end, r.offsets(topic), r.committedView(topic))
					return []string{first, second}
				})
			},
		},
		scenario{
			name: "txn-fencing",
			rows: []string{"producer fencing: a second InitProducerId for the transactional id while the first producer's transaction is open"},
			run: func(r *run) []string {
				return r.txnAttempts("txnfence", "ref-fence", func(topic, id string) []string {
					r.create(topic, nil)
					old := r.initTxn(id, time.Minute)
					add := old.addPartition(topic)
					f := old.produce(topic, vals("f", 0, 2)...)
					nw := r.initTxn(id, time.Minute)
					same := nw.pid == old.pid
					r.waitStable(topic) // the fenced transaction's abort marker
					// The fenced producer goes on: produce, add, commit.
					oldProduce := old.produce(topic, "f2")
					oldAdd := old.addPartition(topic)
					oldEnd := old.end(true)
					nAdd := nw.addPartition(topic)
					g := nw.produce(topic, vals("g", 0, 2)...)
					nEnd := nw.end(true)
					r.waitStable(topic)
					return []string{fmt.Sprintf("add %s, produce %v; second InitProducerId %s (same producer id %v, epoch +%d); fenced producer: produce %v, add %s, end(commit) %s; new producer: add %s, produce %v, end(commit) %s; %s",
						add, f, errName(nw.initErr), same, nw.epoch-old.epoch, oldProduce, oldAdd, oldEnd, nAdd, g, nEnd, r.committedView(topic))}
				})
			},
		},
		scenario{
			name: "txn-offsets",
			rows: []string{"TxnOffsetCommit: OffsetFetch (require_stable false and true) while pending, after the commit, after an aborted one"},
			run: func(r *run) []string {
				r.create("txnoff", nil)
				r.produce("txnoff", acksAll, vals("a", 0, 10)...)
				x := r.initTxn("ref-offsets", time.Minute)
				var out []string
				for _, t := range []struct {
					offset int64
					commit bool
				}{{5, true}, {9, false}} {
					add := x.addOffsets("txg")
					c := x.commitOffset("txg", "txnoff", t.offset)
					pending := fmt.Sprintf("pending: %s / stable %s", r.fetchOffset("txg", "txnoff", false), r.fetchOffset("txg", "txnoff", true))
					end := x.end(t.commit)
					var after string
					r.waitFor("stable offsets", func() bool {
						after = r.fetchOffset("txg", "txnoff", true)
						return !strings.Contains(after, "UNSTABLE")
					})
					out = append(out, fmt.Sprintf("AddOffsetsToTxn %s, TxnOffsetCommit %d %s; %s; end(commit=%v) %s; then %s",
						add, t.offset, c, pending, t.commit, end, after))
				}
				return []string{strings.Join(out, "; ")}
			},
		},
		scenario{
			name: "txn-timeout",
			rows: []string{"a hanging transaction (transaction.timeout.ms 2 s) is aborted by its coordinator; the producer then commits"},
			run: func(r *run) []string {
				return r.txnAttempts("txnhang", "ref-hang", func(topic, id string) []string {
					r.create(topic, nil)
					x := r.initTxn(id, 2*time.Second)
					add := x.addPartition(topic)
					h := x.produce(topic, vals("h", 0, 3)...)
					open := r.offsets(topic)
					r.waitStable(topic) // the coordinator's abort marker
					end := x.end(true)
					return []string{fmt.Sprintf("add %s, produce %v; open: %s; after the timeout: %s; %s; the producer's end(commit) %s",
						add, h, open, r.offsets(topic), r.committedView(topic), end)}
				})
			},
		},
	)
}

// txnAttempts runs a transaction scenario on topic and transactional id,
// and again (up to three times, on new ones) when Kafka wrote a marker
// twice: its coordinator retries WriteTxnMarkers when the first write's
// answer is late on a loaded machine, and the duplicate moves every later
// offset by one. That is timing, not behaviour; a duplicate on the last
// attempt stays in the observations (and fails the row).
func (r *run) txnAttempts(topic, id string, body func(topic, id string) []string) []string {
	for attempt := 0; ; attempt++ {
		t, x := topic, id
		if attempt > 0 {
			t, x = fmt.Sprintf("%s-%d", topic, attempt), fmt.Sprintf("%s-%d", id, attempt)
		}
		out := body(t, x)
		f := r.fetch(1, t, 0, 0)
		dup := false
		for i := 1; i < len(f.markers); i++ {
			o1, typ1, _ := strings.Cut(f.markers[i-1], ":")
			o2, typ2, _ := strings.Cut(f.markers[i], ":")
			var a, b int64
			fmt.Sscan(o1, &a)
			fmt.Sscan(o2, &b)
			dup = dup || (typ1 == typ2 && b == a+1)
		}
		if !dup || attempt == 2 {
			return out
		}
		r.Logf("%s: a transaction marker was written twice (%v): running the scenario again", r.tg.Name(), f.markers)
	}
}

// fetchOffset is OffsetFetch v7 of partition 0 of topic for group, with
// require_stable: the committed offset, -1 for none, or the error.
func (r *run) fetchOffset(group, topic string, stable bool) string {
	r.Helper()
	req := at(7, kmsg.NewPtrOffsetFetchRequest())
	req.Group, req.RequireStable = group, stable
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(r.ctx, 20*time.Second)
	defer cancel()
	resp, err := RoundTrip(ctx, r.tg.Addr(r.coordinator(group)), req)
	if err != nil {
		r.Fatal(err)
	}
	o := resp.(*kmsg.OffsetFetchResponse)
	if o.ErrorCode != 0 {
		return errName(o.ErrorCode)
	}
	p := o.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return errName(p.ErrorCode)
	}
	return fmt.Sprint(p.Offset)
}
