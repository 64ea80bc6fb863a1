package chaos

// What the cluster records during a run, as Check reads it. Everything
// carries Seq, the cluster's event sequence number when it happened, so
// writes, reads and the cluster's decisions can be ordered against each
// other.

// TP names a partition.
type TP struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Write is one record batch a leader appended while recording was on.
type Write struct {
	TP
	// Base and End are the batch's offsets [Base, End).
	Base, End int64
	// CRC is the batch's CRC-32C: it covers everything but the offsets and
	// leader epoch, so it names the batch's contents in any replica.
	CRC           uint32
	ProducerID    int64
	ProducerEpoch int16
	Sequence      int32
	Acks          int16
	// Acked says the producer was told the write succeeded (acks=0
	// writes count as acked once appended: nobody waits for them).
	Acked bool
	Seq   uint64
}

// Read is the part of one partition one consumer fetch response served.
type Read struct {
	TP
	// From and End are the offsets served, [From, End).
	From, End int64
	// LastBase and LastCRC identify the last batch served: if it is still
	// there, so is everything before it.
	LastBase int64
	LastCRC  uint32
	// HW and LSO are what the serving replica's were when it served.
	HW, LSO       int64
	ReadCommitted bool
	Seq           uint64
}

// LogBatch is one batch of a final log.
type LogBatch struct {
	Base, End     int64
	CRC           uint32
	ProducerID    int64
	Transactional bool
	// Control and Commit describe transaction markers.
	Control, Commit bool
}

// Log is a partition's log as its leader holds it when Check runs.
type Log struct {
	Leader     int32
	Start, End int64
	Batches    []LogBatch // in offset order
}

// DecisionKind names a cluster decision Check uses to explain a loss.
type DecisionKind string

// The decisions.
const (
	DecisionElection  DecisionKind = "election"   // a new leader (Unclean says if unclean)
	DecisionPowerLoss DecisionKind = "powerloss"  // Broker lost its unflushed records
	DecisionTruncated DecisionKind = "truncation" // Broker's log end went From -> To
	DecisionAction    DecisionKind = "action"     // a chaos action ran (Detail); Seq is the last event before it
)

// Decision is one thing the cluster decided or the schedule did.
type Decision struct {
	Seq  uint64
	Kind DecisionKind
	TP
	Broker   int32
	Unclean  bool
	From, To int64
	Detail   string
}

// Commit is one group offset commit the coordinator acknowledged.
type Commit struct {
	Group string
	TP
	Offset int64
	Seq    uint64
}

// GroupTP names a group's committed offset.
type GroupTP struct {
	Group string
	TP
}

// Input is everything Check reads.
type Input struct {
	Writes    []Write
	Reads     []Read
	Logs      map[TP]Log // partitions without a leader are absent
	Decisions []Decision // in Seq order
	Commits   []Commit   // in Seq order
	Offsets   map[GroupTP]int64
	// Flushed says every acknowledged write was flushed before it was
	// acknowledged (log.flush.interval.messages=1), so power loss cannot
	// lose it.
	Flushed bool
	// LegacyHWTruncation: pre-KIP-101 truncation, which loses acks=all
	// writes by design.
	LegacyHWTruncation bool
	// Truncated says the recording hit its bound and dropped entries.
	Truncated bool
	// Share is what share partitions' leaders delivered and confirmed,
	// one ShareInput per share group.
	Share []ShareInput
}
