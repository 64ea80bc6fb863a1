package dashboard

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The checks of the record browser, the labels, the page against
// /v1/cluster, the charts and the events panel under a flood; part of
// dashboardStory, so they run in Chromium and Firefox.

// checkMatchesCluster: every broker's status, and for every topic the
// page shows, each partition's leader, ISR and HW and each replica's log
// start, LEO, HW and state are what GET /v1/cluster says (fetched by the
// page itself, compared in one go, until they agree).
func checkMatchesCluster(t *testing.T, p page) {
	t.Helper()
	waitJS(t, p, "the page agrees with /v1/cluster", `fetch("/v1/cluster").then((r) => r.json()).then((c) => {
		const bad = [];
		const status = (b) => b.isolated ? "isolated" : b.up ? "up" : b.fenced ? "fenced" : "down";
		for (const b of c.brokers) {
			const el = document.querySelector('.broker[data-broker="' + b.id + '"]');
			if (!el || el.dataset.status !== status(b)) bad.push("broker " + b.id);
			if (el && (b.id === c.controller) !== !!el.querySelector(".badge.controller")) bad.push("controller " + b.id);
		}
		for (const t of c.topics) {
			if (t.name.startsWith("__")) continue;
			for (const p of t.partitions) {
				const el = document.querySelector('.partition[data-topic="' + t.name + '"][data-partition="' + p.partition + '"]');
				if (!el || el.dataset.hw !== String(p.high_watermark)) { bad.push(t.name + "/" + p.partition + " HW"); continue; }
				const meta = el.querySelector(".pmeta").textContent;
				if (!meta.includes("ISR [" + p.isr.join(", ") + "]")) bad.push(t.name + "/" + p.partition + " ISR");
				if (p.leader >= 0 && !meta.includes("leader " + p.leader)) bad.push(t.name + "/" + p.partition + " leader");
				for (const r of p.replicas) {
					const row = el.querySelector('.replica[data-broker="' + r.broker + '"]');
					if (!row || row.dataset.leo !== String(r.log_end_offset) || row.dataset.hw !== String(r.high_watermark) ||
						row.dataset.start !== String(r.log_start_offset) || row.dataset.state !== r.state) bad.push(t.name + "/" + p.partition + " replica " + r.broker);
				}
			}
		}
		return bad.length === 0;
	})`)
}

// checkLabels: no replica label, number or button overlaps its
// neighbour: each label ends before its track starts and is not cut off
// (its text fits its box); the numbers end before the buttons. A paused
// follower out of the ISR has the longest label.
func checkLabels(t *testing.T, p page, c *server.Cluster) {
	t.Helper()
	if err := c.CreateTopic("labels", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.PauseReplica("labels", 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.SetISR("labels", 0, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	sel := `.partition[data-topic="labels"][data-partition="0"] .replica[data-broker="3"]`
	waitJS(t, p, "the long label", `(document.querySelector('`+sel+` .who') || {}).textContent === "broker 3 · follower · paused out of ISR"`)
	var bad []string
	if err := p.eval(`(() => {
		const bad = [];
		for (const row of document.querySelectorAll(".replica")) {
			const who = row.querySelector(".who"), track = row.querySelector(".track"), nums = row.querySelector(".nums"), acts = row.querySelector(".actions");
			const w = who.getBoundingClientRect(), tr = track.getBoundingClientRect(), n = nums.getBoundingClientRect(), a = acts.getBoundingClientRect();
			const name = row.closest(".partition").dataset.topic + "/" + row.closest(".partition").dataset.partition + " broker " + row.dataset.broker;
			if (w.right > tr.left + 0.5) bad.push(name + ": label ends at " + w.right + ", track starts at " + tr.left);
			if (who.scrollWidth > who.clientWidth + 1) bad.push(name + ": label cut off (" + who.scrollWidth + " > " + who.clientWidth + ")");
			if (tr.right > n.left + 0.5) bad.push(name + ": track runs into the numbers");
			if (n.right > a.left + 0.5 || nums.scrollWidth > nums.clientWidth + 1) bad.push(name + ": numbers run into the buttons");
			for (const b of acts.querySelectorAll("button")) {
				const r = b.getBoundingClientRect();
				if (r.right > row.parentElement.getBoundingClientRect().right + 0.5) bad.push(name + ": button " + b.textContent + " sticks out");
			}
		}
		return bad;
	})()`, &bad); err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("clipped or overlapping labels:\n%s", strings.Join(bad, "\n"))
	}
	if err := c.ResumeReplica("labels", 0, 3); err != nil {
		t.Fatal(err)
	}
}

// checkRecordBrowser: a plain write with a key and headers, an aborted
// and a committed transaction, then acks=1 writes while a follower is
// paused. The Records button of the leader's row shows every record a
// read_uncommitted consumer reads, with the same keys, values and
// headers; the two markers; the aborted records; the acks=1 records
// above the HW. Choosing the paused follower shows its own, shorter log.
func checkRecordBrowser(t *testing.T, p page, c *server.Cluster, shots bool) {
	t.Helper()
	if err := c.CreateTopic("ledger", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	plain := newClient(t, c, kgo.DefaultProduceTopic("ledger"))
	if err := plain.ProduceSync(ctx, &kgo.Record{Key: []byte("acct-1"), Value: []byte("credit 10"),
		Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("web")}}}, kgo.KeyStringRecord("acct-2", "debit 3")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	tx := newClient(t, c, kgo.TransactionalID("ledger-tx"), kgo.DefaultProduceTopic("ledger"))
	for _, commit := range []bool{false, true} {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := tx.ProduceSync(ctx, kgo.KeyStringRecord("acct-3", fmt.Sprintf("txn commit=%v", commit))).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := tx.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// Offsets: 0-1 plain, 2 aborted, 3 ABORT, 4 committed, 5 COMMIT.
	waitState(t, "HW 6 everywhere", func() bool {
		ps, _ := c.Partition("ledger", 0)
		for _, r := range ps.Replicas {
			if r.HighWatermark != 6 {
				return false
			}
		}
		return true
	})
	ps, _ := c.Partition("ledger", 0)
	leader := ps.Leader
	var follower int32
	for _, r := range ps.Replicas {
		if r.Broker != leader {
			follower = r.Broker
		}
	}
	if err := c.PauseReplica("ledger", 0, follower); err != nil {
		t.Fatal(err)
	}
	ackOne := newClient(t, c, kgo.DefaultProduceTopic("ledger"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err := ackOne.ProduceSync(ctx, kgo.KeyStringRecord("acct-4", "pending")).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// What a read_uncommitted consumer reads: 0, 1, 2, 4.
	cons := newClient(t, c, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"ledger": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	var read []*kgo.Record
	for len(read) < 4 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		read = append(read, fs.Records()...)
	}

	part := `.partition[data-topic="ledger"][data-partition="0"]`
	waitVisible(t, p, part+` .replica[data-broker="`+strconv.Itoa(int(leader))+`"][data-leo="7"]`)
	click(t, p, part+` .replica[data-broker="`+strconv.Itoa(int(leader))+`"] button[data-action="records"]`)
	waitVisible(t, p, `#records .records-head[data-topic="ledger"][data-broker="`+strconv.Itoa(int(leader))+`"]`)
	waitJS(t, p, "7 records", `document.querySelectorAll("#records tr[data-offset]").length === 7`)
	type row struct{ Key, Value, Headers, Status string }
	rowAt := func(offset int64) row {
		var r row
		if err := p.eval(fmt.Sprintf(`(() => { const tr = document.querySelector('#records tr[data-offset="%d"]');
			if (!tr) return null;
			const td = (c) => tr.querySelector("td." + c).textContent;
			return { Key: td("rkey"), Value: td("rvalue"), Headers: td("rheaders"), Status: td("status") }; })()`, offset), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, rec := range read {
		got := rowAt(rec.Offset)
		var hs []string
		for _, h := range rec.Headers {
			hs = append(hs, h.Key+"="+string(h.Value))
		}
		if got.Key != string(rec.Key) || got.Value != string(rec.Value) || got.Headers != strings.Join(hs, ", ") {
			t.Errorf("offset %d: the page shows %+v, the consumer read key %q value %q headers %q", rec.Offset, got, rec.Key, rec.Value, hs)
		}
	}
	for offset, want := range map[int64]string{0: "", 1: "", 2: "aborted", 3: "ABORT marker", 4: "", 5: "COMMIT marker", 6: "above HW"} {
		if got := rowAt(offset); got.Status != want {
			t.Errorf("offset %d: status %q, want %q", offset, got.Status, want)
		}
	}
	if got := rowAt(6); got.Key != "acct-4" || got.Value != "pending" {
		t.Errorf("offset 6 (acks=1, above the HW): %+v", got)
	}

	if shots {
		saveSectionShot(t, p, "records.png", "records-section", "events-section")
	}

	// The paused follower's own log ends at 6.
	var ok bool
	if err := p.eval(fmt.Sprintf(`(() => { const s = document.querySelector("#records-replica"); s.value = "%d";
		s.dispatchEvent(new Event("change")); return true; })()`, follower), &ok); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, p, `#records .records-head[data-broker="`+strconv.Itoa(int(follower))+`"]`)
	waitJS(t, p, "the follower's 6 records", `document.querySelectorAll("#records tr[data-offset]").length === 6 && !document.querySelector("#records tr[data-above-hw]")`)
	if err := c.ResumeReplica("ledger", 0, follower); err != nil {
		t.Fatal(err)
	}
}

// checkCharts: the HW and LEO chart of orders/0 ends at its HW and LEO,
// and the produce rate chart has a line.
func checkCharts(t *testing.T, p page, c *server.Cluster) {
	t.Helper()
	ps, _ := c.Partition("orders", 0)
	leo := ps.Replicas[0].LogEndOffset
	for _, r := range ps.Replicas {
		if r.Broker == ps.Leader {
			leo = r.LogEndOffset
		}
	}
	ch := `[data-chart="partition:orders/0"]`
	waitJS(t, p, "orders/0's chart", fmt.Sprintf(`(() => { const hw = document.querySelector('%s polyline.hw'), leo = document.querySelector('%s polyline.leo');
		return !!hw && !!leo && hw.dataset.last === "%d" && leo.dataset.last === "%d" && hw.getAttribute("points").split(" ").length >= 2; })()`,
		ch, ch, ps.HighWatermark, leo))
	waitVisible(t, p, `[data-chart="rate"] polyline`)
	waitVisible(t, p, `[data-chart="lag"] polyline`)
}

// checkEventFlood: a crash among a flood of hw_advanced (hundreds, more
// than the old panel kept) stays in the events panel, which holds no
// hw_advanced at all while they are hidden, live and after a reload;
// shown, the hw_advanced rows come, and "Load older" pages back to the
// crash. The produce rate chart saw the flood.
func checkEventFlood(t *testing.T, p page, c *server.Cluster, url string, shots bool) {
	t.Helper()
	if err := c.CreateTopic("flood", 16, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testContext(t))
	// One record at a time, round robin: every partition's HW moves
	// often enough for hw_advanced at its coalesced rate (10/s each).
	cl := newClient(t, c, kgo.DefaultProduceTopic("flood"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			cl.ProduceSync(ctx, kgo.StringRecord("f"))
		}
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	hwSince := func(since uint64) int {
		n := 0
		for _, e := range c.Events(since) {
			if e.Type == server.EventHWAdvanced {
				n++
			}
		}
		return n
	}
	waitState(t, "a flood of hw_advanced", func() bool { return hwSince(0) >= 100 })
	seq := c.LastEventSeq()
	if err := c.StopBroker(3, server.StopCrash); err != nil {
		t.Fatal(err)
	}
	stopped, err := c.WaitForAfter(ctx, seq, server.BrokerStopped(3))
	if err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`#events li[data-type="broker_stopped"][data-seq="%d"]`, stopped.Seq)
	waitVisible(t, p, row)
	waitState(t, "400 hw_advanced after the crash", func() bool { return hwSince(stopped.Seq) >= 400 })
	noHW := `!document.querySelector('#events li[data-type="hw_advanced"]')`
	waitJS(t, p, "the crash still listed, no hw_advanced", visible(row)+" && "+noHW)
	var rate bool
	if err := p.eval(`produceRate().some(([t, v]) => v > 0)`, &rate); err != nil || !rate {
		t.Errorf("the produce rate chart saw no records (%v)", err)
	}
	if shots {
		var ok bool
		if err := p.eval(`(() => { const l = document.querySelector("#events"), r = document.querySelector('`+row+`');
			l.style.maxHeight = "40rem"; l.scrollTop = r.offsetTop - l.offsetTop - 200; return true; })()`, &ok); err != nil {
			t.Fatal(err)
		}
		saveSectionShot(t, p, "events-flood.png", "brokers-section", "charts-section", "events-section")
	}

	// Shown, the newest hw_advanced come; Load older pages back to the crash.
	click(t, p, `#show-hw`)
	waitVisible(t, p, `#events li[data-type="hw_advanced"]`)
	for i := 0; ; i++ {
		var found bool
		if err := p.eval(`!!document.querySelector('`+row+`')`, &found); err != nil {
			t.Fatal(err)
		}
		if found {
			break
		}
		if i == 20 {
			t.Fatalf("20 pages of older events and no broker_stopped %d", stopped.Seq)
		}
		var n int
		if err := p.eval(`document.querySelectorAll("#events li").length`, &n); err != nil {
			t.Fatal(err)
		}
		click(t, p, `#events-older`)
		waitJS(t, p, "older events", fmt.Sprintf(`document.querySelectorAll("#events li").length > %d`, n))
	}
	click(t, p, `#show-hw`)
	waitJS(t, p, "hw_advanced hidden again, the crash listed", visible(row)+" && "+noHW)

	// A fresh page finds the crash too.
	if err := c.StartBroker(3); err != nil {
		t.Fatal(err)
	}
	loadDashboard(t, p, url)
	waitJS(t, p, "the crash listed after a reload", visible(row)+" && "+noHW)
}
