package server

// Four details of Kafka 4.4's Fetch that clients meet at the edges:
//
//   - Byte limits cut the log, not whole batches (LogSegment.read): a
//     partition answers the bytes from its fetch offset's batch up to
//     min(PartitionMaxBytes, what MaxBytes leaves), so the last batch may be
//     partial (clients drop it and fetch it again). Only the first
//     partition with data may exceed the limit, by answering its first
//     batch whole (KIP-74); after it a partition whose first batch does not
//     fit answers nothing.
//   - A consumer's LastFetchedEpoch (v12+) is checked against the serving
//     replica's epoch cache before reading (Partition.readRecords): an
//     unknown epoch (past the latest) or an offset below the log start is
//     OFFSET_OUT_OF_RANGE; an epoch that ended before the fetch offset, or
//     one the log no longer has, answers DivergingEpoch (the epoch and end
//     offset to truncate to) with no records, and the fetch returns at once.
//   - MaxBytes is capped at the broker's fetch.max.bytes.
//   - A partition named twice in one request is read once, with the last
//     entry's offsets and limits, at the place of its first entry (Kafka
//     keeps the request's partitions in a LinkedHashMap).

import (
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/fetchsession"
	"github.com/fakekafka/fakekafka/replication"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// dedupeFetches removes repeated partitions from fs in place: the last
// entry's values at the first entry's place. It allocates only for large
// requests that repeat a partition.
func dedupeFetches(version int16, fs []fetchsession.Fetch) []fetchsession.Fetch {
	same := func(a, b *fetchsession.Fetch) bool { return a.Partition == b.Partition && sameTopic(version, a, b) }
	if len(fs) <= 32 {
		out := fs[:0]
		for i := range fs {
			dup := false
			for j := range out {
				if same(&out[j], &fs[i]) {
					out[j] = fs[i]
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, fs[i])
			}
		}
		return out
	}
	type key struct {
		topic     string
		id        [16]byte
		partition int32
	}
	at := make(map[key]int, len(fs))
	out := fs[:0]
	for i := range fs {
		k := key{fs[i].Topic, fs[i].TopicID, fs[i].Partition}
		if j, ok := at[k]; ok {
			out[j] = fs[i]
			continue
		}
		at[k] = len(out)
		out = append(out, fs[i])
	}
	return out
}

// checkLastFetchedEpoch applies a v12+ consumer's LastFetchedEpoch on the
// serving replica me (callers hold p.mu). It returns true when the answer
// is decided: sp then holds DivergingEpoch or the error.
func checkLastFetchedEpoch(st *replication.Partition, me int32, version int16, f *fetchsession.Fetch, sp *kmsg.FetchResponseTopicPartition) bool {
	if version < 12 || f.LastFetchedEpoch < 0 {
		return false
	}
	r := st.Replica(me)
	epoch, end := st.OffsetForLeaderEpoch(me, f.LastFetchedEpoch)
	if epoch < 0 || end < 0 || f.FetchOffset < r.LogStartOffset() {
		sp.ErrorCode = kerr.OffsetOutOfRange.Code
		return true
	}
	if epoch < f.LastFetchedEpoch || end < f.FetchOffset {
		sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = epoch, end
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = r.HW(), r.LSO(), r.LogStartOffset()
		return true
	}
	return false
}

// cutToLimit makes raws (the whole batches read, the first one whole even
// past limit, size bytes in all) what Kafka's log slice of limit bytes is:
// the first batch alone when it is larger and minOne allows it, else the
// batches up to limit with the next one cut where the limit falls. next
// reads the batch at an offset (nil when there is none below the bound).
func cutToLimit(raws [][]byte, size int, last int64, limit int64, minOne bool, next func(offset int64) []byte) ([][]byte, int) {
	if len(raws) == 0 || limit <= 0 && !minOne {
		return raws[:0], 0
	}
	if int64(size) > limit {
		if minOne {
			return raws, size // KIP-74: the first batch goes whole
		}
		// Kafka answers nothing rather than a cut first batch
		// (ReplicaManager: firstEntryIncomplete).
		return raws[:0], 0
	}
	if int64(size) == limit {
		return raws, size
	}
	// A next batch that would have fit was left out for another reason
	// (the segment ends; Kafka reads one segment at a time).
	if tail := next(last + 1); int64(len(tail)) > limit-int64(size) {
		n := limit - int64(size)
		raws = append(raws, tail[:n])
		size += int(n)
	}
	return raws, size
}

// fetchMaxBytes is the broker's fetch.max.bytes (static, 55 MiB by
// default): Kafka caps a Fetch's MaxBytes at it.
func (c *Cluster) fetchMaxBytes() int64 {
	if v, ok := c.cfg.BrokerConfigs["fetch.max.bytes"]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err == nil {
			return n
		}
	}
	return 57671680
}
