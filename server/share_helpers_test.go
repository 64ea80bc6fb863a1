package server

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareMember drives one share-group member with raw requests: its
// heartbeat, and a share session per broker.
type shareMember struct {
	t      *testing.T
	c      *Cluster
	cl     *kgo.Client
	group  string
	id     string
	epoch  int32
	epochs map[int32]int32 // the next share session epoch per broker
}

func newShareMember(t *testing.T, c *Cluster, group, id string) *shareMember {
	return &shareMember{t: t, c: c, cl: newClient(t, c), group: group, id: id, epochs: map[int32]int32{}}
}

func (m *shareMember) heartbeat(epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	m.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = m.group, m.id, epoch
	if topics != nil {
		req.SubscribedTopicNames = topics
	}
	resp, err := req.RequestWith(testContext(m.t), m.cl)
	if err != nil {
		m.t.Fatal(err)
	}
	if resp.ErrorCode == 0 {
		m.epoch = resp.MemberEpoch
	}
	return resp
}

func (m *shareMember) join(topics ...string) *kmsg.ShareGroupHeartbeatResponse {
	m.t.Helper()
	resp := m.heartbeat(0, topics...)
	if resp.ErrorCode != 0 {
		m.t.Fatalf("join: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp
}

// leaderOf is topic/partition's leader.
func leaderOf(c *Cluster, topic string, partition int32) int32 {
	p := c.topic(topic).partitions()[partition]
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.Leader()
}

type ack struct {
	first, last int64
	types       []int8
}

// fetch sends a ShareFetch for topic/0 to its leader in the member's
// session there, with acks, and moves the session's epoch on.
func (m *shareMember) fetch(topic string, maxWait time.Duration, acks ...ack) *kmsg.ShareFetchResponse {
	m.t.Helper()
	return m.fetchFrom(leaderOf(m.c, topic, 0), topic, 0, maxWait, acks...)
}

func (m *shareMember) fetchFrom(broker int32, topic string, partition int32, maxWait time.Duration, acks ...ack) *kmsg.ShareFetchResponse {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id)
	req.ShareSessionEpoch = m.epochs[broker]
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = int32(maxWait.Milliseconds()), 1, 1<<20, 500, 500
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = m.c.topic(topic).id
	rp := kmsg.NewShareFetchRequestTopicPartition()
	rp.Partition = partition
	for _, a := range acks {
		b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a.first, a.last, a.types
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := m.cl.Broker(int(broker)).RetriableRequest(testContext(m.t), req)
	if err != nil {
		m.t.Fatal(err)
	}
	r := resp.(*kmsg.ShareFetchResponse)
	if r.ErrorCode == 0 {
		m.epochs[broker]++
	}
	return r
}

// acquired lists a response's acquired runs as "first-last/count".
func acquired(r *kmsg.ShareFetchResponse) []string {
	var out []string
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			for _, a := range p.AcquiredRecords {
				out = append(out, fmt.Sprintf("%d-%d/%d", a.FirstOffset, a.LastOffset, a.DeliveryCount))
			}
		}
	}
	return out
}

func wantAcquired(t *testing.T, what string, r *kmsg.ShareFetchResponse, want ...string) {
	t.Helper()
	if r.ErrorCode != 0 {
		t.Fatalf("%s: %v", what, kerr.ErrorForCode(r.ErrorCode))
	}
	if got := acquired(r); !slices.Equal(got, want) {
		t.Fatalf("%s: acquired %v, want %v", what, got, want)
	}
}

// ackCode is the first partition's acknowledgement error.
func ackCode(r *kmsg.ShareFetchResponse) int16 {
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			return p.AcknowledgeErrorCode
		}
	}
	return -1
}

func shareProduce(t *testing.T, c *Cluster, topic string, n int) {
	t.Helper()
	cl := newClient(t, c, kgo.DefaultProduceTopic(topic))
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Value: []byte(fmt.Sprint(i))})
	}
	if err := cl.ProduceSync(testContext(t), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func newShareCluster(t *testing.T) (*Cluster, *clock.Clock) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	c := NewTestCluster(t, Config{Clock: clk})
	if err := c.CreateTopic("q", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	return c, clk
}
