package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func replicaIDs(ps PartitionState) []int32 {
	var out []int32
	for _, r := range ps.Replicas {
		out = append(out, r.Broker)
	}
	return out
}

func TestCreatePartitionsKadm(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("grow", 2, 2, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	adm := kadm.NewClient(cl)

	rs, err := adm.UpdatePartitions(ctx, 4, "grow")
	if err != nil || rs.Error() != nil {
		t.Fatalf("UpdatePartitions: %v %v", err, rs.Error())
	}
	// Placed where a topic created with 4 partitions would have them.
	for i, want := range [][]int32{{1, 2}, {2, 3}, {3, 1}, {1, 2}} {
		ps, ok := c.Partition("grow", int32(i))
		if !ok || !slices.Equal(replicaIDs(ps), want) || ps.Leader != want[0] || !slices.Equal(ps.ISR, want) {
			t.Fatalf("partition %d: %+v, want replicas and ISR %v led by %d", i, ps, want, want[0])
		}
	}
	md, err := adm.Metadata(ctx, "grow")
	if err != nil || len(md.Topics["grow"].Partitions) != 4 {
		t.Fatalf("metadata: %v %+v", err, md.Topics["grow"])
	}
	if p := md.Topics["grow"].Partitions[3]; p.Leader != 1 || !slices.Equal(p.Replicas, []int32{1, 2}) {
		t.Fatalf("metadata of partition 3: %+v", p)
	}

	// The new partitions replicate: an acks=all write commits on both.
	r := &kgo.Record{Topic: "grow", Partition: 3, Value: []byte("x")}
	pcl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := pcl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "partition 3 replicated", func() bool {
		ps, _ := c.Partition("grow", 3)
		return ps.HighWatermark == 1 && ps.Replicas[1].LogEndOffset == 1 && ps.Replicas[1].HighWatermark == 1
	})

	evs := c.Events(0)
	if i := slices.IndexFunc(evs, func(e Event) bool { return e.Type == EventPartitionsCreated }); i < 0 ||
		evs[i].Topic != "grow" || evs[i].Detail != "2 → 4 partitions" {
		t.Fatalf("no partitions_created event: %+v", evs)
	}

	// The count can only grow.
	for _, n := range []int{4, 3} {
		rs, err := adm.UpdatePartitions(ctx, n, "grow")
		if err != nil || !errors.Is(rs["grow"].Err, kerr.InvalidPartitions) {
			t.Errorf("to %d partitions: %v %+v, want INVALID_PARTITIONS", n, err, rs["grow"])
		}
	}
	rs, err = adm.UpdatePartitions(ctx, 5, "nope")
	if err != nil || !errors.Is(rs["nope"].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v %+v", err, rs["nope"])
	}
	rs, err = adm.ValidateUpdatePartitions(ctx, 6, "grow")
	if err != nil || rs.Error() != nil {
		t.Fatalf("validate only: %v %v", err, rs.Error())
	}
	if ts := c.State(); len(topicState(ts, "grow").Partitions) != 4 {
		t.Fatalf("validate only created partitions: %d", len(topicState(ts, "grow").Partitions))
	}
}

func TestCreatePartitionsAssignmentChecks(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("placed", 1, 2, nil); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c)
	send := func(count int32, assignment ...[]int32) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis = 5000
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "placed", count
		for _, rs := range assignment {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = rs
			rt.Assignment = append(rt.Assignment, a)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		msg := ""
		if m := resp.Topics[0].ErrorMessage; m != nil {
			msg = *m
		}
		return resp.Topics[0].ErrorCode, msg
	}
	for _, tc := range []struct {
		count int32
		a     [][]int32
	}{
		{3, [][]int32{{2, 3}}},         // one entry for two new partitions
		{2, [][]int32{{2}}},            // rf 1 against the topic's 2
		{2, [][]int32{{2, 9}}},         // no broker 9
		{2, [][]int32{{2, 2}}},         // listed twice
		{2, [][]int32{{}}},             // empty
		{2, [][]int32{{2, 3}, {3, 1}}}, // one too many
	} {
		if code, msg := send(tc.count, tc.a...); code != kerr.InvalidReplicaAssignment.Code || msg == "" {
			t.Errorf("count %d assignment %v: code %d %q, want INVALID_REPLICA_ASSIGNMENT", tc.count, tc.a, code, msg)
		}
	}
	if code, msg := send(3, []int32{3, 1}, []int32{2, 3}); code != 0 {
		t.Fatalf("valid assignment: %d %s", code, msg)
	}
	for i, want := range [][]int32{{3, 1}, {2, 3}} {
		ps, _ := c.Partition("placed", int32(i+1))
		if !slices.Equal(replicaIDs(ps), want) || ps.Leader != want[0] {
			t.Errorf("partition %d: %+v, want %v", i+1, ps, want)
		}
	}

	// A name twice is INVALID_REQUEST, answered once.
	req := kmsg.NewPtrCreatePartitionsRequest()
	for range 2 {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "placed", 9
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("duplicate names: %v %+v", err, resp)
	}
}

// TestCreatePartitionsUnderGroup adds partitions while a franz-go group
// consumes and a round-robin producer produces: the producer spreads to
// the new partitions once its metadata refreshes, and the group picks them
// up and reads every record: a classic group (the client's leader notices
// the new partitions and rejoins) and a KIP-848 group (the coordinator
// notices them on a heartbeat and assigns them).
func TestCreatePartitionsUnderGroup(t *testing.T) {
	t.Run("classic", func(t *testing.T) { testCreatePartitionsUnderGroup(t) })
	t.Run("kip848", func(t *testing.T) {
		testCreatePartitionsUnderGroup(t, kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer()))
	})
}

func testCreatePartitionsUnderGroup(t *testing.T, groupOpts ...kgo.Opt) {
	c := NewTestCluster(t, Config{ConsumerGroupHeartbeatInterval: 50 * time.Millisecond})
	ctx := testContext(t)
	if err := c.CreateTopic("live", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	prod := newClient(t, c, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.MetadataMaxAge(200*time.Millisecond),
		kgo.MetadataMinAge(50*time.Millisecond))
	cons := newClient(t, c, append([]kgo.Opt{kgo.ConsumerGroup("g"), kgo.ConsumeTopics("live"), kgo.MetadataMaxAge(200 * time.Millisecond),
		kgo.MetadataMinAge(50 * time.Millisecond)}, groupOpts...)...)

	var mu sync.Mutex
	seen := map[string]int32{} // value → partition
	byPartition := map[int32]int{}
	consumeCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for consumeCtx.Err() == nil {
			fs := cons.PollFetches(consumeCtx)
			fs.EachRecord(func(r *kgo.Record) {
				mu.Lock()
				seen[string(r.Value)] = r.Partition
				byPartition[r.Partition]++
				mu.Unlock()
			})
		}
	}()
	t.Cleanup(func() { stop(); <-done })

	n := 0
	produce := func() {
		t.Helper()
		r := &kgo.Record{Topic: "live", Value: fmt.Appendf(nil, "v%d", n)}
		n++
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		produce()
	}
	waitFor(t, 20*time.Second, "the group reads partition 0", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 10
	})

	if err := c.CreatePartitions("live", 3, nil); err != nil {
		t.Fatal(err)
	}
	// Produce until the producer's metadata shows the new partitions and
	// round robin puts records on each.
	deadline := time.Now().Add(20 * time.Second)
	for {
		produce()
		mu.Lock()
		ok := byPartition[1] > 0 && byPartition[2] > 0
		mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group never read partitions 1 and 2: %v", byPartition)
		}
	}
	waitFor(t, 20*time.Second, "every record consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})
	for i := range int32(3) {
		ps, _ := c.Partition("live", i)
		if ps.HighWatermark == 0 {
			t.Errorf("partition %d got no records", i)
		}
	}
}
