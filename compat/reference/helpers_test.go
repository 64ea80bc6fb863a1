package reference

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// run is one scenario on one target: raw requests at pinned versions, and
// waits on conditions (never on time) so that only what a client sees is
// compared, not how long the cluster took.
type run struct {
	*testing.T
	tg   Target
	ctx  context.Context
	down map[int32]bool // crashed, stopped or paused
}

func newRun(t *testing.T, tg Target) *run {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return &run{T: t, tg: tg, ctx: ctx, down: map[int32]bool{}}
}

// restore brings every broker back, so the next scenario starts healthy.
func (r *run) restore() {
	for id := int32(1); id <= 3; id++ {
		if !r.down[id] {
			continue
		}
		// A paused broker resumes; a stopped one cannot, so it starts.
		if err := r.tg.Resume(id); err != nil {
			if err := r.tg.Start(id); err != nil {
				r.Errorf("restoring broker %d: %v", id, err)
			}
		}
	}
	r.down = map[int32]bool{}
}

func (r *run) crash(id int32) {
	r.Helper()
	r.down[id] = true
	if err := r.tg.Crash(id); err != nil {
		r.Fatalf("crash %d: %v", id, err)
	}
}

func (r *run) start(id int32) {
	r.Helper()
	if err := r.tg.Start(id); err != nil {
		r.Fatalf("start %d: %v", id, err)
	}
	delete(r.down, id)
}

func (r *run) pause(id int32) {
	r.Helper()
	r.down[id] = true
	if err := r.tg.Pause(id); err != nil {
		r.Fatalf("pause %d: %v", id, err)
	}
}

// letParkedFetchesExpire lets the fetch each just-paused Kafka follower had
// parked at the leader run out (replica.fetch.wait.max.ms, 500 ms) before
// the scenario writes: a write while it is parked is answered into the
// stopped broker's socket, and the broker appends it the moment it resumes,
// so the records would not be lost after all. fakekafka's pause stops its
// follower at once, so nothing waits there. The pause is Kafka's own timer
// running, not synchronisation: nothing observable says it has expired.
func (r *run) letParkedFetchesExpire() {
	if _, ok := r.tg.(KafkaTarget); ok {
		time.Sleep(time.Second)
	}
}

func (r *run) resume(id int32) {
	r.Helper()
	if err := r.tg.Resume(id); err != nil {
		r.Fatalf("resume %d: %v", id, err)
	}
	delete(r.down, id)
}

// do sends req to broker id (0: the first broker that is up).
func (r *run) do(id int32, req kmsg.Request) kmsg.Response {
	r.Helper()
	if id == 0 {
		id = r.live()
	}
	ctx, cancel := context.WithTimeout(r.ctx, 20*time.Second)
	defer cancel()
	resp, err := RoundTrip(ctx, r.tg.Addr(id), req)
	if err != nil {
		r.Fatalf("%s to broker %d: %v", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp
}

func (r *run) live() int32 {
	for id := int32(1); id <= 3; id++ {
		if !r.down[id] {
			return id
		}
	}
	r.Fatal("no broker is up")
	return 0
}

// waitFor polls cond until it holds, failing after 60 s.
func (r *run) waitFor(what string, cond func() bool) {
	r.Helper()
	if !r.poll(60*time.Second, cond) {
		r.Fatalf("%s: timed out waiting for %s", r.tg.Name(), what)
	}
}

// poll checks cond every 50 ms until it holds (true) or d passes (false).
func (r *run) poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-r.ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// partition is partition 0 of a topic as Metadata describes it.
type partition struct {
	code            int16
	leader, epoch   int32
	replicas, isr   []int32
	offline         []int32
	brokers         []int32 // every broker the response lists
	leaderAvailable bool
}

func (p partition) String() string {
	return fmt.Sprintf("leader %d epoch %d isr %v", p.leader, p.epoch, p.isr)
}

func (r *run) meta(topic string) partition {
	r.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = false
	resp := r.do(0, req).(*kmsg.MetadataResponse)
	var out partition
	for _, b := range resp.Brokers {
		out.brokers = append(out.brokers, b.NodeID)
	}
	slices.Sort(out.brokers)
	if len(resp.Topics) != 1 {
		r.Fatalf("metadata for %s: %d topics", topic, len(resp.Topics))
	}
	t := resp.Topics[0]
	out.code = t.ErrorCode
	for _, p := range t.Partitions {
		if p.Partition == 0 {
			out.leader, out.epoch, out.replicas, out.isr, out.offline = p.Leader, p.LeaderEpoch, p.Replicas, p.ISR, p.OfflineReplicas
			slices.Sort(out.isr)
		}
	}
	return out
}

// waitISR waits until partition 0's ISR is want (sorted) and it has a leader
// (unless want is empty).
func (r *run) waitISR(topic string, want ...int32) partition {
	r.Helper()
	var p partition
	r.waitFor(fmt.Sprintf("ISR %v of %s", want, topic), func() bool {
		p = r.meta(topic)
		return slices.Equal(p.isr, want) && p.leader >= 0
	})
	return p
}

func (r *run) waitLeader(topic string, cond func(int32) bool) partition {
	r.Helper()
	var p partition
	r.waitFor("a leader change of "+topic, func() bool {
		p = r.meta(topic)
		return cond(p.leader)
	})
	return p
}

// create makes a one-partition topic on replicas 1,2,3 (1 leads) with
// configs and waits until every broker knows its leader.
func (r *run) create(topic string, configs map[string]string) {
	r.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Replicas = []int32{1, 2, 3}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp := r.do(1, req).(*kmsg.CreateTopicsResponse)
	if c := resp.Topics[0].ErrorCode; c != 0 {
		r.Fatalf("create %s: %s", topic, errName(c))
	}
	for id := int32(1); id <= 3; id++ {
		r.waitFor("broker knows "+topic, func() bool {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(12)
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp := r.do(id, req).(*kmsg.MetadataResponse)
			return resp.Topics[0].ErrorCode == 0 && len(resp.Topics[0].Partitions) == 1 && resp.Topics[0].Partitions[0].Leader == 1
		})
	}
	r.waitISR(topic, 1, 2, 3)
}

// batch builds one v2 batch of values, optionally idempotent.
func batch(r *run, pid int64, epoch int16, seq int32, values []string) []byte {
	r.Helper()
	recs := make([]protocol.Record, len(values))
	for i, v := range values {
		recs[i] = protocol.Record{Value: []byte(v)}
	}
	b, err := protocol.BuildBatch(protocol.BatchHeader{
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
		BaseTimestamp: time.Now().UnixMilli(),
	}, protocol.CodecNone, recs)
	if err != nil {
		r.Fatal(err)
	}
	return b
}

// produced is what a Produce response says for partition 0.
type produced struct {
	code int16
	base int64
}

func (p produced) String() string {
	if p.code != 0 {
		return errName(p.code)
	}
	return "ok@" + strconv.FormatInt(p.base, 10)
}

// produceTo sends one batch to broker id (Produce v11) and returns the answer.
func (r *run) produceTo(id int32, topic string, acks int16, b []byte) produced {
	r.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(11)
	req.Acks, req.TimeoutMillis = acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = b
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := r.do(id, req)
	if resp == nil {
		return produced{base: -1}
	}
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return produced{p.ErrorCode, p.BaseOffset}
}

// produceLeader sends one batch to the partition's leader, retrying (as
// every client does) while a new leader has yet to take over: Kafka's
// Metadata can name a leader a moment before it acts as one, and keeps
// naming a crashed one until its broker session times out.
func (r *run) produceLeader(topic string, acks int16, b []byte) produced {
	r.Helper()
	var res produced
	r.waitFor("a leader that takes the produce", func() bool {
		l := r.meta(topic).leader
		if l > 0 && r.down[l] {
			return false // Kafka names a crashed leader until its broker session times out
		}
		res = r.produceTo(l, topic, acks, b)
		return res.code != kerr.NotLeaderForPartition.Code && res.code != kerr.LeaderNotAvailable.Code
	})
	return res
}

// produce sends values to the partition's current leader.
func (r *run) produce(topic string, acks int16, values ...string) produced {
	r.Helper()
	return r.produceLeader(topic, acks, batch(r, -1, -1, -1, values))
}

// fetched is what one Fetch answered for partition 0.
type fetched struct {
	code                int16
	hw, lso, logStart   int64
	offsets             []int64
	values              []string
	divergingEndOffset  int64
	divergingLeaderEpoc int32
	// Transactions: the first offsets of the aborted transactions a
	// read_committed fetch lists, and the control batches read
	// ("7:ABORT"), which carry no records a client sees.
	abortedFrom []int64
	markers     []string
	abortAt     []int64
}

func (f fetched) String() string {
	s := fmt.Sprintf("%s hw=%d lso=%d start=%d", errName(f.code), f.hw, f.lso, f.logStart)
	if len(f.offsets) > 0 {
		s += " records " + spans(f.offsets, f.values)
	} else {
		s += " no records"
	}
	return s
}

// fetch reads from broker id at offset with isolation (0 uncommitted, 1
// committed), without waiting.
func (r *run) fetch(id int32, topic string, offset int64, isolation int8) fetched {
	r.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, 1<<20
	req.IsolationLevel, req.SessionEpoch = isolation, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = offset, 1<<20, -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := r.do(id, req).(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		r.Fatalf("fetch: %s, %d topics", errName(resp.ErrorCode), len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	out := fetched{code: p.ErrorCode, hw: p.HighWatermark, lso: p.LastStableOffset, logStart: p.LogStartOffset}
	for _, a := range p.AbortedTransactions {
		out.abortedFrom = append(out.abortedFrom, a.FirstOffset)
	}
	rest := p.RecordBatches
	for len(rest) > 0 {
		var b []byte
		var err error
		if b, rest, err = protocol.NextBatch(rest); err != nil {
			break // a partial batch at the end
		}
		h, err := protocol.ParseBatchHeader(b)
		if err != nil {
			r.Fatal(err)
		}
		recs, err := protocol.Records(b)
		if err != nil {
			r.Fatal(err)
		}
		if h.IsControl() {
			for _, rec := range recs {
				out.addMarker(h.BaseOffset+int64(rec.OffsetDelta), rec.Key)
			}
			continue
		}
		for _, rec := range recs {
			if o := h.BaseOffset + int64(rec.OffsetDelta); o >= offset {
				out.offsets = append(out.offsets, o)
				out.values = append(out.values, string(rec.Value))
			}
		}
	}
	return out
}

// readAll reads partition 0 of topic from broker id, from offset 0 to the HW.
func (r *run) readAll(id int32, topic string) string {
	r.Helper()
	var offsets []int64
	var values []string
	for next := int64(0); ; {
		f := r.fetch(id, topic, next, 0)
		if f.code != 0 {
			return fmt.Sprintf("%s at %d", errName(f.code), next)
		}
		if len(f.offsets) == 0 {
			break
		}
		offsets, values = append(offsets, f.offsets...), append(values, f.values...)
		next = f.offsets[len(f.offsets)-1] + 1
	}
	return spans(offsets, values)
}

// spans writes offsets and values compactly: "0-4:a0-a4 5-7:b0-b2".
func spans(offsets []int64, values []string) string {
	var parts []string
	for i := 0; i < len(offsets); {
		j := i
		for j+1 < len(offsets) && offsets[j+1] == offsets[j]+1 && sameRun(values[j], values[j+1]) {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprintf("%d:%s", offsets[i], values[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d:%s-%s", offsets[i], offsets[j], values[i], values[j]))
		}
		i = j + 1
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}

// sameRun says b follows a: same prefix letter, next number.
func sameRun(a, b string) bool {
	if len(a) < 2 || len(b) < 2 || a[0] != b[0] {
		return false
	}
	x, err1 := strconv.Atoi(a[1:])
	y, err2 := strconv.Atoi(b[1:])
	return err1 == nil && err2 == nil && y == x+1
}

// vals is prefix+i for i in [from, to).
func vals(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

// listOffset asks broker id for timestamp's offset (-1 latest, -2 earliest).
func (r *run) listOffset(id int32, topic string, ts int64, isolation int8) string {
	r.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(7)
	req.ReplicaID, req.IsolationLevel = -1, isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.CurrentLeaderEpoch = ts, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := r.do(id, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return errName(p.ErrorCode)
	}
	return strconv.FormatInt(p.Offset, 10)
}

// offsets is the earliest, latest (HW) and read_committed latest (LSO)
// offsets from the leader.
func (r *run) offsets(topic string) string {
	r.Helper()
	l := r.meta(topic).leader
	return fmt.Sprintf("start=%s hw=%s lso=%s", r.listOffset(l, topic, -2, 0), r.listOffset(l, topic, -1, 0), r.listOffset(l, topic, -1, 1))
}

// endOffsetFor is OffsetForLeaderEpoch for epoch, asked of broker id.
func (r *run) endOffsetFor(id int32, topic string, epoch int32) string {
	r.Helper()
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(4)
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.CurrentLeaderEpoch, rp.LeaderEpoch = -1, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := r.do(id, req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return errName(p.ErrorCode)
	}
	return fmt.Sprintf("epoch %d ends at %d", p.LeaderEpoch, p.EndOffset)
}

// elect runs ElectLeaders (0 preferred, 1 unclean) for partition 0 and
// returns its error name.
func (r *run) elect(topic string, typ int8) string {
	r.Helper()
	req := kmsg.NewPtrElectLeadersRequest()
	req.SetVersion(2)
	req.ElectionType, req.TimeoutMillis = typ, 30000
	rt := kmsg.NewElectLeadersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp := r.do(0, req).(*kmsg.ElectLeadersResponse)
	if resp.ErrorCode != 0 {
		return errName(resp.ErrorCode)
	}
	return errName(resp.Topics[0].Partitions[0].ErrorCode)
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return strconv.Itoa(int(code))
}

// deleteRecords deletes partition 0 of topic up to offset and returns the
// error name or the new low watermark.
func (r *run) deleteRecords(topic string, offset int64) string {
	r.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.SetVersion(2)
	req.TimeoutMillis = 30000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	p := r.do(r.meta(topic).leader, req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return errName(p.ErrorCode)
	}
	return fmt.Sprintf("low watermark %d", p.LowWatermark)
}

// addMarker records a control record at offset o: its key is a version and
// a type, 0 for an abort and 1 for a commit.
func (f *fetched) addMarker(o int64, key []byte) {
	typ := "CONTROL"
	if len(key) >= 4 {
		switch int16(key[2])<<8 | int16(key[3]) {
		case 0:
			typ = "ABORT"
			f.abortAt = append(f.abortAt, o)
		case 1:
			typ = "COMMIT"
		}
	}
	f.markers = append(f.markers, fmt.Sprintf("%d:%s", o, typ))
}
