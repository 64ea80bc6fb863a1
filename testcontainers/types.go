package fakekafka

// The control API's JSON answers are package api's types, the ones the
// server encodes: one definition each, so they cannot drift apart.

import "github.com/fakekafka/fakekafka/api"

type (
	// ClusterState is GET /v1/cluster.
	ClusterState = api.ClusterState
	// BrokerState is one broker; Address is its advertised address on the
	// first listener (EXTERNAL).
	BrokerState = api.BrokerState
	// TopicState is one topic and its partitions in index order.
	TopicState = api.TopicState
	// PartitionState is one partition: leader (-1 when leaderless), epoch,
	// ISR, the leader's HW and every replica in assignment order.
	PartitionState = api.PartitionState
	// ReplicaState is one broker's copy of a partition.
	ReplicaState = api.ReplicaState
	// FollowerView is the leader's view of one follower.
	FollowerView = api.FollowerView
	// FaultState is an injected fault rule and how often it fired.
	FaultState = api.FaultState
	// GroupState is one consumer group.
	GroupState = api.GroupState
	// GroupMemberState is one group member.
	GroupMemberState = api.GroupMemberState
	// GroupOffsetState is one committed offset and the partition's lag.
	GroupOffsetState = api.GroupOffsetState
	// ListenerState is one listener and, per broker, its bound and
	// advertised addresses.
	ListenerState = api.ListenerState
	// ListenerBrokerState is one broker's end of a listener.
	ListenerBrokerState = api.ListenerBrokerState
)
