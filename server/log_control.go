package server

import (
	"fmt"
)

// Retention and compaction on demand, also over HTTP (control/logs.go).

// CleanPartition runs retention and, whatever its dirty ratio, compaction
// on topic/partition now, at the cluster clock's time: what the periodic
// jobs would do when due. The active segment is never touched, so roll it
// with segment.bytes or segment.ms to make records eligible.
func (c *Cluster) CleanPartition(topic string, partition int32) (CleanResult, error) {
	p, err := c.mustPartition(topic, partition)
	if err != nil {
		return CleanResult{}, err
	}
	return p.cleanNow(), nil
}

// CleanTopic is CleanPartition for every partition of topic.
func (c *Cluster) CleanTopic(topic string) ([]CleanResult, error) {
	t := c.topic(topic)
	if t == nil {
		return nil, fmt.Errorf("%w: %s", errUnknownPartition, topic)
	}
	out := make([]CleanResult, 0, len(t.partitions()))
	for _, p := range t.partitions() {
		out = append(out, p.cleanNow())
	}
	return out, nil
}

func (p *partition) cleanNow() CleanResult {
	now := p.t.c.now()
	bytesBefore := p.leaderSize()
	ret := p.applyRetention(now)
	cl := p.clean(now, true, "requested")
	return CleanResult{
		Topic: p.t.name, Partition: p.index,
		SegmentsDeleted: ret.Segments, LogStartOffset: ret.LogStartOffset,
		Compacted: cl.Cleaned, CleanedTo: cl.End, RecordsRemoved: cl.RecordsRemoved,
		BytesBefore: bytesBefore, BytesAfter: p.leaderSize(),
	}
}

func (p *partition) leaderSize() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.st.LeaderReplica(); l != nil {
		return l.Log().Size()
	}
	return 0
}
