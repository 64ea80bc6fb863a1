package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTopologyRequests: UnregisterBroker, UnregisterController,
// AddRaftVoter and RemoveRaftVoter against the fixed topology (3 brokers,
// combined-mode static quorum led by the lowest running broker), and
// StreamsGroupTopologyDescriptionUpdate without a description plugin.
func TestTopologyRequests(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 3})
	cl := newClient(t, c)
	ctx := testContext(t)

	unregisterBroker := func(id int32) *kmsg.UnregisterBrokerResponse {
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = id
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := unregisterBroker(2); r.ErrorCode != 0 || strPtr(r.ErrorMessage) != "" {
		t.Errorf("UnregisterBroker 2: %+v, want no error and an empty message", r)
	}
	if r := unregisterBroker(7); r.ErrorCode != kerr.BrokerIDNotRegistered.Code || strPtr(r.ErrorMessage) != "Broker ID 7 is not currently registered" {
		t.Errorf("UnregisterBroker 7: %+v", r)
	}
	// The broker stays: it still leads and serves.
	if err := c.CreateTopic("after", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(c.State().Brokers); n != 3 {
		t.Errorf("%d brokers after UnregisterBroker, want 3", n)
	}

	unregisterController := func(id int32) *kmsg.UnregisterControllerResponse {
		req := kmsg.NewPtrUnregisterControllerRequest()
		req.ControllerID = id
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := unregisterController(1); r.ErrorCode != kerr.InvalidRequest.Code ||
		strPtr(r.ErrorMessage) != "Controller cannot unregister itself while it is active." {
		t.Errorf("UnregisterController of the active controller: %+v", r)
	}
	if r := unregisterController(3); r.ErrorCode != 0 {
		t.Errorf("UnregisterController 3 (a standby): %+v", r)
	}
	if r := unregisterController(5); r.ErrorCode != kerr.ControllerIDNotRegistered.Code ||
		strPtr(r.ErrorMessage) != "Controller ID 5 is not currently registered." {
		t.Errorf("UnregisterController 5: %+v", r)
	}
	// With broker 1 down, broker 2 is the active controller.
	if err := c.StopBroker(1, StopCrash); err != nil {
		t.Fatal(err)
	}
	cl2 := newClient(t, c)
	req := kmsg.NewPtrUnregisterControllerRequest()
	req.ControllerID = 2
	if r, err := req.RequestWith(ctx, cl2); err != nil || r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("UnregisterController 2 while it leads: %v %+v", err, r)
	}
	if err := c.StartBroker(1); err != nil {
		t.Fatal(err)
	}

	cid := c.cfg.ClusterID
	wrong := "other"
	for _, tc := range []struct {
		name    string
		cluster *string
		dir     [16]byte
		ls      []kmsg.AddRaftVoterRequestListener
		code    int16
		msg     string
	}{
		{"wrong cluster", &wrong, [16]byte{1}, nil, kerr.InconsistentClusterID.Code, `The given id "other" doesn't match the cluster id "fakekafka"`},
		{"no directory id", &cid, [16]byte{}, nil, kerr.InvalidRequest.Code, "Add voter request didn't include a valid voter"},
		{"no controller endpoint", nil, [16]byte{1}, nil, kerr.InvalidRequest.Code,
			"Add voter request didn't include the endpoint (Endpoints(endpoints={})) for the default listener ListenerName(CONTROLLER)"},
		{"static quorum", &cid, [16]byte{1}, []kmsg.AddRaftVoterRequestListener{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9999}},
			kerr.UnsupportedVersion.Code, "Cluster doesn't support adding voter because the kraft.version feature is 0"},
	} {
		req := kmsg.NewPtrAddRaftVoterRequest()
		req.ClusterID, req.VoterID, req.VoterDirectoryID, req.Listeners, req.TimeoutMillis = tc.cluster, 4, tc.dir, tc.ls, 1000
		r, err := req.RequestWith(ctx, cl)
		if err != nil || r.ErrorCode != tc.code || strPtr(r.ErrorMessage) != tc.msg {
			t.Errorf("AddRaftVoter, %s: %v %+v (%s), want %d %q", tc.name, err, r, strPtr(r.ErrorMessage), tc.code, tc.msg)
		}
	}
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	rm.ClusterID, rm.VoterID, rm.VoterDirectoryID = &cid, 1, [16]byte{1}
	if r, err := rm.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.UnsupportedVersion.Code ||
		strPtr(r.ErrorMessage) != "Cluster doesn't support removing voter because the kraft.version feature is 0" {
		t.Errorf("RemoveRaftVoter: %v %+v", err, r)
	}
	rm.VoterDirectoryID = [16]byte{}
	if r, err := rm.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("RemoveRaftVoter without a directory id: %v %+v", err, r)
	}

	// Any broker answers, for any group, before a coordinator is asked.
	for _, g := range []string{"g", ""} {
		up := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		up.Group, up.MemberID = g, "m"
		// kgo's version table does not list key 93 yet: sent straight to a broker.
		raw, err := cl.Broker(2).Request(ctx, up)
		if err != nil {
			t.Fatal(err)
		}
		r := raw.(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
		if r.ErrorCode != kerr.UnsupportedVersion.Code ||
			strPtr(r.ErrorMessage) != "The broker has no streams group topology description plugin configured." {
			t.Errorf("StreamsGroupTopologyDescriptionUpdate %q: %v %+v", g, err, r)
		}
	}
}
