package reference

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTxnContention (issue 25, "Transactions under contention"): franz-go
// transactional producers (transaction version 2: every partition joins
// its transaction implicitly through Produce) run the same workload on
// Kafka 4.4 and on fakekafka: each ends a transaction and at once produces
// the next one to the same partitions. Both brokers retry an implicit add
// that meets CONCURRENT_TRANSACTIONS for
// add.partitions.to.txn.retry.backoff.max.ms (100 ms) and then answer it,
// and the producer retries. The answers are counted from the client's view
// (franz-go's debug log of every produce response and coordinator retry).
//
// How many there are depends on how long the previous transaction takes
// to complete after EndTxn answers (markers, then CompleteCommit): tens to
// hundreds of milliseconds among Kafka's brokers, microseconds in
// fakekafka. So the Kafka run measures that time for every transaction
// (DescribeTransactions every 5 ms), and fakekafka's run replays it: one
// WriteTxnMarkers fault rule per measured transaction, in order, delaying
// its three marker requests (one per leader, sent in parallel) by the
// measured time. The distribution is replayed rather than its median
// because the answers come from the tail: a transaction that completes
// within 100 ms gets none, so Kafka's median (45-100 ms) alone would give
// fakekafka almost none. Checked: every transaction commits with all its
// records on both, Kafka does answer CONCURRENT_TRANSACTIONS (the workload
// contends), and fakekafka's count is within contentionAgrees of Kafka's.
func TestTxnContention(t *testing.T) {
	tgs := targets(t)
	var k, f contention // summed over the rounds
	for round := range 2 {
		if round > 0 {
			if k.produceCT == 0 || contentionAgrees(k.produceCT, f.produceCT) {
				break
			}
			// One round's count comes from a few slow transactions (the
			// tail): a second round on both halves the luck in it. (Kafka's
			// second round is often quicker, its JIT warm, and may give
			// none: measured 106 then 0, and fakekafka 86 then 0.)
			t.Logf("Kafka %d, fakekafka %d: outside contentionAgrees; one more round on both, compared in sum", k.produceCT, f.produceCT)
		}
		topic := contentionTopic
		if round > 0 {
			topic += "-again"
		}
		counts := map[string]contention{}
		var kafkaPhases []time.Duration // Kafka's, replayed as fakekafka's marker delays
		for _, tg := range tgs {
			t.Run(tg.Name(), func(t *testing.T) {
				r := newRun(t, tg)
				defer r.restore()
				var replayed int
				if f, ok := tg.(*Fake); ok && kafkaPhases != nil {
					replayed = replayMarkerLatency(r, f, kafkaPhases, topic)
				}
				c := r.txnContention(topic)
				if tg.Name() == "Kafka" {
					t.Logf("Kafka: from EndTxn's answer to the transaction complete, under contention (%d transactions; %d unmeasured): %s",
						len(c.phases), c.unmeasured, summarize(c.phases))
					kafkaPhases = c.phases
				}
				if f, ok := tg.(*Fake); ok && replayed > 0 {
					hits, left := 0, 0
					for _, st := range f.Faults() {
						if st.API == "WriteTxnMarkers" && st.Topic == topic {
							hits += st.Hits
							left += st.Remaining
						}
					}
					t.Logf("fakekafka: WriteTxnMarkers delayed by Kafka's %d measured completions, one rule per transaction and broker; %d marker requests delayed, %d delays left", replayed, hits, left)
				}
				if round == 0 {
					phase := r.markerPhase()
					t.Logf("%s: from EndTxn's answer to CompleteCommit (DescribeTransactions), one producer, 10 transactions: %v", tg.Name(), phase)
				}
				t.Logf("%s: %d transactions, %d CONCURRENT_TRANSACTIONS answers to Produce, %d to coordinator requests, %d OUT_OF_ORDER_SEQUENCE_NUMBER (skipped batches behind them)",
					tg.Name(), c.txns, c.produceCT, c.coordCT, c.oooSeq)
				counts[tg.Name()] = c
			})
		}
		kr, kok := counts["Kafka"]
		fr, fok := counts["fakekafka"]
		if !kok || !fok {
			t.Logf("one target only: no comparison")
			return
		}
		if round == 0 && kr.produceCT == 0 {
			t.Fatalf("Kafka answered no CONCURRENT_TRANSACTIONS: the workload did not contend")
		}
		k.produceCT += kr.produceCT
		f.produceCT += fr.produceCT
		k.phases = append(k.phases, kr.phases...)
		k.unmeasured += kr.unmeasured
	}
	t.Logf("CONCURRENT_TRANSACTIONS answers to Produce: Kafka %d, fakekafka %d (within 2x: %v)", k.produceCT, f.produceCT, within2x(k.produceCT, f.produceCT))
	if !contentionAgrees(k.produceCT, f.produceCT) {
		t.Errorf("CONCURRENT_TRANSACTIONS answers to Produce: Kafka %d, fakekafka %d with Kafka's completion times replayed: want fakekafka between a quarter of Kafka's and twice it\n"+
			"Kafka's completions (%d transactions; %d unmeasured): %s", k.produceCT, f.produceCT, len(k.phases), k.unmeasured, summarize(k.phases))
	}
}

// contentionAgrees holds fakekafka's count of CONCURRENT_TRANSACTIONS
// answers (f) to Kafka's (k), from one round or two summed. The replay makes fakekafka's
// transactions complete as slowly as Kafka's, so more than twice Kafka's
// count is a defect (answering where Kafka would not). The lower bound is
// looser because one cause of Kafka's answers is not replayed: while a
// transaction's state change is being written to __transaction_state,
// Kafka's coordinator answers CONCURRENT_TRANSACTIONS to the other leaders'
// adds of the same transaction, and on a loaded machine that write (acks=all
// among three JVMs) can outlast the leader's 100 ms retry; fakekafka writes
// it in microseconds. Measured: 0.8x on a 2-core machine at rest and under
// CPU load (226/180, 346/274), 0.48x and 0.31x (130/62, 78/24) on a CI
// runner. Before implicit adds retried and answered, fakekafka gave none.
func contentionAgrees(k, f int64) bool {
	return f > 0 && f <= 2*k && 4*f >= k
}

// replayMarkerLatency makes fakekafka's transactions complete as slowly as
// Kafka's did in the same workload: for each measured completion, in the
// order measured, one WriteTxnMarkers fault rule per broker that delays
// one marker request by it. A transaction over six partitions sends one
// request to each of the three leaders at once, so the n-th transaction
// to end takes the n-th rule of every broker and completes after the n-th
// measured time: the delays follow Kafka's distribution, tail included.
// It returns how many completions it replays; the rules are removed when
// the test ends.
func replayMarkerLatency(r *run, f *Fake, phases []time.Duration, topic string) int {
	for _, d := range phases {
		for b := int32(1); b <= 3; b++ {
			rule, err := f.InjectFault(server.Fault{API: "WriteTxnMarkers", Broker: b, Topic: topic, Delay: d, Count: 1})
			if err != nil {
				r.Fatal(err)
			}
			r.Cleanup(func() { f.RemoveFault(rule.ID()) })
		}
	}
	return len(phases)
}

// summarize gives the percentiles of ds.
func summarize(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	over := 0
	for _, d := range s {
		if d > 100*time.Millisecond {
			over++
		}
	}
	return fmt.Sprintf("min %v, p25 %v, median %v, p75 %v, p90 %v, max %v; %d of %d over 100 ms", s[0], at(0.25), at(0.5), at(0.75), at(0.9), s[len(s)-1], over, len(s))
}

func within2x(a, b int64) bool { return a <= 2*b && b <= 2*a }

type contention struct {
	txns, produceCT, coordCT, oooSeq int64
	phases                           []time.Duration // EndTxn's answer to complete, per transaction
	unmeasured                       int             // completed within one 5 ms ask
}

// ctCounter is a kgo.Logger at debug level that counts the error answers
// franz-go logs: produce responses ("produced", one status per partition)
// and CONCURRENT_TRANSACTIONS retries of coordinator requests.
type ctCounter struct {
	produceCT, coordCT, oooSeq atomic.Int64
}

func (*ctCounter) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (c *ctCounter) Log(_ kgo.LogLevel, msg string, kvs ...any) {
	switch {
	case msg == "produced":
		for i := 0; i+1 < len(kvs); i += 2 {
			if kvs[i] == "to" {
				s := fmt.Sprint(kvs[i+1])
				c.produceCT.Add(int64(strings.Count(s, "(CONCURRENT_TRANSACTIONS")))
				c.oooSeq.Add(int64(strings.Count(s, "(OUT_OF_ORDER_SEQUENCE_NUMBER")))
			}
		}
	case strings.Contains(msg, "failed with CONCURRENT_TRANSACTIONS"):
		c.coordCT.Add(1)
	}
}

const (
	contentionProducers    = 4
	contentionTransactions = 40
	contentionPartitions   = 6
	contentionRecords      = 3 // per partition per transaction
)

const contentionTopic = "txncontend"

func (r *run) txnContention(topic string) contention {
	r.createPartitions(topic, contentionPartitions)
	var cnt ctCounter
	var txns atomic.Int64
	var wg sync.WaitGroup
	w := newPhaseWatch(r)
	defer w.stop()
	errs := make(chan error, contentionProducers)
	for p := range contentionProducers {
		cl := r.client(kgo.TransactionalID(fmt.Sprintf("contend-%d", p)), kgo.WithLogger(&cnt),
			kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.TransactionTimeout(time.Minute))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := produceTxns(r.ctx, cl, p, &txns, w); err != nil {
				errs <- fmt.Errorf("producer %d: %w", p, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		r.Fatal(err)
	}
	want := contentionProducers * contentionTransactions * contentionPartitions * contentionRecords
	cl := r.client(kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	r.consumeCount(cl, want)
	phases, missed := w.stop()
	r.Logf("%s: %d DescribeTransactions asks, the slowest %v", r.tg.Name(), w.asks, w.slowest)
	return contention{txns: txns.Load(), produceCT: cnt.produceCT.Load(), coordCT: cnt.coordCT.Load(), oooSeq: cnt.oooSeq.Load(),
		phases: phases, unmeasured: missed}
}

// produceTxns commits contentionTransactions transactions, each with
// contentionRecords records to every partition, starting each as soon as
// the previous one ended.
func produceTxns(ctx context.Context, cl *kgo.Client, p int, txns *atomic.Int64, w *phaseWatch) error {
	for i := range contentionTransactions {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		for part := range int32(contentionPartitions) {
			for j := range contentionRecords {
				rec := &kgo.Record{Partition: part, Value: fmt.Appendf(nil, "p%d-t%d-%d", p, i, j)}
				cl.Produce(ctx, rec, nil)
			}
		}
		if err := cl.Flush(ctx); err != nil {
			return err
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return err
		}
		w.ended(fmt.Sprintf("contend-%d", p))
		txns.Add(1)
	}
	return nil
}

// createPartitions creates topic with n partitions, replication factor 3,
// and waits until every partition has a leader every broker knows.
func (r *run) createPartitions(topic string, n int32) {
	r.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, n, 3
	req.Topics = append(req.Topics, rt)
	resp := r.do(1, req).(*kmsg.CreateTopicsResponse)
	if c := resp.Topics[0].ErrorCode; c != 0 {
		r.Fatalf("create %s: %s", topic, errName(c))
	}
	for id := int32(1); id <= 3; id++ {
		r.waitFor("broker knows "+topic, func() bool {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(12)
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp := r.do(id, req).(*kmsg.MetadataResponse)
			t := resp.Topics[0]
			if t.ErrorCode != 0 || len(t.Partitions) != int(n) {
				return false
			}
			for _, p := range t.Partitions {
				if p.Leader < 0 || len(p.ISR) != 3 {
					return false
				}
			}
			return true
		})
	}
}

// consumeCount polls cl until n records arrived, and fails on more.
func (r *run) consumeCount(cl *kgo.Client, n int) {
	r.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			r.Fatalf("read_committed: %d of %d records", got, n)
		}
		got += fs.NumRecords()
	}
	if got != n {
		r.Fatalf("read_committed: %d records, want %d", got, n)
	}
}

// markerPhase commits ten transactions of one producer, one at a time, and
// measures each time from EndTxn's answer until DescribeTransactions shows
// the transaction complete: the window in which a Produce of the next
// transaction meets CONCURRENT_TRANSACTIONS.
func (r *run) markerPhase() []time.Duration {
	topic := "txnphase"
	r.createPartitions(topic, 3)
	id := "phase"
	cl := r.client(kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(r.client())
	var out []time.Duration
	for i := range 10 {
		if err := cl.BeginTransaction(); err != nil {
			r.Fatal(err)
		}
		for part := range int32(3) {
			cl.Produce(r.ctx, &kgo.Record{Partition: part, Value: fmt.Appendf(nil, "%d", i)}, nil)
		}
		if err := cl.Flush(r.ctx); err != nil {
			r.Fatal(err)
		}
		if err := cl.EndTransaction(r.ctx, kgo.TryCommit); err != nil {
			r.Fatal(err)
		}
		ended := time.Now()
		// Asked every 5 ms: the answer is the measurement.
		tick := time.NewTicker(5 * time.Millisecond)
		for {
			ds, err := adm.DescribeTransactions(r.ctx, id)
			if d, ok := ds[id]; err == nil && ok && d.Err == nil && d.State == "CompleteCommit" {
				break
			}
			if time.Since(ended) > time.Minute {
				r.Fatalf("transaction %d not complete after a minute", i)
			}
			<-tick.C
		}
		tick.Stop()
		out = append(out, time.Since(ended).Round(time.Millisecond))
	}
	return out
}

// phaseWatch measures, for every transaction of the contention workload,
// the time from its EndTxn's answer until DescribeTransactions no longer
// shows it PrepareCommit (complete, or the next transaction already
// Ongoing): the window in which the next transaction's Produce meets
// CONCURRENT_TRANSACTIONS. It asks every 5 ms, for the ids with an ended
// transaction not yet seen complete, and takes the middle of the ask that
// first sees it complete. Only Kafka's numbers are used: there the next
// transaction takes tens of milliseconds to reach PrepareCommit again, in
// fakekafka often less than one ask, so most go unseen.
type phaseWatch struct {
	mu     sync.Mutex
	since  map[string]time.Time
	phases []time.Duration
	missed int // completed, and the next transaction ended, between two asks

	asks    int
	slowest time.Duration
	done    chan struct{}
	exited  chan struct{}
}

func newPhaseWatch(r *run) *phaseWatch {
	w := &phaseWatch{since: map[string]time.Time{}, done: make(chan struct{}), exited: make(chan struct{})}
	adm := kadm.NewClient(r.client())
	go func() {
		defer close(w.exited)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			w.mu.Lock()
			ids := slices.Collect(maps.Keys(w.since))
			w.mu.Unlock()
			if len(ids) == 0 {
				continue
			}
			began := time.Now()
			ds, err := adm.DescribeTransactions(r.ctx, ids...)
			w.mu.Lock()
			w.asks++
			w.slowest = max(w.slowest, time.Since(began))
			w.mu.Unlock()
			if err != nil {
				continue
			}
			// The broker answered somewhere between sending and receiving.
			now := began.Add(time.Since(began) / 2)
			w.mu.Lock()
			for id, d := range ds {
				at, ok := w.since[id]
				if ok && d.Err == nil && d.State != "PrepareCommit" {
					w.phases = append(w.phases, max(0, now.Sub(at)).Round(time.Millisecond))
					delete(w.since, id)
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// ended notes that id's EndTxn answered now.
func (w *phaseWatch) ended(id string) {
	w.mu.Lock()
	if _, ok := w.since[id]; ok {
		w.missed++
	}
	w.since[id] = time.Now()
	w.mu.Unlock()
}

// stop ends the watch and returns the measurements and how many
// transactions went unmeasured.
func (w *phaseWatch) stop() ([]time.Duration, int) {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	<-w.exited
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.phases), w.missed
}
