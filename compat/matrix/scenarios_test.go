package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/server"
)

// scenarios are the table's rows, in order.
var scenarios = []scenario{
	{"compression", "1. produce/consume round trip, every codec", scCompression},
	{"min-isr", "2. acks=all, ISR below min.insync.replicas, then healed", scMinISR},
	{"injected-ner", "3. 3 injected NOT_ENOUGH_REPLICAS", scInjectedNER},
	{"failover", "4. leader crash mid-stream", scFailover},
	{"group", "5. group: join, leave, coordinator crash", scGroup},
	{"unclean", "6. unclean election truncates the consumer's position", scUnclean},
	{"metadata", "7. metadata: brokers, leaders, replicas, ISR", scMetadata},
	{"transactions", "8. transactions: commit, abort, read_committed", scTransactions},
	{"txn-offsets-fencing", "9. transactions: offsets sent in the transaction, fencing", scTxnOffsetsFencing},
	{"security", "10. SASL_SSL with SCRAM-SHA-512: wrong password, produce, consume", scSecurity},
}

func clientID(cl Client, scenario string) string { return "matrix-" + scenario + "-" + cl.Name() }

// scCompression produces 20 compressible records with each codec the
// client has, consumes them back with the same client, and checks that
// fakekafka stored batches of that codec.
func scCompression(r *cell, cl Client) {
	c := server.NewTestCluster(r, server.Config{})
	ctx := context.Background()
	const n = 20
	var used []string
	var unsupported []string
	reason := ""
	for _, codec := range cl.Compressions() {
		topic := "compress-" + codec
		must(r, c.CreateTopic(topic, 1, 3, nil))
		recs := func(yield func(Record) bool) {
			for i := range n {
				if !yield(Record{Key: fmt.Sprint(i), Value: fmt.Sprintf("%s-%02d-%s", codec, i, strings.Repeat("compressible ", 20))}) {
					return
				}
			}
		}
		ds, err := cl.Produce(ctx, ProducerConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "compression"), Topic: topic, Acks: AcksAll, Codec: codec, Retries: -1}, recs)
		if ns, ok := IsNotSupported(err); ok {
			unsupported = append(unsupported, codec)
			reason = ns.Reason
			continue
		}
		r.check(err, "produce with "+codec)
		for i, d := range ds {
			if d.Err != nil || d.Offset != int64(i) {
				r.Fatalf("%s: record %d: offset %d, error %v", codec, i, d.Offset, d.Err)
			}
		}
		s, err := cl.Consume(ctx, ConsumerConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "compression"), Topic: topic, Offset: 0})
		r.check(err, "consume "+codec)
		got, errs := readN(r, s, n, 15*time.Second)
		s.Close()
		if len(errs) > 0 {
			r.Logf("%s: consumer surfaced %v", codec, errs)
		}
		i := 0
		for rec := range recs {
			if got[i].Offset != int64(i) || got[i].Value != rec.Value || got[i].Key != rec.Key {
				r.Fatalf("%s: consumed %d: offset %d key %q value %q, want %d %q %q", codec, i, got[i].Offset, got[i].Key, got[i].Value, i, rec.Key, rec.Value)
			}
			i++
		}
		for _, st := range readLog(r, c, topic, 0) {
			if st.Codec != codec {
				r.Fatalf("%s: fakekafka holds offset %d in a %s batch: the client did not compress with %s", codec, st.Offset, st.Codec, codec)
			}
		}
		used = append(used, codec)
	}
	if len(unsupported) > 0 {
		r.pass("%s; %s not supported: %s", strings.Join(used, ", "), strings.Join(unsupported, ", "), reason)
		return
	}
	r.pass("all of %s", strings.Join(used, ", "))
}

// scMinISR: with the ISR shrunk to the leader and min.insync.replicas=2, an
// acks=all produce is refused with NOT_ENOUGH_REPLICAS (nothing appended);
// the client retries until its retry count or delivery timeout runs out
// and reports its error. Then a produce retrying while the followers come
// back succeeds.
func scMinISR(r *cell, cl Client) {
	c := server.NewTestCluster(r, server.Config{})
	const topic = "min-isr"
	must(r, c.CreateTopic(topic, 1, 3, map[string]string{"min.insync.replicas": "2"}))
	ctx := context.Background()
	for _, id := range []int32{2, 3} {
		must(r, c.PauseReplica(topic, 0, id))
	}
	must(r, c.SetISR(topic, 0, []int32{1}))
	counter, err := c.InjectFault(server.Fault{API: "Produce", Topic: topic})
	must(r, err)

	// Refused: the client's own retry budget (a 2 s delivery timeout where
	// it has one, else its default retry count).
	pc := ProducerConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "min-isr"), Topic: topic, Acks: AcksAll, Codec: "none", Retries: -1, DeliveryTimeout: 2 * time.Second}
	ds, err := cl.Produce(ctx, pc, values("refused", 1))
	if _, ok := IsNotSupported(err); ok {
		pc.DeliveryTimeout = 0
		ds, err = cl.Produce(ctx, pc, values("refused", 1))
	}
	r.check(err, "produce")
	if ds[0].Err == nil {
		r.Fatalf("acks=all produce with ISR [1] < min.insync.replicas 2 succeeded at offset %d", ds[0].Offset)
	}
	attempts := counter.Hits()
	if leo := partition(r, c, topic, 0).Replicas[0].LogEndOffset; leo != 0 {
		r.Fatalf("the leader appended %d records that NOT_ENOUGH_REPLICAS refused", leo)
	}
	bound := fmt.Sprintf("after %d attempts", attempts)
	if pc.DeliveryTimeout > 0 {
		bound = "at the 2 s delivery timeout"
	}
	r.Logf("refused after %d produce requests: %v", attempts, ds[0].Err)

	// Healed while retrying.
	pc.Retries, pc.DeliveryTimeout = 1000, 0
	type result struct {
		ds  []Delivery
		err error
	}
	done := make(chan result, 1)
	go func() {
		ds, err := cl.Produce(ctx, pc, values("healed", 1))
		done <- result{ds, err}
	}()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := counter.WaitHits(wctx, attempts+1); err != nil {
		r.Fatalf("second produce never reached the leader: %v", err)
	}
	for _, id := range []int32{2, 3} {
		must(r, c.ResumeReplica(topic, 0, id))
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		r.Fatalf("the produce did not finish within 30 s of the ISR healing")
	}
	r.check(res.err, "produce after healing")
	if d := res.ds[0]; d.Err != nil || d.Offset != 0 {
		r.Fatalf("produce while the ISR heals: offset %d, error %v", d.Offset, d.Err)
	}
	if log := readLog(r, c, topic, 0); len(log) != 1 || log[0].Value != "healed0" {
		r.Fatalf("log after healing: %+v", log)
	}
	r.pass("%s %s; succeeds once the ISR heals", cl.Describe(ds[0].Err), bound)
}

// scInjectedNER: the next 3 produce requests to the partition fail with
// NOT_ENOUGH_REPLICAS (nothing appended); the client's default retries get
// every record in exactly once.
func scInjectedNER(r *cell, cl Client) {
	c := server.NewTestCluster(r, server.Config{})
	const topic = "injected"
	must(r, c.CreateTopic(topic, 1, 3, map[string]string{"min.insync.replicas": "2"}))
	zero := int32(0)
	rule, err := c.InjectFault(server.Fault{API: "Produce", Topic: topic, Partition: &zero, Error: "NOT_ENOUGH_REPLICAS", Count: 3})
	must(r, err)
	const n = 10
	ds, err := cl.Produce(context.Background(), ProducerConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "injected"), Topic: topic, Acks: AcksAll, Codec: "none", Retries: -1}, values("v", n))
	r.check(err, "produce")
	for i, d := range ds {
		if d.Err != nil {
			r.Fatalf("record %d: %s (after %d injected errors)", i, cl.Describe(d.Err), rule.Hits())
		}
		if d.Offset != int64(i) {
			r.Fatalf("record %d acknowledged at offset %d", i, d.Offset)
		}
	}
	if h := rule.Hits(); h != 3 {
		r.Fatalf("the rule fired %d times, want 3", h)
	}
	log := readLog(r, c, topic, 0)
	if len(log) != n {
		r.Fatalf("log holds %d records, want %d: %+v", len(log), n, log)
	}
	for i, st := range log {
		if st.Value != fmt.Sprintf("v%d", i) {
			r.Fatalf("offset %d holds %q, want v%d", i, st.Value, i)
		}
	}
	r.pass("3 retries; 10 records once each, in order")
}

// scFailover crashes the partition's leader while the client produces 300
// records (acks=all, 100 retries, idempotent where the client can be):
// every record is acknowledged and in the log; with idempotence, once.
func scFailover(r *cell, cl Client) {
	c := server.NewTestCluster(r, server.Config{})
	const topic = "failover"
	must(r, c.CreateTopic(topic, 1, 3, map[string]string{"min.insync.replicas": "2"}))
	leader := partition(r, c, topic, 0).Leader
	const n, crashAt = 300, 100
	var crashErr error
	recs := func(yield func(Record) bool) {
		for i := range n {
			if i == crashAt {
				// Crash once the leader has committed some of what is in
				// flight; the rest of the stream follows the crash.
				if !waitUntil(10*time.Second, func() bool { return partition(r, c, topic, 0).HighWatermark >= 20 }) {
					crashErr = errors.New("the HW never reached 20")
				} else {
					crashErr = c.StopBroker(leader, server.StopCrash)
				}
			}
			if !yield(Record{Value: fmt.Sprintf("r%03d", i)}) {
				return
			}
		}
	}
	pc := ProducerConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "failover"), Topic: topic, Acks: AcksAll, Codec: "none", Idempotent: true, Retries: 100}
	ds, err := cl.Produce(context.Background(), pc, recs)
	why := ""
	if ns, ok := IsNotSupported(err); ok {
		why = ns.Reason
		pc.Idempotent = false
		ds, err = cl.Produce(context.Background(), pc, recs)
	}
	r.check(err, "produce")
	must(r, crashErr)
	if len(ds) != n {
		r.Fatalf("%d deliveries for %d records", len(ds), n)
	}
	var failed []string
	for i, d := range ds {
		if d.Err != nil {
			failed = append(failed, fmt.Sprintf("r%03d: %s", i, cl.Describe(d.Err)))
		}
	}
	if len(failed) > 0 {
		r.Fatalf("%d of %d records failed across the failover, first %s", len(failed), n, failed[0])
	}
	if l := partition(r, c, topic, 0).Leader; l == leader || l < 0 {
		r.Fatalf("leader %d after crashing %d", l, leader)
	}
	log := readLog(r, c, topic, 0)
	count := map[string]int{}
	for _, st := range log {
		count[st.Value]++
	}
	dups := 0
	for i, d := range ds {
		v := fmt.Sprintf("r%03d", i)
		switch {
		case count[v] == 0:
			r.Fatalf("acknowledged record %s (offset %d) is not in the log", v, d.Offset)
		case d.Offset >= 0 && (d.Offset >= int64(len(log)) || log[d.Offset].Value != v):
			r.Fatalf("record %s acknowledged at offset %d, which holds something else", v, d.Offset)
		}
		dups += count[v] - 1
	}
	r.Logf("idempotent=%v: %d records in the log, %d duplicates", pc.Idempotent, len(log), dups)
	if pc.Idempotent {
		if dups > 0 {
			r.Fatalf("%d duplicates despite idempotence", dups)
		}
		r.pass("idempotent: no loss, no duplicates")
		return
	}
	r.pass("no loss; not idempotent (%s): duplicates possible", why)
}

// scMetadata: one partition's ISR shrunk by hand, one broker crashed; the
// client's metadata must match c.State(): live brokers and their
// addresses, every partition's leader, replicas in order and ISR.
func scMetadata(r *cell, cl Client) {
	c := server.NewTestCluster(r, server.Config{})
	must(r, c.CreateTopic("md", 3, 3, nil))
	must(r, c.CreateTopic("md2", 2, 2, nil))
	must(r, c.PauseReplica("md", 1, 1))
	must(r, c.SetISR("md", 1, []int32{2, 3}))
	must(r, c.StopBroker(3, server.StopCrash))
	st := c.State()
	var live []string
	var want Metadata
	for _, b := range st.Brokers {
		if b.Up {
			live = append(live, b.Address)
			want.Brokers = append(want.Brokers, brokerOf(r, b))
		}
	}
	for _, t := range st.Topics {
		if t.Name != "md" && t.Name != "md2" {
			continue
		}
		tm := TopicMetadata{Name: t.Name}
		for _, p := range t.Partitions {
			pm := PartitionMetadata{Partition: p.Partition, Leader: p.Leader, ISR: slices.Sorted(slices.Values(p.ISR))}
			for _, rs := range p.Replicas {
				pm.Replicas = append(pm.Replicas, rs.Broker)
			}
			tm.Partitions = append(tm.Partitions, pm)
		}
		want.Topics = append(want.Topics, tm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := cl.Metadata(ctx, live, []string{"md", "md2"})
	r.check(err, "metadata")
	slices.SortFunc(got.Brokers, func(a, b BrokerMetadata) int { return int(a.ID - b.ID) })
	for i := range got.Topics {
		slices.SortFunc(got.Topics[i].Partitions, func(a, b PartitionMetadata) int { return int(a.Partition - b.Partition) })
		for j := range got.Topics[i].Partitions {
			slices.Sort(got.Topics[i].Partitions[j].ISR)
		}
	}
	if g, w := fmt.Sprint(got.Brokers), fmt.Sprint(want.Brokers); g != w {
		r.Fatalf("brokers: client %s, fakekafka %s", g, w)
	}
	if g, w := fmt.Sprint(got.Topics), fmt.Sprint(want.Topics); g != w {
		r.Fatalf("topics: client %s, fakekafka %s", g, w)
	}
	r.pass("as c.State(), with a broker down and an ISR shrunk")
}

func brokerOf(r *cell, b server.BrokerState) BrokerMetadata {
	host, port, ok := strings.Cut(b.Address, ":")
	if !ok {
		r.Fatalf("broker address %q", b.Address)
	}
	var p int32
	fmt.Sscan(port, &p)
	return BrokerMetadata{ID: b.ID, Host: host, Port: p}
}

// scTransactions produces three transactions with the client (commit,
// abort, commit) and reads the partition back with the client at
// read_committed (the committed records only, at their offsets between
// the markers) and read_uncommitted (all of them). A client without a
// transactional producer reads franz-go's transactions instead.
func scTransactions(r *cell, cl Client) {
	c := server.NewTestCluster(r, server.Config{TransactionStatePartitions: 3})
	must(r, c.CreateTopic("txn", 1, 3, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := func(v string) Record { return Record{Key: v, Value: v} }
	txns := []Txn{
		{Records: []Record{rec("c1"), rec("c2")}, Commit: true},
		{Records: []Record{rec("a1")}},
		{Records: []Record{rec("c3")}, Commit: true},
	}
	tc := TxnConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "transactions"), TransactionalID: "matrix-" + cl.Name(), Topic: "txn"}
	producer := "its transactional producer"
	err := cl.Transact(ctx, tc, txns)
	if ns, ok := IsNotSupported(err); ok {
		producer = "franz-go's transactions (" + ns.Reason + ")"
		err = FranzGo{}.Transact(ctx, tc, txns)
	}
	r.check(err, "transactions")
	// c1 0, c2 1, commit 2, a1 3, abort 4, c3 5, commit 6.
	for _, read := range []struct {
		committed bool
		values    []string
		offsets   []int64
	}{
		{true, []string{"c1", "c2", "c3"}, []int64{0, 1, 5}},
		{false, []string{"c1", "c2", "a1", "c3"}, []int64{0, 1, 3, 5}},
	} {
		s, err := cl.Consume(ctx, ConsumerConfig{Bootstrap: c.Bootstrap(), ClientID: clientID(cl, "transactions"), Topic: "txn", ReadCommitted: read.committed})
		if ns, ok := IsNotSupported(err); ok {
			r.notSupported(ns.Reason)
			return
		}
		r.check(err, "consume")
		got, _ := readN(r, s, len(read.values), 15*time.Second)
		s.Close()
		for i, g := range got {
			if g.Value != read.values[i] || g.Offset != read.offsets[i] {
				r.Fatalf("read_committed %v: record %d is %q at %d, want %q at %d", read.committed, i, g.Value, g.Offset, read.values[i], read.offsets[i])
			}
		}
	}
	r.pass("read_committed skips the aborted record, read_uncommitted has it; produced by %s%s", producer, txnVersion(c, tc.TransactionalID))
}
