package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/fakekafka/fakekafka/protocol"
	"github.com/fakekafka/fakekafka/replication"
)

// A partition's log on disk (--data-dir): a directory DIR/logs/TOPIC-N
// mirroring the leader's log, with one file per segment, BASE.log (the
// base offset in 20 digits, as Kafka names them), and a file "start" with
// the log start offset. New batches are appended to the active segment's
// file as they come, before the request that wrote them is answered, so a
// killed process loses no acknowledged record (the OS has the bytes; fsync
// follows the flush settings and the HW checkpoints). Retention and
// DeleteRecords rewrite "start" (write-then-rename) and delete the files of
// whole segments below it. Truncation, compaction and a leader change to a
// log that does not extend the files rewrite the directory: a complete new
// one is written and fsynced beside it (TOPIC-N.tmp), then swapped in by
// renames, so a crash leaves either the old or the new one.
//
// Files hold entries of our own format:
//
//	length uint32 | crc32c(payload) uint32 | payload
//
// where payload is 'S' + log start offset int64, or 'B' + delete horizon
// int64 + one v2 record batch. At load every entry's checksum and every
// batch's own CRC are checked; the first torn or corrupt entry and
// everything after it (the rest of its file and the later segments) are
// cut, as Kafka's recovery cuts a log past its recovery point.

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	entryStart = 'S'
	entryBatch = 'B'
	entryHead  = 8 // length + crc
)

// Log is the persisted copy of one partition's leader log. It is not
// safe for concurrent use: its owner (the partition) serialises calls.
type Log struct {
	dir string
	f   *os.File // the active segment's file
	// What the files hold: the leader and the log's rewrite count they
	// were written from, the log start, the offset after the last batch,
	// that batch, and the segment files' base offsets in order.
	leader   int32
	rewrites uint64
	start    int64
	end      int64
	last     *replication.Batch
	files    []int64
	buf      []byte
	dirty    bool // written since the last fsync
}

func logDirName(topic string, partition int32) string { return fmt.Sprintf("%s-%d", topic, partition) }

// SegmentFile is the file of the segment at base in log directory dir.
func SegmentFile(dir string, base int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d.log", base))
}

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

// NewLog is the log in directory dir, written by nothing yet: the first
// Sync writes it whole.
func NewLog(dir string) *Log { return &Log{dir: dir, leader: -1} }

// Sync brings the files up to date with log l of leader: a moved log start
// is written and the segments below it deleted, new batches are appended;
// anything else (another leader's diverging log, a truncation, compaction)
// rewrites the directory. Callers hold the partition's lock.
func (d *Log) Sync(leader int32, l *replication.Log) error {
	if d.f == nil || l.StartOffset() < d.start || l.EndOffset() < d.end || !d.extends(leader, l) {
		return d.rewrite(leader, l)
	}
	d.leader, d.rewrites = leader, l.Rewrites()
	if l.StartOffset() > d.start {
		if err := d.trimTo(l.StartOffset()); err != nil {
			return err
		}
	}
	for off := d.end; off < l.EndOffset(); {
		bs := l.Read(off, l.EndOffset(), 1<<20)
		if len(bs) == 0 {
			break
		}
		for _, b := range bs {
			if base := l.SegmentBase(b.BaseOffset); base != d.files[len(d.files)-1] {
				if err := d.roll(base); err != nil {
					return err
				}
			}
			d.buf = appendEntry(d.buf, entryBatch, b.DeleteHorizon, b.Raw)
			off, d.last = b.EndOffset(), b
		}
		if err := d.write(); err != nil {
			return err
		}
	}
	d.end = l.EndOffset()
	return nil
}

// write appends the buffered entries to the active segment's file.
func (d *Log) write() error {
	if len(d.buf) == 0 {
		return nil
	}
	_, err := d.f.Write(d.buf)
	d.buf, d.dirty = d.buf[:0], true
	return err
}

// roll starts the file of a new active segment.
func (d *Log) roll(base int64) error {
	if err := d.write(); err != nil {
		return err
	}
	f, err := os.OpenFile(SegmentFile(d.dir, base), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if d.dirty {
		d.f.Sync() // the closed segment is complete on disk
		d.dirty = false
	}
	d.f.Close()
	d.f, d.files = f, append(d.files, base)
	syncDir(d.dir)
	return nil
}

// trimTo records a new log start and deletes the files of the segments
// wholly below it (their successor starts at or below it).
func (d *Log) trimTo(start int64) error {
	if err := writeFileAtomic(filepath.Join(d.dir, "start"), appendEntry(nil, entryStart, start, nil)); err != nil {
		return err
	}
	d.start = start
	n := 0
	for n+1 < len(d.files) && d.files[n+1] <= start {
		if err := os.Remove(SegmentFile(d.dir, d.files[n])); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		n++
	}
	d.files = append(d.files[:0:0], d.files[n:]...)
	return nil
}

// extends reports whether l only grew (and maybe moved its start) since
// the files were written: the same log with no rewrite since, or after a
// leader change a log that holds the files' last batch at its offset (the
// replicas share batches, so a clean failover costs no rewrite).
func (d *Log) extends(leader int32, l *replication.Log) bool {
	if leader == d.leader {
		return l.Rewrites() == d.rewrites
	}
	if d.last == nil {
		return l.EndOffset() == d.end && l.Size() == 0
	}
	return l.BatchAt(d.last.BaseOffset) == d.last
}

// rewrite writes the whole log as a new directory and swaps it in.
func (d *Log) rewrite(leader int32, l *replication.Log) error {
	tmp, old := d.dir+".tmp", d.dir+".old"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(tmp, "start"), appendEntry(nil, entryStart, l.StartOffset(), nil)); err != nil {
		return err
	}
	var last *replication.Batch
	var files []int64
	var werr error
	l.EachSegment(func(base int64, batches []*replication.Batch) {
		if werr != nil {
			return
		}
		f, err := os.OpenFile(SegmentFile(tmp, base), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			werr = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<16)
		var buf []byte
		for _, b := range batches {
			buf = appendEntry(buf[:0], entryBatch, b.DeleteHorizon, b.Raw)
			w.Write(buf)
			last = b
		}
		werr = errors.Join(w.Flush(), f.Sync(), f.Close())
		files = append(files, base)
	})
	if werr != nil {
		return werr
	}
	syncDir(tmp)
	if d.f != nil {
		d.f.Close()
		d.f = nil
	}
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(d.dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, d.dir); err != nil {
		return err
	}
	syncDir(filepath.Dir(d.dir))
	os.RemoveAll(old)
	f, err := os.OpenFile(SegmentFile(d.dir, files[len(files)-1]), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	d.f, d.files = f, files
	d.leader, d.rewrites, d.start, d.end, d.last, d.dirty = leader, l.Rewrites(), l.StartOffset(), l.EndOffset(), last, false
	return nil
}

// Reopen writes a restored leader log back in the segments the restore
// rolled (they may differ from the files read, after compaction) and
// continues from there. A nil l (no leader) leaves the files as they are
// until a leader writes.
func (d *Log) Reopen(leader int32, l *replication.Log) error {
	d.leader = leader
	if l == nil {
		return nil
	}
	return d.rewrite(leader, l)
}

// Flush fsyncs what was appended since the last flush.
func (d *Log) Flush() error {
	if d.f == nil || !d.dirty {
		return nil
	}
	d.dirty = false
	return d.f.Sync()
}

// Close flushes and closes the active segment's file.
func (d *Log) Close() error {
	if d.f == nil {
		return nil
	}
	err := errors.Join(d.Flush(), d.f.Close())
	d.f = nil
	return err
}

// writeFileAtomic writes path through a temporary file, fsync and rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// LoadLog reads a partition's log directory: its log start and batches.
// It first finishes or undoes an interrupted rewrite; a torn or corrupt
// entry is cut with the rest of its file and the later segment files, and
// how many bytes went is returned. A missing directory is an empty log.
func LoadLog(dir string) (start int64, batches []*replication.Batch, cut int64, err error) {
	tmp, old := dir+".tmp", dir+".old"
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(tmp); err == nil {
			// The crash fell between the two renames: tmp is complete.
			if err := os.Rename(tmp, dir); err != nil {
				return 0, nil, 0, err
			}
		}
	}
	os.RemoveAll(tmp)
	os.RemoveAll(old)
	if raw, err := os.ReadFile(filepath.Join(dir, "start")); err == nil {
		if _, kind, n, _, ok := readEntry(raw); ok && kind == entryStart {
			start = n
		}
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return 0, nil, 0, err
	}
	sort.Strings(names) // 20-digit base offsets sort as numbers
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return 0, nil, 0, err
		}
		good := 0
		for pos := 0; pos < len(data); {
			b, kind, n, size, ok := readEntry(data[pos:])
			if !ok || kind != entryBatch {
				break
			}
			b.DeleteHorizon = n
			batches = append(batches, b)
			pos += size
			good = pos
		}
		if good < len(data) {
			cut += int64(len(data) - good)
			if err := os.Truncate(name, int64(good)); err != nil {
				return 0, nil, 0, err
			}
			for _, later := range names[i+1:] {
				if st, err := os.Stat(later); err == nil {
					cut += st.Size()
				}
				os.Remove(later)
			}
			break
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

// Entries returns where each entry of a segment file's data begins, up to
// the first torn or corrupt one: for tools and tests that inspect a data dir.
func Entries(data []byte) []int {
	var out []int
	for pos := 0; pos < len(data); {
		_, _, _, size, ok := readEntry(data[pos:])
		if !ok {
			break
		}
		out = append(out, pos)
		pos += size
	}
	return out
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
