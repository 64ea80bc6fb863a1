package server

import (
	"net"
	"testing"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestNoErrorMessages: where Kafka answers success with an empty message
// rather than null (or "NONE" in FindCoordinator v1-v3), so does fakekafka;
// versions without the field carry none.
func TestNoErrorMessages(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 1})
	if err := c.CreateTopic("t", 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	// Raw requests: a client library picks its own version.
	do := func(v int16, req kmsg.Request) kmsg.Response {
		t.Helper()
		nc, err := net.Dial("tcp", c.Bootstrap()[0])
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		req.SetVersion(v)
		if _, err := nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
			t.Fatal(err)
		}
		f, err := protocol.ReadFrame(nc, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		resp := req.ResponseKind()
		resp.SetVersion(v)
		body := f[4:] // the correlation id
		if resp.IsFlexible() {
			body = body[1:] // an empty tag buffer
		}
		if err := resp.ReadFrom(body); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	str := func(s *string) string {
		if s == nil {
			return "<null>"
		}
		return `"` + *s + `"`
	}
	check := func(what string, got *string, want string) {
		t.Helper()
		if str(got) != want {
			t.Errorf("%s: message %s, want %s", what, str(got), want)
		}
	}

	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"}}
	check("DescribeConfigs", do(4, dc).(*kmsg.DescribeConfigsResponse).Resources[0].ErrorMessage, `""`)

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = "g", []string{"g"}
	check("FindCoordinator v3", do(3, fc).(*kmsg.FindCoordinatorResponse).ErrorMessage, `"NONE"`)
	check("FindCoordinator v4", do(4, fc).(*kmsg.FindCoordinatorResponse).Coordinators[0].ErrorMessage, `""`)

	check("DescribeClientQuotas", do(1, kmsg.NewPtrDescribeClientQuotasRequest()).(*kmsg.DescribeClientQuotasResponse).ErrorMessage, `""`)
	check("DescribeUserScramCredentials", do(0, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()).(*kmsg.DescribeUserSCRAMCredentialsResponse).ErrorMessage, `""`)

	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Topics = []kmsg.DescribeQuorumRequestTopic{{Topic: "__cluster_metadata", Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}}}
	q := do(2, dq).(*kmsg.DescribeQuorumResponse)
	check("DescribeQuorum v2", q.ErrorMessage, `""`)
	check("DescribeQuorum v2 partition", q.Topics[0].Partitions[0].ErrorMessage, `""`)
	check("DescribeQuorum v1", do(1, dq).(*kmsg.DescribeQuorumResponse).ErrorMessage, "<null>")
}
