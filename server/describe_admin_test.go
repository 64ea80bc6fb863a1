package server

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestDescribeLogDirs: every broker reports its one log dir with the
// replicas it hosts, sized from their stored batches.
func TestDescribeLogDirs(t *testing.T) {
	c := NewTestCluster(t, Config{})
	ctx := testContext(t)
	if err := c.CreateTopic("sized", 2, 2, nil); err != nil { // [1 2] and [2 3]
		t.Fatal(err)
	}
	cl := newClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sized", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "replica 2 of partition 0 to hold the records", func() bool {
		ps, _ := c.Partition("sized", 0)
		return ps.Replicas[1].LogEndOffset == 10
	})
	adm := kadm.NewClient(cl)
	all, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{1, 2, 3} {
		dirs := all[id]
		d, ok := dirs[LogDir(id)]
		if len(dirs) != 1 || !ok || d.Err != nil {
			t.Fatalf("broker %d: dirs %+v", id, dirs)
		}
		var got []int32
		for p := range d.Topics["sized"] {
			got = append(got, p)
		}
		slices.Sort(got)
		want := map[int32][]int32{1: {0}, 2: {0, 1}, 3: {1}}[id]
		if !slices.Equal(got, want) {
			t.Errorf("broker %d hosts %v, want %v", id, got, want)
		}
		if id != 3 {
			if size := d.Topics["sized"][0].Size; size < 10*61 {
				t.Errorf("broker %d: partition 0 size %d, want the ten batches' bytes", id, size)
			}
		}
		if d.Topics["sized"][1].Size != 0 && id != 1 {
			t.Errorf("broker %d: empty partition 1 has size %d", id, d.Topics["sized"][1].Size)
		}
	}
	// Partitions asked for that the broker does not host are left out.
	one, err := adm.DescribeBrokerLogDirs(ctx, 1, kadm.TopicsSet{"sized": {1: {}}, "nope": {0: {}}})
	if err != nil || len(one[LogDir(1)].Topics) != 0 {
		t.Fatalf("broker 1, partition 1: %v %+v", err, one)
	}
}

func describeTopicPartitions(t *testing.T, cl *kgo.Client, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit, req.Cursor = limit, cursor
	for _, name := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestDescribeTopicPartitions pages through topics with the cursor and
// reports partitions as Metadata does.
func TestDescribeTopicPartitions(t *testing.T) {
	c := NewTestCluster(t, Config{})
	for name, n := range map[string]int32{"a": 3, "b": 2, "c": 1} {
		if err := c.CreateTopic(name, n, 2, nil); err != nil {
			t.Fatal(err)
		}
	}
	cl := newClient(t, c)
	type page struct {
		topics []string // topic/partition pairs "a/0"
		next   string
	}
	var pages []page
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for range 10 {
		resp := describeTopicPartitions(t, cl, 2, cursor, "c", "a", "b")
		var pg page
		for _, st := range resp.Topics {
			if st.ErrorCode != 0 || st.TopicID == ([16]byte{}) {
				t.Fatalf("topic %+v", st)
			}
			for _, sp := range st.Partitions {
				pg.topics = append(pg.topics, *st.Topic+"/"+strconv.Itoa(int(sp.Partition)))
			}
		}
		if nc := resp.NextCursor; nc != nil {
			pg.next = nc.Topic + "/" + strconv.Itoa(int(nc.Partition))
			cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: nc.Topic, Partition: nc.Partition}
		}
		pages = append(pages, pg)
		if resp.NextCursor == nil {
			break
		}
	}
	want := []page{{[]string{"a/0", "a/1"}, "a/2"}, {[]string{"a/2", "b/0"}, "b/1"}, {[]string{"b/1", "c/0"}, ""}}
	if len(pages) != len(want) {
		t.Fatalf("pages %+v, want %+v", pages, want)
	}
	for i := range want {
		if !slices.Equal(pages[i].topics, want[i].topics) || pages[i].next != want[i].next {
			t.Fatalf("page %d: %+v, want %+v", i, pages[i], want[i])
		}
	}

	// A partition whose leader is down, an unknown topic, a bad cursor.
	if err := c.StopBroker(3, StopClean); err != nil {
		t.Fatal(err)
	}
	resp := describeTopicPartitions(t, cl, 0, nil, "a", "zz", "bad/name")
	if len(resp.Topics) != 3 || resp.Topics[2].ErrorCode != kerr.UnknownTopicOrPartition.Code || resp.Topics[1].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("unknown topic, illegal name: %+v", resp.Topics)
	}
	// As Kafka, with the operations a client may do on a topic that does
	// not exist yet (all, without an authorizer).
	if ops := resp.Topics[2].AuthorizedOperations; ops != resp.Topics[0].AuthorizedOperations || ops <= 0 {
		t.Fatalf("authorized operations of an unknown topic: %d, of a known one %d", ops, resp.Topics[0].AuthorizedOperations)
	}
	sp := resp.Topics[0].Partitions[2] // a/2 on [3 1], now led by 1
	if sp.LeaderID != 1 || sp.LeaderEpoch != 1 || !slices.Equal(sp.Replicas, []int32{3, 1}) || !slices.Equal(sp.OfflineReplicas, []int32{3}) || !slices.Equal(sp.ISR, []int32{1}) {
		t.Fatalf("a/2: %+v", sp)
	}
	resp = describeTopicPartitions(t, cl, 0, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b"}, "a")
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("cursor outside the topics: %+v", resp.Topics)
	}
	resp = describeTopicPartitions(t, cl, 0, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "a", Partition: -1}, "a", "b")
	if len(resp.Topics) != 2 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code || resp.Topics[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("negative cursor partition: %+v", resp.Topics)
	}
	// Every topic, from a cursor between names.
	resp = describeTopicPartitions(t, cl, 0, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "az", Partition: 5})
	var names []string
	for _, st := range resp.Topics {
		names = append(names, *st.Topic)
	}
	if !slices.Equal(names, []string{"b", "c"}) || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("all topics from cursor az: %v", names)
	}
}

// TestAlterReplicaLogDirs: with one log dir per broker, moving a replica
// to its own dir is a no-op success, anything else Kafka's error.
func TestAlterReplicaLogDirs(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("dirs", 2, 2, nil); err != nil { // [1 2] and [2 3]
		t.Fatal(err)
	}
	adm := kadm.NewClient(newClient(t, c))
	var req kadm.AlterReplicaLogDirsReq
	req.Add(LogDir(1), kadm.TopicsSet{"dirs": {0: {}, 1: {}, 7: {}}})
	req.Add("/elsewhere", kadm.TopicsSet{"other": {0: {}}})
	rs, err := adm.AlterBrokerReplicaLogDirs(testContext(t), 1, req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	rs.Each(func(r kadm.AlterReplicaLogDirsResponse) { got[r.Topic+"/"+strconv.Itoa(int(r.Partition))] = r.Err })
	for tp, want := range map[string]error{"dirs/0": nil, "dirs/1": kerr.ReplicaNotAvailable, "dirs/7": kerr.UnknownTopicOrPartition, "other/0": kerr.UnknownTopicOrPartition} {
		if g, ok := got[tp]; !ok || g != want {
			t.Errorf("%s: %v, want %v", tp, g, want)
		}
	}
	if err := c.CreateTopic("other", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	var moved kadm.AlterReplicaLogDirsReq
	moved.Add("/elsewhere", kadm.TopicsSet{"other": {0: {}}})
	rs, err = adm.AlterBrokerReplicaLogDirs(testContext(t), 1, moved)
	if err != nil {
		t.Fatal(err)
	}
	rs.Each(func(r kadm.AlterReplicaLogDirsResponse) {
		if r.Err != kerr.LogDirNotFound {
			t.Errorf("move to another dir: %v, want LOG_DIR_NOT_FOUND", r.Err)
		}
	})
}

// TestListConfigResources lists topics and brokers by type (v1) and no
// client-metrics resources (v0).
func TestListConfigResources(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("cfg", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	v0 := kversion.Stable()
	v0.SetMaxKeyVersion(74, 0)
	clients := map[int16]*kgo.Client{0: newClient(t, c, kgo.MaxVersions(v0)), 1: newClient(t, c)}
	list := func(version int16, types ...int8) *kmsg.ListConfigResourcesResponse {
		t.Helper()
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.ResourceTypes = types
		resp, err := clients[version].Request(testContext(t), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.(*kmsg.ListConfigResourcesResponse)
	}
	names := func(r *kmsg.ListConfigResourcesResponse) []string {
		var out []string
		for _, cr := range r.ConfigResources {
			out = append(out, strconv.Itoa(int(cr.Type))+":"+cr.Name)
		}
		return out
	}
	if got := names(list(1, 2, 4)); !slices.Equal(got, []string{"2:cfg", "4:1", "4:2", "4:3"}) {
		t.Errorf("topics and brokers: %v", got)
	}
	// Kafka 4.4 answers a type it does not list with UNSUPPORTED_VERSION.
	if r := list(1, 2, 99); r.ErrorCode != kerr.UnsupportedVersion.Code || len(r.ConfigResources) != 0 {
		t.Errorf("unknown type: %+v", r)
	}
	if r := list(0); r.ErrorCode != 0 || len(r.ConfigResources) != 0 {
		t.Errorf("v0: %+v", r)
	}
}

func describeQuorum(t *testing.T, cl *kgo.Client, topic string) *kmsg.DescribeQuorumResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = topic
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestDescribeQuorum: every broker is a voter, the controller leads, and
// a new controller after a stop shows as a new leader epoch while the
// stopped voter keeps its last offsets.
func TestDescribeQuorum(t *testing.T) {
	c := NewTestCluster(t, Config{})
	cl := newClient(t, c)
	resp := describeQuorum(t, cl, "__cluster_metadata")
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Nodes) != 3 {
		t.Fatalf("response: %+v", resp)
	}
	p := resp.Topics[0].Partitions[0]
	if p.LeaderID != 1 || p.LeaderEpoch != 1 || len(p.CurrentVoters) != 3 || len(p.Observers) != 0 {
		t.Fatalf("quorum: %+v", p)
	}
	for _, v := range p.CurrentVoters {
		if v.LogEndOffset != p.HighWatermark || v.LastCaughtUpTimestamp <= 0 {
			t.Errorf("voter %+v not caught up to %d", v, p.HighWatermark)
		}
	}
	hw := p.HighWatermark

	if err := c.CreateTopic("more", 1, 1, nil); err != nil { // a metadata change
		t.Fatal(err)
	}
	if err := c.StopBroker(1, StopClean); err != nil {
		t.Fatal(err)
	}
	cl2 := newClient(t, c, kgo.SeedBrokers(c.Bootstrap()[1]))
	p = describeQuorum(t, cl2, "__cluster_metadata").Topics[0].Partitions[0]
	if p.LeaderID != 2 || p.LeaderEpoch != 2 || p.HighWatermark <= hw {
		t.Fatalf("after stopping broker 1: %+v (HW before %d)", p, hw)
	}
	if v := p.CurrentVoters[0]; v.ReplicaID != 1 || v.LogEndOffset != hw {
		t.Errorf("stopped voter %+v, want its last offset %d", v, hw)
	}
	if r := describeQuorum(t, cl2, "other"); r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].Topic != "other" ||
		len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("other topic: %+v", r)
	}
}
