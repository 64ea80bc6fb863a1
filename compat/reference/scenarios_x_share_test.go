package reference

// The share-group scenario (KIP-932): a member joins, its share session
// acquires records on the partition leader, acknowledges them (ACCEPT,
// RELEASE), the records it holds come back after the acquisition lock
// (30 s) with their delivery counts, and the share-session errors.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Appended last: this file sorts after the other scenario files, so its
// rows close docs/reference.md's table.
func init() { scenarios = append(scenarios, shareScenario) }

var shareScenario = scenario{
	name: "share",
	rows: []string{
		"share group: join, acquire, ACCEPT/RELEASE, records back after the lock expires",
		"share sessions: errors",
	},
	run: func(r *run) []string {
		r.create("share", nil)
		const group, member = "sg-ref", "AAAAAAAAAAAAAAAAAAAAAQ"
		coord := r.coordinator(group)
		var out []string
		// Kafka assigns a partition once its share state is initialised.
		var hb *kmsg.ShareGroupHeartbeatResponse
		epoch := int32(0)
		r.waitFor("an assignment", func() bool {
			req := kmsg.NewPtrShareGroupHeartbeatRequest()
			req.SetVersion(1)
			req.GroupID, req.MemberID, req.MemberEpoch = group, member, epoch
			if epoch == 0 {
				req.SubscribedTopicNames = []string{"share"}
			}
			hb = r.do(coord, req).(*kmsg.ShareGroupHeartbeatResponse)
			if hb.ErrorCode != 0 {
				r.Fatalf("heartbeat: %s", errName(hb.ErrorCode))
			}
			epoch = hb.MemberEpoch
			return hb.Assignment != nil && len(hb.Assignment.TopicPartitions) == 1
		})
		out = append(out, fmt.Sprintf("assigned %v", hb.Assignment.TopicPartitions[0].Partitions))

		leader := r.meta("share").leader
		cn, err := Dial(r.ctx, r.tg.Addr(leader))
		if err != nil {
			r.Fatal(err)
		}
		defer cn.Close()
		topicID := r.shareTopicID("share")
		session := int32(0)
		fetch := func(wait time.Duration) *kmsg.ShareFetchResponse {
			req := kmsg.NewPtrShareFetchRequest()
			req.SetVersion(2)
			req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr(member), session
			req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = int32(wait.Milliseconds()), 1, 1<<20, 100, 100
			rt := kmsg.NewShareFetchRequestTopic()
			rt.TopicID = topicID
			rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
			req.Topics = append(req.Topics, rt)
			resp, err := cn.Do(r.ctx, req)
			if err != nil {
				r.Fatal(err)
			}
			fr := resp.(*kmsg.ShareFetchResponse)
			if fr.ErrorCode == 0 {
				session++
			}
			return fr
		}
		acquired := func(fr *kmsg.ShareFetchResponse) string {
			var s []string
			for _, t := range fr.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 {
						s = append(s, errName(p.ErrorCode))
					}
					for _, a := range p.AcquiredRecords {
						s = append(s, fmt.Sprintf("%d-%d/%d", a.FirstOffset, a.LastOffset, a.DeliveryCount))
					}
				}
			}
			if fr.ErrorCode != 0 {
				s = append(s, errName(fr.ErrorCode))
			}
			if len(s) == 0 {
				return "none"
			}
			return strings.Join(s, ",")
		}
		first := fetch(100 * time.Millisecond)
		out = append(out, "open: "+acquired(first)+fmt.Sprintf(" lock %d ms", first.AcquisitionLockTimeoutMillis))
		r.produce("share", -1, "a", "b", "c")
		var got string
		r.waitFor("acquired records", func() bool {
			got = acquired(fetch(500 * time.Millisecond))
			return got != "none"
		})
		out = append(out, "acquired "+got)

		ack := func(acks ...[3]int64) string {
			req := kmsg.NewPtrShareAcknowledgeRequest()
			req.SetVersion(2)
			req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr(member), session
			rt := kmsg.NewShareAcknowledgeRequestTopic()
			rt.TopicID = topicID
			rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
			for _, a := range acks {
				b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
				b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a[0], a[1], []int8{int8(a[2])}
				rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
			}
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := cn.Do(r.ctx, req)
			if err != nil {
				r.Fatal(err)
			}
			ar := resp.(*kmsg.ShareAcknowledgeResponse)
			if ar.ErrorCode != 0 {
				return errName(ar.ErrorCode)
			}
			session++
			return errName(ar.Topics[0].Partitions[0].ErrorCode)
		}
		out = append(out, "ack 0 ACCEPT, 1 RELEASE: "+ack([3]int64{0, 0, 1}, [3]int64{1, 1, 2}))
		r.waitFor("the released record", func() bool {
			got = acquired(fetch(500 * time.Millisecond))
			return got != "none"
		})
		out = append(out, "then "+got)
		out = append(out, "ack 0 again (below the start): "+ack([3]int64{0, 0, 1}))
		// 1 and 2 are held; their locks run out after 30 s (each its own:
		// they come back one by one or together).
		start := time.Now()
		var back []string
		r.waitFor("the locks to expire", func() bool {
			if got := acquired(fetch(time.Second)); got != "none" {
				back = append(back, strings.Split(got, ",")...)
			}
			return len(back) >= 2
		})
		slices.Sort(back)
		out = append(out, fmt.Sprintf("after the lock (>= 25 s: %v): %s", time.Since(start) >= 25*time.Second, strings.Join(back, ",")))

		// Session errors, on the same connection.
		session += 5
		out = append(out, "wrong epoch: "+acquired(fetch(0)))
		session = -1
		closed := fetch(0)
		out = append(out, "close: "+acquired(closed))
		session = 3
		return []string{strings.Join(out, "; "), "after close: " + acquired(fetch(0)) + "; ShareAcknowledge epoch 0: " + func() string {
			session = 0
			return ack([3]int64{0, 0, 1})
		}()}
	},
}

// shareTopicID is topic's id, from Metadata.
func (r *run) shareTopicID(topic string) [16]byte {
	r.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	req.Topics = []kmsg.MetadataRequestTopic{topicReq(topic)}
	resp := r.do(0, req).(*kmsg.MetadataResponse)
	return resp.Topics[0].TopicID
}
