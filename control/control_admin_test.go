package control

import (
	"net/http"
	"slices"
	"testing"

	"github.com/fakekafka/fakekafka/api"
	"github.com/fakekafka/fakekafka/server"
)

// TestControlReassign drives a reassignment over HTTP: pause the future
// replica ahead, reassign, see it pending in /v1/cluster and
// /v1/reassignments, cancel, and the errors.
func TestControlReassign(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{Brokers: 4})
	if err := c.CreateTopic("h", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	srv := newControlServer(t, c)
	var ps api.PartitionState
	if code := controlCall(t, srv, "POST", "/v1/partitions/h/0/replicas/4/pause", "", &ps); code != http.StatusOK {
		t.Fatalf("pause ahead: %d", code)
	}
	if code := controlCall(t, srv, "POST", "/v1/partitions/h/0/reassign", `{"replicas":[1,2,4]}`, &ps); code != http.StatusOK ||
		!slices.Equal(ps.AddingReplicas, []int32{4}) || !slices.Equal(ps.RemovingReplicas, []int32{3}) || !ps.Replicas[2].Paused {
		t.Fatalf("reassign: %d %+v", code, ps)
	}
	var list struct {
		Reassignments []api.ReassignmentState `json:"reassignments"`
	}
	if code := controlCall(t, srv, "GET", "/v1/reassignments", "", &list); code != http.StatusOK || len(list.Reassignments) != 1 ||
		!slices.Equal(list.Reassignments[0].Replicas, []int32{1, 2, 4, 3}) {
		t.Fatalf("list: %d %+v", code, list)
	}
	var cs api.ClusterState
	controlCall(t, srv, "GET", "/v1/cluster", "", &cs)
	if got := topicState(cs, "h").Partitions[0]; !slices.Equal(got.AddingReplicas, []int32{4}) {
		t.Fatalf("/v1/cluster: %+v", got)
	}
	ps = api.PartitionState{}
	if code := controlCall(t, srv, "POST", "/v1/partitions/h/0/reassign", `{"replicas":null}`, &ps); code != http.StatusOK ||
		!slices.Equal(replicaIDs(ps), []int32{1, 2, 3}) || ps.AddingReplicas != nil || slices.ContainsFunc(ps.Replicas, func(r api.ReplicaState) bool { return r.Paused }) {
		t.Fatalf("cancel: %d %+v", code, ps)
	}
	list.Reassignments = nil
	controlCall(t, srv, "GET", "/v1/reassignments", "", &list)
	if len(list.Reassignments) != 0 {
		t.Fatalf("after cancel: %+v", list)
	}
	// A pause ahead of a replica that never came is undone the same way.
	controlCall(t, srv, "POST", "/v1/partitions/h/0/replicas/4/pause", "", nil)
	if code := controlCall(t, srv, "POST", "/v1/partitions/h/0/replicas/4/resume", "", nil); code != http.StatusOK {
		t.Fatalf("resume a pause ahead: %d", code)
	}
	var ts api.TopicState
	if code := controlCall(t, srv, "POST", "/v1/topics/h/partitions", `{"count":2,"assignment":[[4,1,2]]}`, &ts); code != http.StatusOK ||
		len(ts.Partitions) != 2 || !slices.Equal(replicaIDs(ts.Partitions[1]), []int32{4, 1, 2}) {
		t.Fatalf("create partitions: %d %+v", code, ts)
	}
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/topics/h/partitions", `{"count":2}`, http.StatusBadRequest, "INVALID_PARTITIONS"},
		{"/v1/topics/h/partitions", `{"count":3,"assignment":[[1]]}`, http.StatusBadRequest, "INVALID_REPLICA_ASSIGNMENT"},
		{"/v1/topics/h/partitions", `{}`, http.StatusBadRequest, `needs "count"`},
		{"/v1/topics/nope/partitions", `{"count":3}`, http.StatusNotFound, "unknown topic"},
		{"/v1/partitions/h/0/reassign", `{"replicas":null}`, http.StatusBadRequest, "NO_REASSIGNMENT_IN_PROGRESS"},
		{"/v1/partitions/h/0/reassign", `{"replicas":[1,9]}`, http.StatusNotFound, "unknown broker 9"},
		{"/v1/partitions/h/0/reassign", `{"replicas":[]}`, http.StatusBadRequest, "empty"},
		{"/v1/partitions/h/0/reassign", `{}`, http.StatusBadRequest, `needs "replicas"`},
		{"/v1/partitions/h/0/reassign", `{"replicas":"x"}`, http.StatusBadRequest, "list of broker ids"},
		{"/v1/partitions/h/5/reassign", `{"replicas":[1]}`, http.StatusNotFound, "no partition 5"},
		{"/v1/partitions/h/0/replicas/9/pause", ``, http.StatusNotFound, "unknown broker 9"},
		{"/v1/partitions/h/0/replicas/9/resume", ``, http.StatusNotFound, "unknown broker 9"},
	} {
		controlErrorHas(t, srv, tc.path, tc.body, tc.status, tc.want)
	}
}
