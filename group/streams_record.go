package group

// A streams group's state as written to __consumer_offsets after every
// change (JSON; Kafka writes it as its StreamsGroup* records), so a new
// coordinator carries on with the same topology, epochs and tasks after a
// failover.

import (
	"encoding/json"
	"time"
)

// StreamsGroupRecord is a streams group's record.
type StreamsGroupRecord struct {
	Epoch           int32                `json:"epoch"`
	AssignmentEpoch int32                `json:"assignment_epoch"`
	EndpointEpoch   int32                `json:"endpoint_epoch"`
	Shutdown        bool                 `json:"shutdown,omitempty"`
	DelayPending    bool                 `json:"delay_pending,omitempty"`
	Topology        *Topology            `json:"topology,omitempty"`
	Members         []StreamsMemberState `json:"members"`
}

// StreamsMemberState is one member in a StreamsGroupRecord.
type StreamsMemberState struct {
	ID               string            `json:"id"`
	ClientID         string            `json:"client_id"`
	ClientHost       string            `json:"client_host"`
	InstanceID       *string           `json:"instance_id,omitempty"`
	RackID           *string           `json:"rack_id,omitempty"`
	ProcessID        string            `json:"process_id"`
	Endpoint         *Endpoint         `json:"endpoint,omitempty"`
	ClientTags       map[string]string `json:"client_tags,omitempty"`
	TopologyEpoch    int32             `json:"topology_epoch"`
	RebalanceTimeout int64             `json:"rebalance_timeout_ms"`
	Epoch            int32             `json:"epoch"`
	PreviousEpoch    int32             `json:"previous_epoch"`
	State            string            `json:"state"`
	Assigned         TaskSet           `json:"assigned"`
	Revoking         TaskSet           `json:"revoking"`
	Target           TaskSet           `json:"target"`
}

func (t *Topology) record() []byte {
	b, _ := json.Marshal(t)
	return b
}

// Record is the group's state as its record holds it.
func (sg *StreamsGroup) Record() StreamsGroupRecord {
	r := StreamsGroupRecord{Epoch: sg.Epoch, AssignmentEpoch: sg.AssignmentEpoch, EndpointEpoch: sg.EndpointEpoch,
		Shutdown: sg.Shutdown, DelayPending: sg.DelayPending, Topology: sg.Topology, Members: []StreamsMemberState{}}
	for _, m := range sg.SortedMembers() {
		r.Members = append(r.Members, StreamsMemberState{
			ID: m.ID, ClientID: m.ClientID, ClientHost: m.ClientHost, InstanceID: m.InstanceID, RackID: m.RackID,
			ProcessID: m.ProcessID, Endpoint: m.Endpoint, ClientTags: m.ClientTags, TopologyEpoch: m.TopologyEpoch,
			RebalanceTimeout: m.RebalanceTimeout.Milliseconds(), Epoch: m.Epoch, PreviousEpoch: m.PreviousEpoch, State: m.State,
			Assigned: m.Assigned, Revoking: m.Revoking, Target: sg.Target[m.ID],
		})
	}
	return r
}

// RestoreStreamsGroup rebuilds a group from its record, as a new
// coordinator does: the topology is validated again at the next
// heartbeat, members' session timers are the coordinator's to arm, and
// the tasks each was last sent count as sent.
func RestoreStreamsGroup(r StreamsGroupRecord) *StreamsGroup {
	sg := NewStreamsGroup()
	sg.Epoch, sg.AssignmentEpoch, sg.EndpointEpoch, sg.Shutdown, sg.Topology = r.Epoch, r.AssignmentEpoch, r.EndpointEpoch, r.Shutdown, r.Topology
	sg.DelayPending = r.DelayPending // the delay's timer is gone with the old coordinator: it ends at once
	for _, ms := range r.Members {
		m := &StreamsMember{
			ID: ms.ID, ClientID: ms.ClientID, ClientHost: ms.ClientHost, InstanceID: ms.InstanceID, RackID: ms.RackID,
			ProcessID: ms.ProcessID, Endpoint: ms.Endpoint, ClientTags: ms.ClientTags, TopologyEpoch: ms.TopologyEpoch,
			RebalanceTimeout: time.Duration(ms.RebalanceTimeout) * time.Millisecond, Epoch: ms.Epoch, PreviousEpoch: ms.PreviousEpoch,
			State: ms.State, Assigned: ms.Assigned.Clone(), Revoking: ms.Revoking.Clone(),
		}
		sent := m.Assigned.Clone()
		m.Sent = &sent
		sg.Members[m.ID] = m
		sg.Target[m.ID] = ms.Target.Clone()
	}
	return sg
}
