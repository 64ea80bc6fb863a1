package server_test

// Group coordinator benchmarks: the round trips of a consumer group's life
// and the load of a shard's groups when its coordinator moves.
//
//	go test ./server -run '^$' -bench 'Group(RoundTrips|Load)' -benchtime 2s

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchGroup is one classic member of a group, driven with raw requests.
type benchGroup struct {
	cl     *kgo.Client
	group  string
	member string
	gen    int32
}

func (g *benchGroup) request(b *testing.B, r kmsg.Request) kmsg.Response {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := g.cl.Request(ctx, r)
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

// join runs JoinGroup (again with the id it was given) and SyncGroup as
// the group's only member, which leads.
func (g *benchGroup) join(b *testing.B) {
	for {
		jg := kmsg.NewPtrJoinGroupRequest()
		jg.Version = 9
		jg.Group, jg.MemberID = g.group, g.member
		jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 30000, 30000
		jg.ProtocolType = "consumer"
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name = "range"
		jp.Metadata = (&kmsg.ConsumerMemberMetadata{Topics: []string{"bench"}}).AppendTo(nil)
		jg.Protocols = append(jg.Protocols, jp)
		resp := g.request(b, jg).(*kmsg.JoinGroupResponse)
		g.member = resp.MemberID
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			continue
		}
		if resp.ErrorCode != 0 {
			b.Fatalf("JoinGroup %s: %v", g.group, kerr.ErrorForCode(resp.ErrorCode))
		}
		g.gen = resp.Generation
		break
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version = 5
	sg.Group, sg.MemberID, sg.Generation = g.group, g.member, g.gen
	pt, pn := "consumer", "range"
	sg.ProtocolType, sg.Protocol = &pt, &pn
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID = g.member
	a.MemberAssignment = (&kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "bench", Partitions: []int32{0}}}}).AppendTo(nil)
	sg.GroupAssignment = append(sg.GroupAssignment, a)
	if resp := g.request(b, sg).(*kmsg.SyncGroupResponse); resp.ErrorCode != 0 {
		b.Fatalf("SyncGroup %s: %v", g.group, kerr.ErrorForCode(resp.ErrorCode))
	}
}

// commit commits offset for bench/0 as the member.
func (g *benchGroup) commit(b *testing.B, offset int64) {
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version = 8
	oc.Group, oc.MemberID, oc.Generation = g.group, g.member, g.gen
	ot := kmsg.NewOffsetCommitRequestTopic()
	ot.Topic = "bench"
	op := kmsg.NewOffsetCommitRequestTopicPartition()
	op.Partition, op.Offset, op.LeaderEpoch = 0, offset, -1
	meta := "bench"
	op.Metadata = &meta
	ot.Partitions = append(ot.Partitions, op)
	oc.Topics = append(oc.Topics, ot)
	resp := g.request(b, oc).(*kmsg.OffsetCommitResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		b.Fatalf("OffsetCommit %s: %v", g.group, kerr.ErrorForCode(code))
	}
}

func benchClient(b *testing.B, c *server.Cluster) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

// BenchmarkGroupRoundTrips measures one member's JoinGroup (a rebalance
// of its group), SyncGroup (the group metadata written acks=all) and
// OffsetCommit (an offset written acks=all) over TCP, on 3 brokers with
// __consumer_offsets at rf 3.
func BenchmarkGroupRoundTrips(b *testing.B) {
	c := server.NewTestCluster(b, server.Config{OffsetsTopicPartitions: 1})
	if err := c.CreateTopic("bench", 1, 3, nil); err != nil {
		b.Fatal(err)
	}
	g := &benchGroup{cl: benchClient(b, c), group: "bench-group"}
	g.join(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		g.join(b)
		g.commit(b, int64(i))
	}
	b.StopTimer()
	b.ReportMetric(float64(3*b.N)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkGroupLoad measures a coordinator failover of a shard holding
// 1,000 groups, each with an offset and group metadata: one op elects the
// next replica of __consumer_offsets/0 and answers an OffsetFetch there,
// which loads every group of the shard from the new leader's log.
func BenchmarkGroupLoad(b *testing.B) {
	const groups = 1000
	c := server.NewTestCluster(b, server.Config{OffsetsTopicPartitions: 1})
	if err := c.CreateTopic("bench", 1, 3, nil); err != nil {
		b.Fatal(err)
	}
	cl := benchClient(b, c)
	for i := range groups {
		g := &benchGroup{cl: cl, group: fmt.Sprintf("load-%d", i)}
		g.join(b)
		g.commit(b, int64(i))
		// Leave, so that no session timer of the old coordinator runs on.
		lg := kmsg.NewPtrLeaveGroupRequest()
		lg.Version = 3
		lg.Group = g.group
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = g.member
		lg.Members = append(lg.Members, lm)
		g.request(b, lg)
	}
	ps, _ := c.Partition("__consumer_offsets", 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		next := ps.Replicas[(i+1)%len(ps.Replicas)]
		if _, err := c.ElectLeader("__consumer_offsets", 0, next.Broker, false); err != nil {
			b.Fatal(err)
		}
		// kgo sends its newest version (v8+: one entry per group).
		of := kmsg.NewPtrOffsetFetchRequest()
		og := kmsg.NewOffsetFetchRequestGroup()
		og.Group = fmt.Sprintf("load-%d", i%groups)
		of.Groups = append(of.Groups, og)
		// Straight to the new leader: the op is the load, not the client's
		// rediscovery of its coordinator.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := cl.Broker(int(next.Broker)).Request(ctx, of)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		resp := r.(*kmsg.OffsetFetchResponse)
		if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 || len(resp.Groups[0].Topics) != 1 {
			b.Fatalf("OffsetFetch on broker %d: %+v", next.Broker, resp)
		}
		if got := resp.Groups[0].Topics[0].Partitions[0].Offset; got != int64(i%groups) {
			b.Fatalf("group %s: offset %d, want %d", og.Group, got, i%groups)
		}
	}
}
