package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A group request sent to a broker that does not coordinate the group is
// answered as Kafka 4.4 answers it: NOT_COORDINATOR and nothing else about
// the group (no state in DescribeGroups, no topics in OffsetFetch v8+);
// an empty group id is described like any unknown group, not refused as
// an invalid id.
func TestGroupLookupErrorsAnswerNothingElse(t *testing.T) {
	c := NewTestCluster(t, Config{})
	if err := c.CreateTopic("t", 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cl := newClient(t, c)
	coord, code := c.coordinatorOf("g")
	if code != 0 {
		t.Fatalf("coordinator of g: %v", kerr.ErrorForCode(code))
	}
	other := coord%3 + 1

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"g"}
	resp, err := cl.Broker(int(other)).Request(ctx, dg)
	if err != nil {
		t.Fatal(err)
	}
	got := resp.(*kmsg.DescribeGroupsResponse).Groups[0]
	if got.ErrorCode != kerr.NotCoordinator.Code || got.State != "" {
		t.Errorf("DescribeGroups at broker %d: %v state %q, want NOT_COORDINATOR and no state", other, kerr.ErrorForCode(got.ErrorCode), got.State)
	}

	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 9
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = "g"
	gt := kmsg.NewOffsetFetchRequestGroupTopic()
	gt.Topic, gt.Partitions = "t", []int32{0, 1}
	g.Topics = append(g.Topics, gt)
	of.Groups = append(of.Groups, g)
	resp, err = cl.Broker(int(other)).Request(ctx, of)
	if err != nil {
		t.Fatal(err)
	}
	og := resp.(*kmsg.OffsetFetchResponse).Groups[0]
	if og.ErrorCode != kerr.NotCoordinator.Code || og.Topics != nil {
		t.Errorf("OffsetFetch v9 at broker %d: %v with %d topics, want NOT_COORDINATOR and none", other, kerr.ErrorForCode(og.ErrorCode), len(og.Topics))
	}

	empty, code := c.coordinatorOf("")
	if code != 0 {
		t.Fatalf("coordinator of the empty id: %v", kerr.ErrorForCode(code))
	}
	dg = kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{""}
	resp, err = cl.Broker(int(empty)).Request(ctx, dg)
	if err != nil {
		t.Fatal(err)
	}
	// franz-go sends v6, where an unknown group is GROUP_ID_NOT_FOUND
	// (Dead); before v6 the same group is Dead with no error.
	if got := resp.(*kmsg.DescribeGroupsResponse).Groups[0]; got.ErrorCode != kerr.GroupIDNotFound.Code || got.State != "Dead" {
		t.Errorf("DescribeGroups of the empty id: %v state %q, want GROUP_ID_NOT_FOUND and Dead, as any unknown group", kerr.ErrorForCode(got.ErrorCode), got.State)
	}
}
