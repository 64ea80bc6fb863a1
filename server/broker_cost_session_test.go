package server

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkFetchSessionIdle is a consumer's fetch that finds nothing new,
// six partitions at their HW, max_wait 0: "incremental" through a fetch
// session (the request lists no partition and the answer carries none),
// "sessionless" as a full fetch with session id 0 and epoch -1 (every
// partition listed and answered). allocs/op counts the whole process per
// request, the raw client's included (it allocates nothing per request).
// Instructions per request, as scripts/broker-cost.sh counts them:
//
//	go test -c -o /tmp/server.test ./server
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
//	  --zero-before='*brokerCostStart' --dump-before='*brokerCostStop' \
//	  --callgrind-out-file=/tmp/cg.out /tmp/server.test -test.run '^$' \
//	  -test.bench 'FetchSessionIdle/incremental$' -test.benchtime 1000x -test.cpu 1
func BenchmarkFetchSessionIdle(b *testing.B) {
	b.Run("incremental", func(b *testing.B) { fetchSessionIdle(b, true) })
	b.Run("sessionless", func(b *testing.B) { fetchSessionIdle(b, false) })
}

func fetchSessionIdle(b *testing.B, session bool) {
	c, cc := costCluster(b)
	p := newCostProducer(b, cc, 100)
	p.produce()
	t := c.topic("cost")
	full := kmsg.NewPtrFetchRequest()
	full.SetVersion(17)
	full.ReplicaID, full.ReplicaState.ID = -1, -1
	full.MaxWaitMillis, full.MinBytes, full.MaxBytes = 0, 1, 50<<20
	full.SessionEpoch = -1
	if session {
		full.SessionEpoch = 0
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = t.id
	for i := range costPartitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset = int32(i), costRecordsPerBatch // at the HW
		rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
	}
	full.Topics = append(full.Topics, rt)
	resp := kmsg.NewPtrFetchResponse()
	cc.decode(full, cc.roundTrip(cc.encode(full)), resp)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != costPartitions {
		b.Fatalf("full fetch: %v, %d topics", kerr.ErrorForCode(resp.ErrorCode), len(resp.Topics))
	}
	frame, epochAt := cc.encode(full), -1
	if session {
		if resp.SessionID == 0 {
			b.Fatal("no session")
		}
		inc := kmsg.NewPtrFetchRequest()
		inc.SetVersion(17)
		inc.ReplicaID, inc.ReplicaState.ID = -1, -1
		inc.MaxWaitMillis, inc.MinBytes, inc.MaxBytes = 0, 1, 50<<20
		inc.SessionID, inc.SessionEpoch = resp.SessionID, 0x5a5a5a5a // found below, then patched
		frame = cc.encode(inc)
		epochAt = bytes.Index(frame, []byte{0x5a, 0x5a, 0x5a, 0x5a})
	}
	epoch := int32(1)
	fetch := func() []byte {
		if epochAt >= 0 {
			binary.BigEndian.PutUint32(frame[epochAt:], uint32(epoch))
			epoch++
		}
		return cc.roundTrip(frame)
	}
	first := fetch()
	*resp = kmsg.NewFetchResponse()
	cc.decode(full, first, resp)
	if resp.ErrorCode != 0 {
		b.Fatal(kerr.ErrorForCode(resp.ErrorCode))
	}
	if want := map[bool]int{true: 0, false: 1}[session]; len(resp.Topics) != want {
		b.Fatalf("%d topics answered, want %d", len(resp.Topics), want)
	}
	size := len(first)
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	brokerCostStart()
	for range b.N {
		if in := fetch(); len(in) != size {
			b.Fatalf("answer of %d bytes, the first was %d", len(in), size)
		}
	}
	brokerCostStop()
}
