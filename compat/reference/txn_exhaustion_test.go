package reference

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEpochExhaustion bumps one transactional id's producer epoch to
// Short.MAX_VALUE-2 with KIP-360 InitProducerId requests, then compares
// what both clusters answer around exhaustion: the bump to 32766, a retry
// of it, the rotation to a new producer id at epoch 0 and a retry of the
// rotation with the old id. About 32,000 requests each: it runs only with
// FAKEKAFKA_REFERENCE_SLOW=1 (a few minutes on Kafka).
func TestEpochExhaustion(t *testing.T) {
	tgs := targets(t)
	if os.Getenv("FAKEKAFKA_REFERENCE_SLOW") != "1" {
		t.Skip("set FAKEKAFKA_REFERENCE_SLOW=1: about 32,000 InitProducerId requests per cluster")
	}
	got := map[string][]string{}
	for _, tg := range tgs {
		t.Run(tg.Name(), func(t *testing.T) {
			r := newRun(t, tg)
			r.ctx = t.Context()
			id := "exhaust"
			x := r.initTxn(id, time.Minute)
			coord := r.txnCoordinator(id)
			cn, err := Dial(r.ctx, tg.Addr(coord))
			if err != nil {
				t.Fatal(err)
			}
			defer cn.Close()
			init := func(pid int64, epoch int16) *kmsg.InitProducerIDResponse {
				req := at(5, kmsg.NewPtrInitProducerIDRequest())
				req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
				req.ProducerID, req.ProducerEpoch = pid, epoch
				resp, err := cn.Do(r.ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				return resp.(*kmsg.InitProducerIDResponse)
			}
			pid, epoch := x.pid, x.epoch
			began := time.Now()
			for epoch < 32765 {
				resp := init(pid, epoch)
				if resp.ErrorCode != 0 {
					t.Fatalf("bump from %d: %s", epoch, errName(resp.ErrorCode))
				}
				epoch = resp.ProducerEpoch
			}
			t.Logf("%s: %v to epoch 32765", tg.Name(), time.Since(began))
			show := func(what string, resp *kmsg.InitProducerIDResponse, old int64) string {
				idIs := "same id"
				if resp.ProducerID != old {
					idIs = "new id"
				}
				if resp.ErrorCode != 0 {
					idIs = ""
				}
				return fmt.Sprintf("%s: %s epoch %d %s", what, errName(resp.ErrorCode), resp.ProducerEpoch, idIs)
			}
			var out []string
			a := init(pid, 32765)
			out = append(out, show("bump from 32765", a, pid))
			out = append(out, show("its retry", init(pid, 32765), pid))
			b := init(pid, 32766)
			out = append(out, show("bump from 32766", b, pid))
			out = append(out, show("its retry with the old id", init(pid, 32766), pid))
			out = append(out, show("the new id's epoch 0", init(b.ProducerID, 0), b.ProducerID))
			out = append(out, show("the old id after that", init(pid, 32766), pid))

			// Transaction version 2: from 32765 EndTxn v5 (an abort with
			// nothing added, which version 2 allows) bumps to 32766, then
			// from the exhausted 32766 to 32767 for the markers, answering
			// the new producer id at epoch 0; its retry with the old id
			// once the abort completed is answered the same.
			id = "exhaust-tv2"
			x = r.initTxn(id, time.Minute)
			if coord2 := r.txnCoordinator(id); coord2 != coord {
				cn.Close()
				if cn, err = Dial(r.ctx, tg.Addr(coord2)); err != nil {
					t.Fatal(err)
				}
			}
			pid, epoch = x.pid, x.epoch
			for epoch < 32765 {
				resp := init(pid, epoch)
				if resp.ErrorCode != 0 {
					t.Fatalf("bump from %d: %s", epoch, errName(resp.ErrorCode))
				}
				epoch = resp.ProducerEpoch
			}
			end := func(pid int64, epoch int16) *kmsg.EndTxnResponse {
				req := at(5, kmsg.NewPtrEndTxnRequest())
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, false
				resp, err := cn.Do(r.ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				return resp.(*kmsg.EndTxnResponse)
			}
			showEnd := func(what string, resp *kmsg.EndTxnResponse, old int64) string {
				return show(what, &kmsg.InitProducerIDResponse{ErrorCode: resp.ErrorCode, ProducerID: resp.ProducerID, ProducerEpoch: resp.ProducerEpoch}, old)
			}
			describe := func() (string, int16, int64) {
				req := at(0, kmsg.NewPtrDescribeTransactionsRequest())
				req.TransactionalIDs = []string{id}
				resp, err := cn.Do(r.ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				st := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates[0]
				return st.State, st.ProducerEpoch, st.ProducerID
			}
			complete := func() {
				r.waitFor("the abort to complete", func() bool { st, _, _ := describe(); return st == "CompleteAbort" })
			}
			e1 := end(pid, 32765)
			out = append(out, showEnd("v2 abort at 32765", e1, pid))
			complete()
			e2 := end(pid, 32766)
			out = append(out, showEnd("v2 abort at 32766", e2, pid))
			complete()
			st, ep, now := describe()
			out = append(out, fmt.Sprintf("then %s at epoch %d, id is the answered one: %v", st, ep, now == e2.ProducerID))
			out = append(out, showEnd("its retry with the old id", end(pid, 32766), pid))
			for _, o := range out {
				t.Logf("%s: %s", tg.Name(), o)
			}
			got[tg.Name()] = out
		})
	}
	k, f := got["Kafka"], got["fakekafka"]
	if k == nil || f == nil {
		return
	}
	for i := range k {
		if k[i] != f[i] {
			t.Errorf("Kafka %q, fakekafka %q", k[i], f[i])
		}
	}
}
