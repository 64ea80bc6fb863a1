package server_test

// The group and transaction coordinators under concurrent load, as an
// exactly-once consumer group puts them: transactional producers loop
// InitProducerId / AddOffsetsToTxn / TxnOffsetCommit / EndTxn over many
// groups while JoinGroups leave pending members whose timers fire, groups
// are deleted and (in the failover variants) the coordinators' leader is
// stopped and started. Every lock the coordinators take is on this path:
// group timers, transaction markers reaching group offsets, loading a
// shard on a new leader. A watchdog fails the test with every goroutine's
// stack when no request has completed for 10 seconds: a lock-order cycle
// hangs the broker, and the stacks show it.
//
// The default suite runs each variant for a few seconds; CI runs them
// longer with -coord-stress.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var coordStressFor = flag.Duration("coord-stress", 3*time.Second, "how long each TestCoordinatorStress variant runs")

const (
	stressGroups    = 200
	stressProducers = 4
	stressStall     = 10 * time.Second // no progress for this long is a hang
)

func TestCoordinatorStress(t *testing.T) {
	for _, v := range []struct {
		name     string
		manual   bool
		brokers  int
		failover bool
	}{
		{"manual", true, 1, false},
		{"real", false, 1, false},
		{"manual-failover", true, 3, true},
		{"real-failover", false, 3, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			cfg := server.Config{
				Brokers:                           v.brokers,
				OffsetsTopicPartitions:            1,
				OffsetsTopicReplicationFactor:     v.brokers,
				TransactionStatePartitions:        1,
				TransactionStateReplicationFactor: v.brokers,
				DefaultReplicationFactor:          v.brokers,
				MinInsyncReplicas:                 1,
			}
			if v.manual {
				cfg.Clock = clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			}
			c := server.NewTestCluster(t, cfg)
			if err := c.CreateTopic("stress", 4, int16(v.brokers), nil); err != nil {
				t.Fatal(err)
			}
			runCoordinatorStress(t, c, v.manual, v.failover, *coordStressFor)
		})
	}
}

func runCoordinatorStress(t *testing.T, c *server.Cluster, manual, failover bool, d time.Duration) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.RequestRetries(0),
		kgo.RetryTimeout(time.Second), kgo.RequestTimeoutOverhead(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progress, commits, joins, deletes, moves atomic.Int64
	var wg sync.WaitGroup
	worker := func(f func(r *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(rand.Uint64(), 0))
			for ctx.Err() == nil {
				f(r)
			}
		}()
	}
	req := func(r kmsg.Request) (kmsg.Response, bool) {
		rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
		defer rcancel()
		resp, err := cl.Request(rctx, r)
		if err != nil {
			return nil, false
		}
		progress.Add(1)
		return resp, true
	}

	for p := range stressProducers {
		txnID := fmt.Sprintf("stress-txn-%d", p)
		worker(func(r *rand.Rand) {
			if stressTxn(req, r, txnID) {
				commits.Add(1)
			}
		})
	}
	// Joins without a member id leave pending members (MEMBER_ID_REQUIRED)
	// whose expiry timers run on the groups' locks.
	worker(func(r *rand.Rand) {
		jg := kmsg.NewPtrJoinGroupRequest()
		jg.Version = 9
		jg.Group = fmt.Sprintf("stress-g%d", r.IntN(stressGroups))
		jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 6000, 6000
		jg.ProtocolType = "consumer"
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name = "range"
		jg.Protocols = append(jg.Protocols, jp)
		if _, ok := req(jg); ok {
			joins.Add(1)
		}
	})
	worker(func(r *rand.Rand) {
		dg := kmsg.NewPtrDeleteGroupsRequest()
		dg.Groups = []string{fmt.Sprintf("stress-g%d", r.IntN(stressGroups))}
		if _, ok := req(dg); ok {
			deletes.Add(1)
		}
		waitOrDone(ctx, 20*time.Millisecond)
	})
	if manual {
		worker(func(r *rand.Rand) {
			if err := c.AdvanceClock(time.Duration(100+r.IntN(1900)) * time.Millisecond); err == nil {
				progress.Add(1)
			}
			waitOrDone(ctx, 5*time.Millisecond)
		})
	}
	if failover {
		worker(func(r *rand.Rand) {
			waitOrDone(ctx, 300*time.Millisecond)
			ps, ok := c.Partition("__consumer_offsets", 0)
			if !ok || ps.Leader < 0 || ctx.Err() != nil {
				return
			}
			if c.StopBroker(ps.Leader, server.StopClean) == nil {
				waitOrDone(ctx, 100*time.Millisecond)
				if err := c.StartBroker(ps.Leader); err != nil {
					t.Errorf("restarting broker %d: %v", ps.Leader, err)
				}
				moves.Add(1)
				progress.Add(1)
			}
		})
	}

	// The watchdog: the run ends after d, or fails once nothing has
	// progressed for stressStall.
	end := time.Now().Add(d)
	last, lastAt := progress.Load(), time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(end) {
		<-tick.C
		if n := progress.Load(); n != last {
			last, lastAt = n, time.Now()
			continue
		}
		if time.Since(lastAt) > stressStall {
			hung(t, fmt.Sprintf("no coordinator request completed for %v (commits %d, joins %d, deletes %d)",
				stressStall, commits.Load(), joins.Load(), deletes.Load()))
		}
	}
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stressStall + 15*time.Second):
		hung(t, "the load did not stop")
	}
	t.Logf("%v: %d transactions committed, %d joins, %d deletions, %d coordinator moves, %d requests",
		d, commits.Load(), joins.Load(), deletes.Load(), moves.Load(), progress.Load())
	if commits.Load() == 0 {
		t.Fatal("no transaction committed: the load did not run")
	}
}

// stressTxn runs one transaction of txnID that commits offsets for a
// random group, and reports whether EndTxn committed it.
func stressTxn(req func(kmsg.Request) (kmsg.Response, bool), r *rand.Rand, txnID string) bool {
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID, ip.TransactionTimeoutMillis = &txnID, 60000
	resp, ok := req(ip)
	if !ok || resp.(*kmsg.InitProducerIDResponse).ErrorCode != 0 {
		return false
	}
	ipr := resp.(*kmsg.InitProducerIDResponse)
	pid, epoch := ipr.ProducerID, ipr.ProducerEpoch
	for range 1 + r.IntN(5) {
		group := fmt.Sprintf("stress-g%d", r.IntN(stressGroups))
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = txnID, pid, epoch, group
		if resp, ok := req(ao); !ok || resp.(*kmsg.AddOffsetsToTxnResponse).ErrorCode != 0 {
			return false
		}
		oc := kmsg.NewPtrTxnOffsetCommitRequest()
		oc.TransactionalID, oc.Group, oc.ProducerID, oc.ProducerEpoch = txnID, group, pid, epoch
		oc.Generation = -1
		ot := kmsg.NewTxnOffsetCommitRequestTopic()
		ot.Topic = "stress"
		for p := range int32(4) {
			op := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			op.Partition, op.Offset, op.LeaderEpoch = p, r.Int64N(1000), -1
			ot.Partitions = append(ot.Partitions, op)
		}
		oc.Topics = append(oc.Topics, ot)
		if _, ok := req(oc); !ok {
			return false
		}
	}
	et := kmsg.NewPtrEndTxnRequest()
	et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = txnID, pid, epoch, r.IntN(4) != 0
	resp, ok = req(et)
	return ok && et.Commit && resp.(*kmsg.EndTxnResponse).ErrorCode == 0
}

// hung reports a hang with every goroutine's stack and ends the test
// binary: the cluster cannot close while its locks are stuck, so the
// test's cleanup would hang too.
func hung(t *testing.T, what string) {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s: a hang. Goroutines:\n%s\n", t.Name(), what, buf)
	os.Exit(1)
}

// waitOrDone waits d or until ctx ends: pacing of a load loop, not
// synchronisation.
func waitOrDone(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
