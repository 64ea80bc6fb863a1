package reference

import "github.com/twmb/franz-go/pkg/kmsg"

// Fetch sessions in the corpus, in order: a fetch with session -1 and
// epoch -1 (kafka-go's), a full fetch that opens a session (its random id
// blanked, and kept), an incremental fetch with nothing new, the same
// epoch again, the other side of v13 on the session, an unknown id, an id
// past every cache shard, and epoch -1 closing the session.
func fetchSessionCases(versions map[int16][2]int16) []corpusCase {
	vr, ok := versions[kmsg.Fetch.Int16()]
	if !ok || vr[1] < 13 || vr[0] > 12 {
		return nil
	}
	v := vr[1]
	session := func(id func(e *corpusEnv) int32, epoch int32, v int16, withPartition bool) func(e *corpusEnv) kmsg.Request {
		return func(e *corpusEnv) kmsg.Request {
			req := fetchReq(v, e, "corpus", 0, 3)
			// Only the first batch, the setup's ten records: what later
			// cases append differs between the clusters (producer ids).
			req.Topics[0].Partitions[0].PartitionMaxBytes = 1
			req.SessionID, req.SessionEpoch = id(e), epoch
			if !withPartition {
				req.Topics = nil
			}
			return req
		}
	}
	fixed := func(id int32) func(*corpusEnv) int32 { return func(*corpusEnv) int32 { return id } }
	kept := func(e *corpusEnv) int32 { return e.fetchSession }
	return []corpusCase{
		{name: "Fetch/session-minus-one", req: session(fixed(-1), -1, v, true)},
		{name: "Fetch/session-full", req: session(fixed(0), 0, v, true), blank: []string{"SessionID"},
			after: func(e *corpusEnv, resp kmsg.Response) { e.fetchSession = resp.(*kmsg.FetchResponse).SessionID }},
		{name: "Fetch/session-incremental-nothing-new", req: session(kept, 1, v, false), blank: []string{"SessionID"}},
		{name: "Fetch/session-stale-epoch", req: session(kept, 1, v, false)},
		{name: "Fetch/session-v12-on-v13-session", req: session(kept, 2, 12, false)},
		{name: "Fetch/session-unknown-id", req: session(fixed(12345), 1, v, false)},
		{name: "Fetch/session-id-past-shards", req: session(fixed(1<<31-1), 1, v, false)},
		{name: "Fetch/session-close", req: session(kept, -1, v, true)},
		{name: "Fetch/session-closed", req: session(kept, 2, v, false)},
	}
}
