package server

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/fakekafka/fakekafka/replication"
)

// Persistence (Config.DataDir, --data-dir): topics, configs, partition
// state and logs survive a restart of the whole process. Group and
// transaction state live in __consumer_offsets and __transaction_state, so
// restoring those logs restores them; producer state is rebuilt from the
// logs, as Kafka rebuilds it at startup.
//
//	DIR/meta.json           topics (id, configs, assignment, leader, epoch,
//	                        ISR, HW checkpoint), broker configs, the next
//	                        producer id; replaced by write-then-rename
//	DIR/logs/TOPIC-N/       the partition's log: one file per segment and
//	                        its log start (persist_log.go)
//
// meta.json is written when topics or configs change, at every HW
// checkpoint (replica.high.watermark.checkpoint.interval.ms) and at Close;
// logs are written as they change. A restart therefore comes back with
// every record that was acknowledged and the HW of the last checkpoint.

const metaVersion = 1

type metaFile struct {
	Version        int               `json:"version"`
	NextProducerID int64             `json:"next_producer_id"`
	BrokerConfigs  map[string]string `json:"broker_configs,omitempty"`
	Topics         []metaTopic       `json:"topics"`
}

type metaTopic struct {
	Name       string            `json:"name"`
	ID         string            `json:"id"`
	Configs    map[string]string `json:"configs,omitempty"`
	Partitions []metaPartition   `json:"partitions"`
}

type metaPartition struct {
	Replicas []int32 `json:"replicas"`
	Leader   int32   `json:"leader"`
	Epoch    int32   `json:"leader_epoch"`
	ISR      []int32 `json:"isr"`
	HW       int64   `json:"high_watermark"`
}

// dataDir is the cluster's persistence, nil without Config.DataDir.
type dataDir struct {
	dir  string
	lock *os.File   // DIR/.lock, held while the cluster runs
	mu   sync.Mutex // serialises meta.json writes
	// restoring is set while restore recreates the topics: they must not
	// overwrite their files or a meta.json that names topics not yet back.
	restoring bool
}

func (d *dataDir) logDir(topic string, partition int32) string {
	return filepath.Join(d.dir, "logs", logDirName(topic, partition))
}

// persist brings p's disk log up to date with its leader's log. Callers
// hold p.mu.
func (p *partition) persist() {
	if p.disk == nil {
		return
	}
	l := p.st.LeaderReplica()
	if l == nil {
		return
	}
	if err := p.disk.sync(l.Broker, l.Log()); err != nil {
		p.t.c.log.Error("writing the partition log failed", "topic", p.t.name, "partition", p.index, "err", err)
	}
}

// attachDisk gives a new partition its disk log. Callers hold p.mu or own p.
func (c *Cluster) attachDisk(p *partition) {
	if c.data == nil || c.data.restoring {
		return
	}
	p.extras().disk = &diskLog{dir: c.data.logDir(p.t.name, p.index), leader: -1}
	p.persist()
}

// saveMeta writes meta.json from the current state.
func (c *Cluster) saveMeta() {
	if c.data == nil || c.data.restoring {
		return
	}
	m := metaFile{Version: metaVersion, NextProducerID: c.nextProducerID.Load(), BrokerConfigs: c.brokerSettings().dynamic}
	for _, t := range c.topics.Load().byName {
		mt := metaTopic{Name: t.name, ID: hex.EncodeToString(t.id[:]), Configs: t.cfg().configs}
		for _, p := range t.partitions() {
			p.mu.Lock()
			mp := metaPartition{Leader: p.st.Leader(), Epoch: p.st.LeaderEpoch(), ISR: p.st.ISR(), HW: p.st.HW()}
			for _, r := range p.st.Replicas() {
				mp.Replicas = append(mp.Replicas, r.Broker)
				if r.Broker == mp.Leader || mp.Leader < 0 {
					mp.HW = max(mp.HW, r.HW())
				}
			}
			p.mu.Unlock()
			mt.Partitions = append(mt.Partitions, mp)
		}
		m.Topics = append(m.Topics, mt)
	}
	if err := c.data.writeMeta(m); err != nil {
		c.log.Error("writing meta.json failed", "dir", c.data.dir, "err", err)
	}
}

func (d *dataDir) writeMeta(m metaFile) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	tmp := filepath.Join(d.dir, "meta.json.tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(raw)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(d.dir, "meta.json")); err != nil {
		return err
	}
	syncDir(d.dir)
	return nil
}

// openDataDir creates the data dir or restores the cluster from it.
// Called by NewCluster before any broker serves.
func (c *Cluster) openDataDir() (err error) {
	if c.cfg.DataDir == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(c.cfg.DataDir, "logs"), 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	lock, err := lockDataDir(c.cfg.DataDir)
	if err != nil {
		return err
	}
	c.data = &dataDir{dir: c.cfg.DataDir, lock: lock}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	raw, err := os.ReadFile(filepath.Join(c.cfg.DataDir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		c.saveMeta()
		return nil
	}
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	var m metaFile
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("data dir: meta.json: %w", err)
	}
	if m.Version != metaVersion {
		return fmt.Errorf("data dir: meta.json version %d, want %d", m.Version, metaVersion)
	}
	return c.restore(m)
}

// restore recreates every topic of m with its logs.
func (c *Cluster) restore(m metaFile) error {
	if len(m.BrokerConfigs) > 0 {
		c.brokerCfg.Store(c.resolveBrokerSettings(maps.Clone(m.BrokerConfigs)))
	}
	nextPID := m.NextProducerID
	c.data.restoring = true
	defer func() { c.data.restoring = false }()
	for _, mt := range m.Topics {
		var id [16]byte
		if b, err := hex.DecodeString(mt.ID); err == nil && len(b) == 16 {
			copy(id[:], b)
		}
		spec := topicSpec{name: mt.Name, partitions: -1, rf: -1, id: id, configs: maps.Clone(mt.Configs)}
		for _, mp := range mt.Partitions {
			spec.assignment = append(spec.assignment, mp.Replicas)
		}
		t, kerrv, msg := c.createTopic(spec, false)
		if kerrv != nil {
			return fmt.Errorf("data dir: restoring topic %s: %v: %s", mt.Name, kerrv, msg)
		}
		for i, mp := range mt.Partitions {
			p := t.partitions()[i]
			dir := c.data.logDir(t.name, p.index)
			start, batches, cut, err := loadLog(dir)
			if err != nil {
				return fmt.Errorf("data dir: %s/%d: %w", t.name, p.index, err)
			}
			if cut > 0 {
				c.log.Warn("cut a torn log tail", "topic", t.name, "partition", p.index, "bytes", cut)
			}
			for _, b := range batches {
				nextPID = max(nextPID, b.ProducerID)
			}
			p.mu.Lock()
			p.st.Restore(replication.Restored{Leader: mp.Leader, Epoch: mp.Epoch, ISR: mp.ISR, LogStart: start, HW: mp.HW, Batches: batches})
			p.extras().disk = &diskLog{dir: dir}
			if err := p.disk.reopen(p.st.Leader(), p.st.LeaderReplica()); err != nil {
				p.mu.Unlock()
				return fmt.Errorf("data dir: %s/%d: %w", t.name, p.index, err)
			}
			p.mu.Unlock()
		}
	}
	// Producer ids handed out after the last meta.json write but never
	// written to a log are skipped by a margin, as Kafka's controller
	// hands out blocks of ids.
	c.nextProducerID.Store(nextPID + 1000)
	c.data.restoring = false
	c.saveMeta()
	c.wakeTxnLoop()
	return nil
}

// reopen writes the restored leader log back in the segments the restore
// rolled (they may differ from the files read, after compaction) and
// continues from there.
func (d *diskLog) reopen(leader int32, l *replication.Replica) error {
	d.leader = leader
	if l == nil {
		return nil // leaderless: the files stay as they are until a leader writes
	}
	return d.rewrite(leader, l.Log())
}

// removeTopicData deletes a deleted topic's logs.
func (c *Cluster) removeTopicData(t *topic) {
	if c.data == nil {
		return
	}
	for _, p := range t.partitions() {
		p.mu.Lock()
		if p.disk != nil {
			p.disk.close()
			p.extras().disk = nil
		}
		p.mu.Unlock()
		dir := c.data.logDir(t.name, p.index)
		os.RemoveAll(dir)
		os.RemoveAll(dir + ".tmp")
		os.RemoveAll(dir + ".old")
	}
	c.saveMeta()
}

// flushData fsyncs every partition log (at HW checkpoints and Close) and
// writes meta.json.
func (c *Cluster) flushData(closeLogs bool) {
	if c.data == nil {
		return
	}
	for _, t := range c.topics.Load().byName {
		for _, p := range t.partitions() {
			p.mu.Lock()
			if p.disk != nil {
				p.persist()
				if closeLogs {
					p.disk.close()
					p.extras().disk = nil
				} else if err := p.disk.flush(); err != nil {
					c.log.Error("flushing the partition log failed", "topic", t.name, "partition", p.index, "err", err)
				}
			}
			p.mu.Unlock()
		}
	}
	c.saveMeta()
	if closeLogs {
		c.data.lock.Close() // releases the flock
	}
}
