package reference

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The fetch sessions scenario (KIP-227): raw Fetch requests to the leader
// of two one-partition topics, through a session's life and every way a
// session request fails. Session ids are random on both clusters, so rows
// say only whether an answer carries one.
func init() {
	scenarios = append(scenarios, scenario{
		name: "fetch-sessions",
		rows: []string{
			"full fetch (epoch 0) of two partitions, then incremental fetches: nothing new, new records on one, a stale epoch",
			"session errors: v12 on a v13+ session, an unknown id, an id past every cache shard, session -1 with epoch -1",
			"the client forgets one partition, then the other (the session closes), then fetches on the closed session",
			"max_bytes 1 on a new session of two partitions with records: which partition each incremental fetch answers",
		},
		run: func(r *run) []string {
			r.create("fsa", nil)
			r.create("fsb", nil)
			r.produce("fsa", acksAll, vals("a", 0, 3)...)
			sf := &sessionFetcher{r: r, ids: map[string][16]byte{}}
			for _, t := range []string{"fsa", "fsb"} {
				sf.ids[t] = r.topicID(t)
			}
			var rows [3][]string
			full := sf.fetch(17, 0, 0, []sessionPart{{"fsa", 0}, {"fsb", 0}}, nil)
			id := full.SessionID
			rows[0] = append(rows[0], "epoch 0: "+sf.show(full))
			rows[0] = append(rows[0], "epoch 1 (fsa at 3): "+sf.show(sf.fetch(17, id, 1, []sessionPart{{"fsa", 3}}, nil)))
			r.produce("fsb", acksAll, vals("b", 0, 2)...)
			rows[0] = append(rows[0], "epoch 2, records on fsb: "+sf.show(sf.fetch(17, id, 2, nil, nil)))
			rows[0] = append(rows[0], "epoch 2 again: "+sf.show(sf.fetch(17, id, 2, nil, nil)))

			rows[1] = append(rows[1], "v12 at epoch 3: "+sf.show(sf.fetch(12, id, 3, nil, nil)))
			rows[1] = append(rows[1], "unknown id 12345: "+sf.show(sf.fetch(17, 12345, 1, nil, nil)))
			rows[1] = append(rows[1], "id 2147483647: "+sf.show(sf.fetch(17, 1<<31-1, 1, nil, nil)))
			rows[1] = append(rows[1], "-1/-1: "+sf.show(sf.fetch(17, -1, -1, []sessionPart{{"fsa", 0}}, nil)))

			rows[2] = append(rows[2], "epoch 3 (fsb at 2, forget fsa): "+sf.show(sf.fetch(17, id, 3, []sessionPart{{"fsb", 2}}, []string{"fsa"})))
			r.produce("fsa", acksAll, vals("c", 0, 1)...)
			rows[2] = append(rows[2], "epoch 4, records on the forgotten fsa: "+sf.show(sf.fetch(17, id, 4, nil, nil)))
			rows[2] = append(rows[2], "epoch 5, forget fsb: "+sf.show(sf.fetch(17, id, 5, nil, []string{"fsb"})))
			rows[2] = append(rows[2], "epoch 6: "+sf.show(sf.fetch(17, id, 6, nil, nil)))
			r.create("fsc", nil)
			r.create("fsd", nil)
			r.produce("fsc", acksAll, "c0")
			r.produce("fsc", acksAll, "c1")
			r.produce("fsc", acksAll, "c2")
			r.produce("fsd", acksAll, "d0")
			r.produce("fsd", acksAll, "d1")
			for _, t := range []string{"fsc", "fsd"} {
				sf.ids[t] = r.topicID(t)
			}
			sf.maxBytes = 1
			var turns []string
			full = sf.fetch(17, 0, 0, []sessionPart{{"fsc", 0}, {"fsd", 0}}, nil)
			id = full.SessionID
			turns = append(turns, "epoch 0: "+sf.show(full))
			turns = append(turns, "epoch 1 (fsc at 1): "+sf.show(sf.fetch(17, id, 1, []sessionPart{{"fsc", 1}}, nil)))
			turns = append(turns, "epoch 2 (fsc at 2): "+sf.show(sf.fetch(17, id, 2, []sessionPart{{"fsc", 2}}, nil)))
			turns = append(turns, "epoch 3 (fsd at 1): "+sf.show(sf.fetch(17, id, 3, []sessionPart{{"fsd", 1}}, nil)))
			return []string{strings.Join(rows[0], "; "), strings.Join(rows[1], "; "), strings.Join(rows[2], "; "), strings.Join(turns, "; ")}
		},
	})
}

type sessionPart struct {
	topic  string
	offset int64
}

type sessionFetcher struct {
	r        *run
	ids      map[string][16]byte
	maxBytes int32 // the request's max_bytes; 0 for 1 MiB
}

// fetch sends a Fetch of version v with session id and epoch to broker 1
// (which leads both topics), listing parts and forgetting topics' partition 0.
func (sf *sessionFetcher) fetch(v int16, id, epoch int32, parts []sessionPart, forget []string) *kmsg.FetchResponse {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(v)
	req.ReplicaID, req.ReplicaState.ID = -1, -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 1<<20
	if sf.maxBytes > 0 {
		req.MaxBytes = sf.maxBytes
	}
	req.SessionID, req.SessionEpoch = id, epoch
	for _, p := range parts {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = p.topic, sf.ids[p.topic]
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes = p.offset, 1<<20
		rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	for _, t := range forget {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID, ft.Partitions = t, sf.ids[t], []int32{0}
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return sf.r.do(1, req).(*kmsg.FetchResponse)
}

// show is an answer without its random session id: the error, whether
// there is a session, and each partition answered (records, HW, error).
func (sf *sessionFetcher) show(resp *kmsg.FetchResponse) string {
	session := "no session"
	if resp.SessionID != 0 {
		session = "session"
		if resp.SessionID == 1<<31-1 {
			session = "session id echoed"
		}
	}
	var parts []string
	for _, rt := range resp.Topics {
		name := rt.Topic
		for t, id := range sf.ids {
			if id == rt.TopicID {
				name = t
			}
		}
		for _, rp := range rt.Partitions {
			n := 0
			for b := rp.RecordBatches; len(b) >= 61; {
				size := int(int32(uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11]))) + 12
				n += int(int32(uint32(b[57])<<24 | uint32(b[58])<<16 | uint32(b[59])<<8 | uint32(b[60])))
				if size > len(b) {
					break
				}
				b = b[size:]
			}
			parts = append(parts, fmt.Sprintf("%s %d records HW %d %s", name, n, rp.HighWatermark, errName(rp.ErrorCode)))
		}
	}
	return fmt.Sprintf("%s, %s, [%s]", errName(resp.ErrorCode), session, strings.Join(parts, ", "))
}

// topicID asks broker 1's Metadata for topic's id.
func (r *run) topicID(topic string) [16]byte {
	r.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp := r.do(1, req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		r.Fatalf("metadata for %s", topic)
	}
	return resp.Topics[0].TopicID
}
