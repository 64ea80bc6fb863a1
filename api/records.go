package api

// ReplicaRecords is a page of one replica's log, as served by
// GET /v1/partitions/{topic}/{partition}/replicas/{id}/records: the records
// the replica holds from Offset on (its own log, not the leader's), with
// where each stands against the partition's HW and transactions.
type ReplicaRecords struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Broker    int32  `json:"broker"`
	// The replica's own log start offset, LEO, HW and LSO.
	LogStartOffset   int64 `json:"log_start_offset"`
	LogEndOffset     int64 `json:"log_end_offset"`
	HighWatermark    int64 `json:"high_watermark"`
	LastStableOffset int64 `json:"last_stable_offset"`
	// PartitionHighWatermark is the leader's HW (-1 when leaderless):
	// consumers read below it, so records at or past it are above_hw.
	PartitionHighWatermark int64 `json:"partition_high_watermark"`
	// Records in offset order, control records (transaction markers)
	// included; at most the max asked for, whole batches apart from that.
	Records []LogRecord `json:"records"`
	// NextOffset is the offset to ask for next: past the last record
	// returned, or the LEO when the log has nothing more.
	NextOffset int64 `json:"next_offset"`
}

// LogRecord is one record of a replica's log. Key, values and header
// values are text when they are valid UTF-8, else base64 with the
// matching *_encoding set to "base64"; null stays null.
type LogRecord struct {
	Offset        int64          `json:"offset"`
	Timestamp     int64          `json:"timestamp"` // Unix ms: CreateTime, or LogAppendTime where the batch says so
	LogAppendTime bool           `json:"log_append_time,omitempty"`
	Key           *string        `json:"key"`
	KeyEncoding   string         `json:"key_encoding,omitempty"`
	Value         *string        `json:"value"`
	ValueEncoding string         `json:"value_encoding,omitempty"`
	Headers       []RecordHeader `json:"headers,omitempty"`
	// The batch: the leader epoch it was written in, its producer (-1
	// without) and this record's sequence.
	LeaderEpoch   int32 `json:"leader_epoch"`
	ProducerID    int64 `json:"producer_id"`
	ProducerEpoch int16 `json:"producer_epoch"`
	Sequence      int32 `json:"sequence"`
	Transactional bool  `json:"transactional,omitempty"`
	// Control is "COMMIT" or "ABORT" for a transaction marker, with the
	// coordinator epoch that wrote it; empty for a data record.
	Control          string `json:"control,omitempty"`
	CoordinatorEpoch int32  `json:"coordinator_epoch,omitempty"`
	// AboveHW: at or past the partition's HW, not yet visible to any
	// consumer (on a follower: past what the leader's HW covers).
	AboveHW bool `json:"above_hw,omitempty"`
	// Aborted: a data record of a transaction this replica's log aborted;
	// read_committed consumers never see it. Open: a data record of a
	// transaction still open on this replica (no marker yet).
	Aborted bool `json:"aborted,omitempty"`
	Open    bool `json:"open,omitempty"`
}

// RecordHeader is one record header; Value as LogRecord's.
type RecordHeader struct {
	Key           string  `json:"key"`
	Value         *string `json:"value"`
	ValueEncoding string  `json:"value_encoding,omitempty"`
}
