package reference

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The share coordinator (KIP-932): its answers over the share-state APIs,
// the fenced ones included, and the state a new coordinator answers after
// the old one crashed.
func init() {
	scenarios = append(scenarios, scenario{
		name: "share-state-failover",
		rows: []string{
			"share coordinator: InitializeShareGroupState, ReadShareGroupState (a new leader epoch), WriteShareGroupState, then a stale leader epoch and state epoch",
			"… the share coordinator's broker crashes: the next one answers the last written state",
		},
		run: func(r *run) []string {
			const topic, group = "sharefo", "ref-share"
			r.create(topic, nil)
			id := r.topicIDOf(topic)
			key := fmt.Sprintf("%s:%s:0", group, base64.RawURLEncoding.EncodeToString(id[:]))
			co := r.shareCoordinator(key)
			initCode := r.do(co, shareInit(0, group, id, 0, 1, 0)).(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode
			read := func(node int32, leaderEpoch int32) string {
				p := r.do(node, shareRead(0, group, id, 0, leaderEpoch)).(*kmsg.ReadShareGroupStateResponse).Topics[0].Partitions[0]
				if p.ErrorCode != 0 {
					return errName(p.ErrorCode)
				}
				var bs []string
				for _, b := range p.StateBatches {
					bs = append(bs, fmt.Sprintf("%d-%d state %d count %d", b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount))
				}
				return fmt.Sprintf("state epoch %d, start %d, batches [%s]", p.StateEpoch, p.StartOffset, strings.Join(bs, ", "))
			}
			write := func(node int32, stateEpoch, leaderEpoch int32, start int64) string {
				return errName(r.do(node, shareWrite(1, group, id, 0, stateEpoch, leaderEpoch, start, 1)).(*kmsg.WriteShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode)
			}
			first := fmt.Sprintf("initialize %s; read at leader epoch 2: %s; write %s; read: %s; write at leader epoch 1: %s; at state epoch 0: %s",
				errName(initCode), read(co, 2), write(co, 1, 2, 2), read(co, 2), write(co, 1, 1, 2), write(co, 0, 2, 2))
			r.crash(co)
			next := r.shareCoordinator(key)
			sum := r.do(next, shareSummary(1, group, id, 0)).(*kmsg.ReadShareGroupStateSummaryResponse).Topics[0].Partitions[0]
			moved := "the same broker"
			if next != co {
				moved = "another broker"
			}
			second := fmt.Sprintf("coordinator: %s; read at leader epoch 2: %s; summary: %s, start %d, leader epoch %d, state epoch %d, delivery complete %d",
				moved, read(next, 2), errName(sum.ErrorCode), sum.StartOffset, sum.LeaderEpoch, sum.StateEpoch, sum.DeliveryCompleteCount)
			return []string{first, second}
		},
	})
}

// topicIDOf is topic's id as Metadata v12 answers it.
func (r *run) topicIDOf(topic string) [16]byte {
	r.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp := r.do(0, req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		r.Fatalf("metadata of %s", topic)
	}
	return resp.Topics[0].TopicID
}
