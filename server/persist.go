package server

import (
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"

	"github.com/fakekafka/fakekafka/replication"
	"github.com/fakekafka/fakekafka/storage"
)

// Persistence (Config.DataDir, --data-dir): the glue between the cluster
// and package storage, which owns the format. meta.json is written when
// topics or configs change, at every HW checkpoint
// (replica.high.watermark.checkpoint.interval.ms) and at Close; logs are
// written as they change, before the request that changed them is
// answered. A restart therefore comes back with every record that was
// acknowledged and the HW of the last checkpoint.

// dataDir is the cluster's persistence, nil without Config.DataDir.
type dataDir struct {
	*storage.Dir
	// restoring is set while restore recreates the topics: they must not
	// overwrite their files or a meta.json that names topics not yet back.
	restoring bool
}

// persistence writes every change of a partition's leader log to disk.
type persistence struct{}

func (*persistence) partitionChanged(p *partition, _ partitionChange) { p.persist() }

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
	if err := p.disk.Sync(l.Broker, l.Log()); err != nil {
		p.t.c.log.Error("writing the partition log failed", "topic", p.t.name, "partition", p.index, "err", err)
	}
}

// attachDisk gives a new partition its disk log. Callers hold p.mu or own p.
func (c *Cluster) attachDisk(p *partition) {
	if c.data == nil || c.data.restoring {
		return
	}
	p.extras().disk = storage.NewLog(c.data.LogDir(p.t.name, p.index))
	p.persist()
}

// saveMeta writes meta.json from the current state.
func (c *Cluster) saveMeta() {
	if c.data == nil || c.data.restoring {
		return
	}
	bs := c.brokerSettings()
	m := storage.Meta{Version: storage.MetaVersion, NextProducerID: c.nextProducerID.Load(), BrokerConfigs: bs.dynamic,
		GroupConfigs: c.groupCfgs.Load().explicit}
	for id, cfg := range bs.perBroker {
		if m.PerBrokerConfigs == nil {
			m.PerBrokerConfigs = map[string]map[string]string{}
		}
		m.PerBrokerConfigs[strconv.Itoa(int(id))] = cfg
	}
	for _, t := range c.topics.Load().byName {
		mt := storage.MetaTopic{Name: t.name, ID: hex.EncodeToString(t.id[:]), Configs: t.cfg().configs}
		for _, p := range t.partitions() {
			p.mu.Lock()
			mp := storage.MetaPartition{Leader: p.st.Leader(), Epoch: p.st.LeaderEpoch(), ISR: p.st.ISR(), HW: p.st.HW()}
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
	c.metaMetadata(&m)
	if err := c.data.WriteMeta(m); err != nil {
		c.log.Error("writing meta.json failed", "dir", c.data.Path(), "err", err)
	}
}

// openDataDir creates the data dir or restores the cluster from it.
// Called by NewCluster before any broker serves.
func (c *Cluster) openDataDir() error {
	if c.cfg.DataDir == "" {
		return nil
	}
	d, m, err := storage.Open(c.cfg.DataDir)
	if err != nil {
		return err
	}
	c.data = &dataDir{Dir: d}
	if m == nil {
		c.saveMeta()
		return nil
	}
	if err := c.restore(*m); err != nil {
		d.Close()
		return err
	}
	return nil
}

// restore recreates every topic of m with its logs.
func (c *Cluster) restore(m storage.Meta) error {
	if len(m.BrokerConfigs) > 0 || len(m.PerBrokerConfigs) > 0 {
		perBroker := map[int32]map[string]string{}
		for id, cfg := range m.PerBrokerConfigs {
			if n, err := strconv.Atoi(id); err == nil {
				perBroker[int32(n)] = maps.Clone(cfg)
			}
		}
		c.brokerCfg.Store(c.resolveBrokerSettings(maps.Clone(m.BrokerConfigs), perBroker))
	}
	c.groupCfgs.Store(resolveGroupConfigs(c.brokerSettings(), maps.Clone(m.GroupConfigs)))
	if err := c.restoreMetadata(m); err != nil {
		return err
	}
	nextPID := m.NextProducerID
	c.data.restoring = true
	defer func() { c.data.restoring = false }()
	for _, mt := range m.Topics {
		var id [16]byte
		if b, err := hex.DecodeString(mt.ID); err == nil && len(b) == 16 {
			copy(id[:], b)
		}
		spec := topicSpec{name: mt.Name, partitions: -1, rf: -1, id: id, configs: maps.Clone(mt.Configs), goAPI: true,
			before: map[string]*topic{}} // a data dir from before collisions were refused may hold a.b and a_b
		for _, mp := range mt.Partitions {
			spec.assignment = append(spec.assignment, mp.Replicas)
		}
		t, kerrv, msg := c.createTopic(spec, false)
		if kerrv != nil {
			return fmt.Errorf("data dir: restoring topic %s: %v: %s", mt.Name, kerrv, msg)
		}
		for i, mp := range mt.Partitions {
			p := t.partitions()[i]
			dir := c.data.LogDir(t.name, p.index)
			start, batches, cut, err := storage.LoadLog(dir)
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
			p.extras().disk = storage.NewLog(dir)
			var log *replication.Log
			if l := p.st.LeaderReplica(); l != nil {
				log = l.Log()
			}
			if err := p.disk.Reopen(p.st.Leader(), log); err != nil {
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

// removeTopicData deletes a deleted topic's logs.
func (c *Cluster) removeTopicData(t *topic) {
	if c.data == nil {
		return
	}
	for _, p := range t.partitions() {
		p.mu.Lock()
		if p.disk != nil {
			p.disk.Close()
			p.extras().disk = nil
		}
		p.mu.Unlock()
		c.data.RemoveLog(t.name, p.index)
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
					p.disk.Close()
					p.extras().disk = nil
				} else if err := p.disk.Flush(); err != nil {
					c.log.Error("flushing the partition log failed", "topic", t.name, "partition", p.index, "err", err)
				}
			}
			p.mu.Unlock()
		}
	}
	c.saveMeta()
	if closeLogs {
		c.data.Close() // releases the flock
	}
}
