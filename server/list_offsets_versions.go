package server

// Special ListOffsets timestamps and the version each needs, as Kafka
// 4.4's ReplicaManager checks them (timestampMinSupportedVersion):
//
//	LATEST (-1), EARLIEST (-2)          v1+
//	MAX_TIMESTAMP (-3)                  v7+  (KIP-734)
//	EARLIEST_LOCAL (-4)                 v8+  (KIP-405)
//	LATEST_TIERED (-5)                  v9+  (KIP-1005)
//	EARLIEST_PENDING_UPLOAD (-6)        v11+ (KIP-1023)
//
// A special timestamp below its version, and any other negative timestamp,
// gets UNSUPPORTED_VERSION with offset and timestamp -1: after the topic's
// authorization and the duplicate check, before the partition is looked
// up (so an unknown partition asked with one gets UNSUPPORTED_VERSION too).
//
// fakekafka has no tiered storage, so its partitions answer as Kafka's do
// with remote storage off: LATEST_TIERED and EARLIEST_PENDING_UPLOAD find
// nothing (offset, timestamp and leader epoch -1, no error) once the
// leader checks pass, and EARLIEST_LOCAL is EARLIEST. v10's TimeoutMillis
// bounds Kafka's wait for a remote-storage lookup; nothing here waits.

const (
	listLatestTiered          = -5
	listEarliestPendingUpload = -6
)

// listTimestampMinVersion is the first ListOffsets version that knows each
// special timestamp.
var listTimestampMinVersion = map[int64]int16{
	listLatest:                1,
	listEarliest:              1,
	listMaxTimestamp:          7,
	listEarliestLocal:         8,
	listLatestTiered:          9,
	listEarliestPendingUpload: 11,
}

// listTimestampUnsupported reports whether a ListOffsets request of the
// given version may not ask for timestamp ts.
func listTimestampUnsupported(ts int64, version int16) bool {
	if ts >= 0 {
		return false
	}
	need, ok := listTimestampMinVersion[ts]
	return !ok || version < need
}
