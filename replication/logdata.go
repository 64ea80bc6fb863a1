package replication

import "slices"

// A replica's log and what Kafka's UnifiedLog keeps beside it (the HW, the
// recovery point, producer state) live in a logData. Most replicas of a
// test cluster's partitions are never written: an idle partition's logs
// are empty at offset 0 and the leader's epoch cache holds only epoch 0. So
// such a log points at one of two logData values shared by every idle
// replica of the process, frozen, and gets its own copy on the first
// change (own). Every write to a log's fields goes through own; reading
// goes straight through the pointer.

// logData is the state of one replica's log.
type logData struct {
	segs   []*segment
	epochs []EpochEntry // the leader epoch cache
	start  int64        // log start offset
	end    int64        // log end offset (LEO)
	hw     int64        // the replica's high watermark
	// breached is the bytes of whole segments DeleteRecords dropped below
	// the log start: Kafka deletes them at its next retention check.
	breached int64

	recoveryPoint int64 // below it the log survives a power loss
	checkpointHW  int64 // the HW a restart comes back with

	prod *producers   // nil: no producer yet
	rw   *logRewrites // nil until the log is first truncated or cleaned
}

// The frozen shared states: a log never written (a follower of a new
// partition), and one whose only change is epoch 0 starting at offset 0
// (the first leader of a new partition). Nothing may write to them.
var (
	emptyLog       = logData{}
	firstLeaderLog = logData{epochs: []EpochEntry{{Epoch: 0, StartOffset: 0}}}
)

// newLog is an empty log at offset 0.
func newLog() Log { return Log{&emptyLog} }

// shared reports whether d is one of the frozen states.
func (d *logData) shared() bool { return d == &emptyLog || d == &firstLeaderLog }

// own returns the log's data for writing, first copying a shared state
// (or making an empty one for the zero Log).
func (l *Log) own() *logData {
	switch {
	case l.logData == nil:
		l.logData = &logData{}
	case l.logData.shared():
		d := *l.logData
		d.epochs = slices.Clone(d.epochs)
		l.logData = &d
	}
	return l.logData
}

// setHW clamps to [log start, LEO], as UnifiedLog.updateHighWatermark does.
func (l *Log) setHW(hw int64) {
	if hw = min(max(hw, l.start), l.end); hw != l.hw {
		l.own().hw = hw
	}
}

// setRecoveryPoint marks everything below offset as flushed.
func (l *Log) setRecoveryPoint(offset int64) {
	if offset != l.recoveryPoint {
		l.own().recoveryPoint = offset
	}
}

// setCheckpointHW records the HW a restart reloads.
func (l *Log) setCheckpointHW(hw int64) {
	if hw != l.checkpointHW {
		l.own().checkpointHW = hw
	}
}
