package protocol

import "github.com/twmb/franz-go/pkg/kmsg"

// APIRange is one API key and the inclusive range of versions the broker
// serves for it.
type APIRange struct{ Key, Min, Max int16 }

// Supported is the table of API keys and versions the broker serves, sorted
// by key. ApiVersions answers are derived from it, so a key belongs here only
// once its handler exists. Keep every range within kmsg's MaxVersion: the
// tests check it.
var Supported = []APIRange{
	{Key: 0, Min: 3, Max: 13}, // Produce: v3 is the first with magic v2 batches only
	{Key: 1, Min: 4, Max: 18}, // Fetch
	{Key: 2, Min: 1, Max: 11}, // ListOffsets
	{Key: 3, Min: 0, Max: 13}, // Metadata
	{Key: 8, Min: 2, Max: 10}, // OffsetCommit: v0-1 removed in 4.0 (KIP-896)
	{Key: 9, Min: 1, Max: 10}, // OffsetFetch: v0 removed in 4.0 (KIP-896)
	{Key: 10, Min: 0, Max: 6}, // FindCoordinator
	{Key: 11, Min: 0, Max: 9}, // JoinGroup
	{Key: 12, Min: 0, Max: 4}, // Heartbeat
	{Key: 13, Min: 0, Max: 5}, // LeaveGroup
	{Key: 14, Min: 0, Max: 5}, // SyncGroup
	{Key: 15, Min: 0, Max: 6}, // DescribeGroups
	{Key: 16, Min: 0, Max: 5}, // ListGroups
	{Key: 17, Min: 0, Max: 1}, // SaslHandshake
	{Key: 18, Min: 0, Max: 5}, // ApiVersions
	{Key: 19, Min: 2, Max: 7}, // CreateTopics
	{Key: 20, Min: 1, Max: 6}, // DeleteTopics
	{Key: 21, Min: 0, Max: 2}, // DeleteRecords
	{Key: 22, Min: 0, Max: 5}, // InitProducerID
	{Key: 23, Min: 2, Max: 4}, // OffsetForLeaderEpoch
	{Key: 24, Min: 0, Max: 5}, // AddPartitionsToTxn
	{Key: 25, Min: 0, Max: 4}, // AddOffsetsToTxn
	{Key: 26, Min: 0, Max: 5}, // EndTxn
	{Key: 27, Min: 1, Max: 2}, // WriteTxnMarkers: v0 removed in 4.0 (KIP-896)
	{Key: 28, Min: 0, Max: 6}, // TxnOffsetCommit
	{Key: 29, Min: 1, Max: 3}, // DescribeACLs: v0 removed in 4.0 (KIP-896)
	{Key: 30, Min: 1, Max: 3}, // CreateACLs: v0 removed in 4.0 (KIP-896)
	{Key: 31, Min: 1, Max: 3}, // DeleteACLs: v0 removed in 4.0 (KIP-896)
	{Key: 32, Min: 1, Max: 4}, // DescribeConfigs: v0 removed in 4.0 (KIP-896)
	{Key: 33, Min: 0, Max: 2}, // AlterConfigs
	{Key: 34, Min: 1, Max: 2}, // AlterReplicaLogDirs: v0 removed in 4.0 (KIP-896)
	{Key: 35, Min: 1, Max: 5}, // DescribeLogDirs: v0 removed in 4.0 (KIP-896)
	{Key: 36, Min: 0, Max: 2}, // SaslAuthenticate
	{Key: 37, Min: 0, Max: 3}, // CreatePartitions
	{Key: 38, Min: 1, Max: 3}, // CreateDelegationToken: v0 removed in 4.0 (KIP-896)
	{Key: 39, Min: 1, Max: 2}, // RenewDelegationToken
	{Key: 40, Min: 1, Max: 2}, // ExpireDelegationToken
	{Key: 41, Min: 1, Max: 3}, // DescribeDelegationToken
	{Key: 42, Min: 0, Max: 3}, // DeleteGroups
	{Key: 43, Min: 0, Max: 2}, // ElectLeaders
	{Key: 44, Min: 0, Max: 1}, // IncrementalAlterConfigs
	{Key: 45, Min: 0, Max: 1}, // AlterPartitionReassignments
	{Key: 46, Min: 0, Max: 0}, // ListPartitionReassignments
	{Key: 47, Min: 0, Max: 0}, // OffsetDelete
	{Key: 48, Min: 0, Max: 1}, // DescribeClientQuotas
	{Key: 49, Min: 0, Max: 1}, // AlterClientQuotas
	{Key: 50, Min: 0, Max: 0}, // DescribeUserScramCredentials
	{Key: 51, Min: 0, Max: 0}, // AlterUserScramCredentials
	{Key: 55, Min: 0, Max: 2}, // DescribeQuorum
	{Key: 57, Min: 0, Max: 2}, // UpdateFeatures
	{Key: 60, Min: 0, Max: 2}, // DescribeCluster
	{Key: 61, Min: 0, Max: 0}, // DescribeProducers
	{Key: 64, Min: 0, Max: 0}, // UnregisterBroker
	{Key: 65, Min: 0, Max: 0}, // DescribeTransactions
	{Key: 66, Min: 0, Max: 2}, // ListTransactions
	{Key: 68, Min: 0, Max: 1}, // ConsumerGroupHeartbeat
	{Key: 69, Min: 0, Max: 1}, // ConsumerGroupDescribe
	{Key: 74, Min: 0, Max: 1}, // ListConfigResources
	{Key: 75, Min: 0, Max: 0}, // DescribeTopicPartitions
	{Key: 76, Min: 1, Max: 1}, // ShareGroupHeartbeat: v0 was 4.0's early access, gone in 4.1
	{Key: 77, Min: 1, Max: 1}, // ShareGroupDescribe
	{Key: 78, Min: 1, Max: 2}, // ShareFetch
	{Key: 79, Min: 1, Max: 2}, // ShareAcknowledge
	{Key: 80, Min: 0, Max: 1}, // AddRaftVoter
	{Key: 81, Min: 0, Max: 0}, // RemoveRaftVoter
	{Key: 83, Min: 0, Max: 0}, // InitializeShareGroupState
	{Key: 84, Min: 0, Max: 0}, // ReadShareGroupState
	{Key: 85, Min: 0, Max: 1}, // WriteShareGroupState
	{Key: 86, Min: 0, Max: 0}, // DeleteShareGroupState
	{Key: 87, Min: 0, Max: 1}, // ReadShareGroupStateSummary
	{Key: 88, Min: 0, Max: 1}, // StreamsGroupHeartbeat
	{Key: 89, Min: 0, Max: 1}, // StreamsGroupDescribe
	{Key: 90, Min: 0, Max: 1}, // DescribeShareGroupOffsets
	{Key: 91, Min: 0, Max: 0}, // AlterShareGroupOffsets
	{Key: 92, Min: 0, Max: 0}, // DeleteShareGroupOffsets
	{Key: 93, Min: 0, Max: 0}, // StreamsGroupTopologyDescriptionUpdate
	{Key: 94, Min: 0, Max: 0}, // UnregisterController
}

// Unadvertised are API keys the broker answers but leaves out of
// ApiVersions, as Kafka does: a broker without a client-metrics receiver
// plugin hides GetTelemetrySubscriptions and PushTelemetry (KIP-714), so
// clients send no telemetry, yet answers them if a client sends them anyway.
var Unadvertised = []APIRange{
	{Key: 71, Min: 0, Max: 0}, // GetTelemetrySubscriptions
	{Key: 72, Min: 0, Max: 0}, // PushTelemetry
}

// Lookup returns the version range of key the broker serves, advertised
// or not.
func Lookup(key int16) (APIRange, bool) {
	// A linear scan: the table is short, and this stays correct while the
	// table is being edited even if it is briefly out of order.
	for _, r := range Supported {
		if r.Key == key {
			return r, true
		}
	}
	for _, r := range Unadvertised {
		if r.Key == key {
			return r, true
		}
	}
	return APIRange{}, false
}

// Name is Kafka's name for the API key, e.g. "Produce".
func (r APIRange) Name() string { return kmsg.NameForKey(r.Key) }

// ApiVersionsResponse builds the ApiVersions response body for a request of
// the given version, listing every Supported entry.
//
// A version outside the supported ApiVersions range gets a v0 response with
// UNSUPPORTED_VERSION (35) and only ApiVersions' own range, as Kafka does
// since 2.4 (KIP-511): the client retries with a version both sides know.
// With the full list instead, a client may take the v0 answer as final and
// miss what only v3+ carries (the finalized features: transaction.version).
func ApiVersionsResponse(version int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	r, ok := Lookup(apiVersionsKey)
	if !ok || version < r.Min || version > r.Max {
		resp.SetVersion(0)
		resp.ErrorCode = 35 // UNSUPPORTED_VERSION
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: r.Key, MinVersion: r.Min, MaxVersion: r.Max}}
		return resp
	}
	resp.SetVersion(version)
	resp.ApiKeys = make([]kmsg.ApiVersionsResponseApiKey, len(Supported))
	for i, r := range Supported {
		k := &resp.ApiKeys[i]
		k.ApiKey, k.MinVersion, k.MaxVersion = r.Key, r.Min, r.Max
	}
	return resp
}
