package reference

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The fields of the newest versions (Produce v13, Fetch v18, ListOffsets
// v9-11, Metadata v13, ApiVersions v5, DescribeLogDirs v5): each special
// ListOffsets timestamp on both sides of the version that introduced it,
// Produce by unknown topic id, ApiVersions v5's cluster and node check,
// and a cordoned log dir. Cases above the newest common version are left
// out.

// produceTopicIDs names topic "corpus" by its id in a Produce v13+ built
// by name (produceReq), as each cluster picked its own id; other names
// stay unknown (the zero id).
func produceTopicIDs(e *corpusEnv, req kmsg.Request) {
	pr, ok := req.(*kmsg.ProduceRequest)
	if !ok || pr.Version < 13 {
		return
	}
	for i := range pr.Topics {
		if rt := &pr.Topics[i]; rt.TopicID == [16]byte{} && rt.Topic == "corpus" {
			rt.TopicID = e.topicID
		}
	}
}

func versionCases(versions map[int16][2]int16) []corpusCase {
	newest := func(k kmsg.Key) int16 { return versions[k.Int16()][1] }
	var out []corpusCase
	add := func(k kmsg.Key, v int16, c corpusCase) {
		if vr, ok := versions[k.Int16()]; ok && v >= vr[0] && v <= vr[1] {
			out = append(out, c)
		}
	}

	// Produce v13: topics by id.
	pv := newest(kmsg.Produce)
	add(kmsg.Produce, 13, corpusCase{name: "Produce/v13-unknown-topic-id", req: func(*corpusEnv) kmsg.Request {
		req := produceReq(pv, "", 1, -1, simpleBatch("u"))
		req.Topics[0].TopicID = [16]byte{9, 9, 9}
		return req
	}})
	add(kmsg.Produce, 13, corpusCase{name: "Produce/v13-zero-topic-id", req: func(*corpusEnv) kmsg.Request {
		return produceReq(pv, "", 1, -1, simpleBatch("u"))
	}})
	add(kmsg.Produce, 13, corpusCase{name: "Produce/v13-known-and-unknown-ids", req: func(e *corpusEnv) kmsg.Request {
		req := produceReq(pv, "corpus", 1, 1, simpleBatch("k"))
		rt := kmsg.NewProduceRequestTopic()
		rt.TopicID = [16]byte{7}
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 0, simpleBatch("u")
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}})
	add(kmsg.Produce, 12, corpusCase{name: "Produce/v12-by-name", req: func(*corpusEnv) kmsg.Request {
		return produceReq(12, "corpus", 1, -1, simpleBatch("n"))
	}})

	// Fetch v18: a consumer's HighWatermark changes nothing.
	add(kmsg.Fetch, 18, corpusCase{name: "Fetch/v18-high-watermark", req: func(e *corpusEnv) kmsg.Request {
		req := fetchReq(18, e, "corpus", 0, 0)
		// The first batch only (KIP-74): later ones carry each cluster's
		// own clock.
		req.Topics[0].Partitions[0].PartitionMaxBytes = 1
		req.Topics[0].Partitions[0].HighWatermark = 5
		return req
	}})

	// ListOffsets: every special timestamp below and at its first version.
	for _, s := range []struct {
		name string
		ts   int64
		from int16
	}{{"max-timestamp", -3, 7}, {"earliest-local", -4, 8}, {"latest-tiered", -5, 9}, {"earliest-pending-upload", -6, 11}} {
		for _, v := range []int16{s.from - 1, s.from} {
			add(kmsg.ListOffsets, v, corpusCase{name: fmt.Sprintf("ListOffsets/v%d-%s", v, s.name), after: ownClock, req: func(*corpusEnv) kmsg.Request {
				return listOffsetsReq(v, "corpus", 0, s.ts)
			}})
		}
	}
	lv := newest(kmsg.ListOffsets)
	for _, ts := range []int64{-7, -100} {
		add(kmsg.ListOffsets, lv, corpusCase{name: fmt.Sprintf("ListOffsets/undefined-timestamp%d", ts), req: func(*corpusEnv) kmsg.Request {
			return listOffsetsReq(lv, "corpus", 0, ts)
		}})
	}
	add(kmsg.ListOffsets, 10, corpusCase{name: "ListOffsets/v10-unsupported-on-unknown-partition", req: func(*corpusEnv) kmsg.Request {
		return listOffsetsReq(10, "corpus", 9, -6)
	}})
	add(kmsg.ListOffsets, 11, corpusCase{name: "ListOffsets/v11-pending-upload-unknown-partition", req: func(*corpusEnv) kmsg.Request {
		return listOffsetsReq(11, "corpus", 9, -6)
	}})
	add(kmsg.ListOffsets, 11, corpusCase{name: "ListOffsets/v11-unsupported-on-unknown-topic", req: func(*corpusEnv) kmsg.Request {
		return listOffsetsReq(11, "no-such-topic", 0, -7)
	}})
	add(kmsg.ListOffsets, 9, corpusCase{name: "ListOffsets/v9-latest-tiered-future-epoch", req: func(*corpusEnv) kmsg.Request {
		req := listOffsetsReq(9, "corpus", 0, -5)
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = 1000
		return req
	}})
	add(kmsg.ListOffsets, 11, corpusCase{name: "ListOffsets/v11-read-committed-pending-upload", req: func(*corpusEnv) kmsg.Request {
		req := listOffsetsReq(11, "corpus", 0, -6)
		req.IsolationLevel = 1
		return req
	}})
	add(kmsg.ListOffsets, 10, corpusCase{name: "ListOffsets/v10-timeout-1ms", req: func(*corpusEnv) kmsg.Request {
		req := listOffsetsReq(10, "corpus", 0, 1700000000000)
		req.TimeoutMillis = 1
		return req
	}})
	add(kmsg.ListOffsets, 11, corpusCase{name: "ListOffsets/v11-mixed-timestamps", req: func(*corpusEnv) kmsg.Request {
		req := listOffsetsReq(11, "corpus", 0, -6)
		for p, ts := range map[int32]int64{1: -5, 2: -7} {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp = p, ts
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp)
		}
		return req
	}})

	mv := newest(kmsg.Metadata)
	// Metadata: requests Kafka fails as a whole (the top-level error code
	// from v13), around v12, the first version that looks topics up by id.
	for _, v := range []int16{11, 12, mv} {
		add(kmsg.Metadata, v, corpusCase{name: fmt.Sprintf("Metadata/v%d-null-name", v), req: func(*corpusEnv) kmsg.Request {
			req := at(v, kmsg.NewPtrMetadataRequest())
			req.Topics = []kmsg.MetadataRequestTopic{topicReq("corpus"), kmsg.NewMetadataRequestTopic()}
			return req
		}})
	}
	add(kmsg.Metadata, 11, corpusCase{name: "Metadata/v11-by-id", req: func(e *corpusEnv) kmsg.Request {
		req := at(11, kmsg.NewPtrMetadataRequest())
		t := topicReq("corpus")
		t.TopicID = e.topicID
		req.Topics = []kmsg.MetadataRequestTopic{t}
		return req
	}})
	add(kmsg.Metadata, 13, corpusCase{name: "Metadata/v13-unknown-topic-id", req: func(*corpusEnv) kmsg.Request {
		req := at(mv, kmsg.NewPtrMetadataRequest())
		t := kmsg.NewMetadataRequestTopic()
		t.TopicID = [16]byte{5, 5}
		req.Topics = []kmsg.MetadataRequestTopic{t}
		return req
	}})
	add(kmsg.Metadata, 13, corpusCase{name: "Metadata/v13-null-name-zero-id", req: func(*corpusEnv) kmsg.Request {
		req := at(mv, kmsg.NewPtrMetadataRequest())
		req.Topics = []kmsg.MetadataRequestTopic{kmsg.NewMetadataRequestTopic()}
		return req
	}})
	add(kmsg.Metadata, 13, corpusCase{name: "Metadata/v13-by-id", req: func(e *corpusEnv) kmsg.Request {
		req := at(mv, kmsg.NewPtrMetadataRequest())
		t := kmsg.NewMetadataRequestTopic()
		t.TopicID = e.topicID
		req.Topics = []kmsg.MetadataRequestTopic{t}
		return req
	}})

	// ApiVersions v5 (KIP-1242): the cluster and node the client meant.
	learnCluster := func(r *run, e *corpusEnv) {
		if e.clusterID == "" {
			m := at(12, kmsg.NewPtrMetadataRequest())
			m.Topics = []kmsg.MetadataRequestTopic{}
			if id := r.do(1, m).(*kmsg.MetadataResponse).ClusterID; id != nil {
				e.clusterID = *id
			}
		}
	}
	for _, c := range []struct {
		name    string
		cluster func(e *corpusEnv) *string
		node    int32
	}{
		{"this-cluster-this-node", func(e *corpusEnv) *string { return &e.clusterID }, 1},
		{"this-cluster-other-node", func(e *corpusEnv) *string { return &e.clusterID }, 2},
		{"this-cluster-no-node", func(e *corpusEnv) *string { return &e.clusterID }, -1},
		{"other-cluster-this-node", func(*corpusEnv) *string { return kmsg.StringPtr("someone-else") }, 1},
		{"no-cluster-other-node", func(*corpusEnv) *string { return nil }, 7},
		{"no-cluster-no-node", func(*corpusEnv) *string { return nil }, -1},
	} {
		add(kmsg.ApiVersions, 5, corpusCase{name: "ApiVersions/v5-" + c.name, settle: learnCluster, req: func(e *corpusEnv) kmsg.Request {
			req := at(5, kmsg.NewPtrApiVersionsRequest())
			req.ClientSoftwareName, req.ClientSoftwareVersion = "reference", "1"
			req.ClusterID, req.NodeID = c.cluster(e), c.node
			return req
		}})
	}
	for _, c := range []struct{ name, software, version string }{
		{"software-name-with-space", "my client", "1"},
		{"software-version-trailing-dot", "reference", "1."},
		{"software-name-empty", "", "1"},
	} {
		add(kmsg.ApiVersions, newest(kmsg.ApiVersions), corpusCase{name: "ApiVersions/" + c.name, req: func(*corpusEnv) kmsg.Request {
			req := at(newest(kmsg.ApiVersions), kmsg.NewPtrApiVersionsRequest())
			req.ClientSoftwareName, req.ClientSoftwareVersion = c.software, c.version
			return req
		}})
	}
	return out
}

// ownClock replaces a timestamp of the cluster's own clock (a transaction
// marker's, written by an earlier case) in a ListOffsets answer: each
// cluster wrote it at its own moment. The corpus's records carry fixed
// timestamps before it.
func ownClock(_ *corpusEnv, resp kmsg.Response) {
	for i := range resp.(*kmsg.ListOffsetsResponse).Topics {
		t := &resp.(*kmsg.ListOffsetsResponse).Topics[i]
		for j := range t.Partitions {
			if p := &t.Partitions[j]; p.Timestamp > 1700000000000+3_600_000 {
				p.Timestamp = 1 // "now" on that cluster
			}
		}
	}
}

// cordonCases cordon broker 1's log dirs ("*"), see DescribeLogDirs v5
// report it, and lift the cordon; last in the corpus, since a cordoned
// broker takes no new replicas in Kafka.
func cordonCases(versions map[int16][2]int16) []corpusCase {
	vr, ok := versions[kmsg.DescribeLogDirs.Int16()]
	if !ok || vr[1] < 5 {
		return nil
	}
	iv := versions[kmsg.IncrementalAlterConfigs.Int16()][1]
	cv := versions[kmsg.CreateTopics.Int16()][1]
	cordon := func(op kmsg.IncrementalAlterConfigOp, value string) func(*corpusEnv) kmsg.Request {
		return func(*corpusEnv) kmsg.Request {
			req := at(iv, kmsg.NewPtrIncrementalAlterConfigsRequest())
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Op, c.Value = "cordoned.log.dirs", op, kmsg.StringPtr(value)
			rr.Configs = append(rr.Configs, c)
			req.Resources = append(req.Resources, rr)
			return req
		}
	}
	// Kafka applies a broker config once the controller's record reaches
	// the broker: wait (bounded) until it reports what is expected.
	until := func(want bool) func(r *run, e *corpusEnv) {
		return func(r *run, e *corpusEnv) {
			r.poll(15*time.Second, func() bool {
				resp := r.do(1, describeLogDirsReq(5, "corpus", 0)).(*kmsg.DescribeLogDirsResponse)
				return len(resp.Dirs) == 1 && resp.Dirs[0].IsCordoned == want
			})
		}
	}
	return []corpusCase{
		{name: "IncrementalAlterConfigs/cordon-unknown-dir", req: cordon(kmsg.IncrementalAlterConfigOpSet, "/no/such/dir")},
		{name: "IncrementalAlterConfigs/cordon-star-and-dir", req: cordon(kmsg.IncrementalAlterConfigOpSet, "*,/no/such/dir")},
		{name: "IncrementalAlterConfigs/cordon-log-dirs", req: cordon(kmsg.IncrementalAlterConfigOpSet, "*")},
		{name: "DescribeLogDirs/v5-cordoned", settle: until(true), req: func(*corpusEnv) kmsg.Request {
			return describeLogDirsReq(5, "corpus", 0)
		}},
		{name: "DescribeLogDirs/v4-cordoned", req: func(*corpusEnv) kmsg.Request { return describeLogDirsReq(4, "corpus", 0) }},
		// Kafka's controller learns of the cordon from broker 1's next
		// heartbeat, then places no new replica there.
		{name: "CreateTopics/rf3-with-a-cordoned-broker", settle: placementWithout1(cv), req: func(*corpusEnv) kmsg.Request {
			req := createTopicReq(cv, "cordon-rf3", 1, 3, nil)
			req.ValidateOnly = true
			return req
		}},
		{name: "CreateTopics/rf2-with-a-cordoned-broker", placed: true, req: func(*corpusEnv) kmsg.Request {
			return createTopicReq(cv, "cordon-rf2", 3, 2, nil)
		}},
		{name: "Metadata/rf2-with-a-cordoned-broker", placed: true, settle: waitPartitions("cordon-rf2", 3), req: func(*corpusEnv) kmsg.Request {
			req := at(versions[kmsg.Metadata.Int16()][1], kmsg.NewPtrMetadataRequest())
			req.Topics = []kmsg.MetadataRequestTopic{topicReq("cordon-rf2")}
			return req
		}},
		{name: "IncrementalAlterConfigs/uncordon-log-dirs", req: cordon(kmsg.IncrementalAlterConfigOpDelete, "*")},
		{name: "DescribeLogDirs/v5-uncordoned", settle: until(false), req: func(*corpusEnv) kmsg.Request {
			return describeLogDirsReq(5, "corpus", 0)
		}},
	}
}

// placementWithout1 waits (bounded) until the cluster refuses a replication
// factor of 3, as it does once broker 1's cordon reaches its controller.
func placementWithout1(cv int16) func(r *run, e *corpusEnv) {
	return func(r *run, _ *corpusEnv) {
		r.poll(15*time.Second, func() bool {
			req := createTopicReq(cv, "cordon-probe", 1, 3, nil)
			req.ValidateOnly = true
			return r.do(1, req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode != 0
		})
	}
}
