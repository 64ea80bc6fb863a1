package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
)

// A partition's log on disk (--data-dir): one file, DIR/logs/TOPIC-N/log,
// mirroring the leader's log. New batches are appended as they come, before
// the request that wrote them is answered, so a killed process loses no
// acknowledged record (the OS has the bytes; fsync follows the flush
// settings and the HW checkpoints). Retention, compaction, truncation and
// leader changes rewrite the file whole: write a temporary file, fsync,
// rename over the old one.
//
// Format of our own: a sequence of entries
//
//	length uint32 | crc32c(payload) uint32 | payload
//
// where payload is 'S' + log start offset int64, or 'B' + delete horizon
// int64 + one v2 record batch. At load every entry's checksum and every
// batch's own CRC are checked; the first torn or corrupt entry and
// everything after it are cut, as Kafka's recovery cuts a log past its
// recovery point.

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	entryStart = 'S'
	entryBatch = 'B'
	entryHead  = 8 // length + crc
)

// diskLog is the persisted copy of one partition's leader log.
type diskLog struct {
	dir string
	f   *os.File
	// What the file holds: the leader and the log's rewrite generation it
	// was written from, and the offset after its last batch.
	leader   int32
	rewrites uint64
	start    int64
	end      int64
	last     *replication.Batch
	buf      []byte
	dirty    bool // written since the last fsync
}

func logDirName(topic string, partition int32) string { return fmt.Sprintf("%s-%d", topic, partition) }

func appendEntry(dst []byte, kind byte, n int64, raw []byte) []byte {
	payload := 1 + 8 + len(raw)
	dst = binary.BigEndian.AppendUint32(dst, uint32(payload))
	crcAt := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	body := len(dst)
	dst = append(dst, kind)
	dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	dst = append(dst, raw...)
	binary.BigEndian.PutUint32(dst[crcAt:], crc32.Checksum(dst[body:], crcTable))
	return dst
}

// sync brings the file up to date with log l of leader: new batches are
// appended; anything else (another leader, a truncation, retention,
// compaction, DeleteRecords) rewrites the file. Callers hold the
// partition's lock.
func (d *diskLog) sync(leader int32, l *replication.Log) error {
	if d.f != nil && l.StartOffset() == d.start && l.EndOffset() >= d.end && d.extends(leader, l) {
		d.leader, d.rewrites = leader, l.Rewrites()
		if l.EndOffset() == d.end {
			return nil
		}
		d.buf = d.buf[:0]
		for off := d.end; off < l.EndOffset(); {
			bs := l.Read(off, l.EndOffset(), 1<<20)
			if len(bs) == 0 {
				break
			}
			for _, b := range bs {
				d.buf = appendEntry(d.buf, entryBatch, b.DeleteHorizon, b.Raw)
				off = b.EndOffset()
				d.last = b
			}
		}
		if _, err := d.f.Write(d.buf); err != nil {
			return err
		}
		d.end, d.dirty = l.EndOffset(), true
		return nil
	}
	return d.rewrite(leader, l)
}

// extends reports whether l only grew since the file was written: the same
// log with no rewrite since, or after a leader change a log that holds the
// file's last batch at its offset (the replicas share batches, so a clean
// failover costs no rewrite).
func (d *diskLog) extends(leader int32, l *replication.Log) bool {
	if leader == d.leader {
		return l.Rewrites() == d.rewrites
	}
	if d.last == nil {
		return l.EndOffset() == d.end && l.Size() == 0
	}
	return l.BatchAt(d.last.BaseOffset) == d.last
}

// rewrite writes the whole log to a new file and renames it into place.
func (d *diskLog) rewrite(leader int32, l *replication.Log) error {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(d.dir, "log.tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var buf []byte
	buf = appendEntry(buf[:0], entryStart, l.StartOffset(), nil)
	w.Write(buf)
	var last *replication.Batch
	for _, b := range l.Batches() {
		buf = appendEntry(buf[:0], entryBatch, b.DeleteHorizon, b.Raw)
		w.Write(buf)
		last = b
	}
	if err := errors.Join(w.Flush(), f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(d.dir, "log")); err != nil {
		return err
	}
	syncDir(d.dir)
	if d.f != nil {
		d.f.Close()
	}
	if d.f, err = os.OpenFile(filepath.Join(d.dir, "log"), os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return err
	}
	d.leader, d.rewrites, d.start, d.end, d.last, d.dirty = leader, l.Rewrites(), l.StartOffset(), l.EndOffset(), last, false
	return nil
}

// flush fsyncs what was appended since the last flush.
func (d *diskLog) flush() error {
	if d.f == nil || !d.dirty {
		return nil
	}
	d.dirty = false
	return d.f.Sync()
}

func (d *diskLog) close() error {
	if d.f == nil {
		return nil
	}
	err := errors.Join(d.flush(), d.f.Close())
	d.f = nil
	return err
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// loadLog reads a partition's log file: its log start and batches. A torn
// or corrupt tail is cut from the file, and how many bytes went is
// returned. A missing file is an empty log.
func loadLog(dir string) (start int64, batches []*replication.Batch, cut int64, err error) {
	path := filepath.Join(dir, "log")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, 0, nil
	}
	if err != nil {
		return 0, nil, 0, err
	}
	good := 0
	for pos := 0; pos < len(data); {
		b, kind, n, size, ok := readEntry(data[pos:])
		if !ok {
			break
		}
		switch kind {
		case entryStart:
			start = n
		case entryBatch:
			b.DeleteHorizon = n
			batches = append(batches, b)
		}
		pos += size
		good = pos
	}
	if good < len(data) {
		cut = int64(len(data) - good)
		if err := os.Truncate(path, int64(good)); err != nil {
			return 0, nil, 0, err
		}
	}
	return start, batches, cut, nil
}

// readEntry decodes the entry at the front of data; ok is false for a
// short, mis-checksummed or otherwise unreadable entry.
func readEntry(data []byte) (b *replication.Batch, kind byte, n int64, size int, ok bool) {
	if len(data) < entryHead {
		return nil, 0, 0, 0, false
	}
	length := int(binary.BigEndian.Uint32(data))
	if length < 9 || len(data)-entryHead < length {
		return nil, 0, 0, 0, false
	}
	payload := data[entryHead : entryHead+length]
	if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(data[4:]) {
		return nil, 0, 0, 0, false
	}
	kind, n = payload[0], int64(binary.BigEndian.Uint64(payload[1:]))
	size = entryHead + length
	switch kind {
	case entryStart:
		return nil, kind, n, size, true
	case entryBatch:
		b, err := batchFromDisk(payload[9:])
		if err != nil {
			return nil, 0, 0, 0, false
		}
		return b, kind, n, size, true
	}
	return nil, 0, 0, 0, false
}

// batchFromDisk rebuilds a stored batch's fields from its bytes, checking
// the batch's own CRC.
func batchFromDisk(raw []byte) (*replication.Batch, error) {
	raw = append([]byte(nil), raw...) // not aliasing the file's buffer
	h, err := protocol.ParseBatchHeader(raw)
	if err != nil {
		return nil, err
	}
	if h.Size() != len(raw) {
		return nil, io.ErrUnexpectedEOF
	}
	if err := protocol.VerifyCRC(raw); err != nil {
		return nil, err
	}
	b := &replication.Batch{
		Raw: raw, BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), Epoch: h.PartitionLeaderEpoch,
		MaxTimestamp: h.MaxTimestamp, ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch,
		BaseSequence: h.BaseSequence, NumRecords: h.NumRecords, Transactional: h.IsTransactional(), Control: h.IsControl(),
	}
	if b.Control {
		recs, err := protocol.Records(raw)
		if err != nil || len(recs) == 0 || len(recs[0].Key) < 4 || len(recs[0].Value) < 6 {
			return nil, fmt.Errorf("unreadable control batch at %d", b.BaseOffset)
		}
		b.Commit = binary.BigEndian.Uint16(recs[0].Key[2:]) == 1
		b.CoordinatorEpoch = int32(binary.BigEndian.Uint32(recs[0].Value[2:]))
	}
	return b, nil
}
