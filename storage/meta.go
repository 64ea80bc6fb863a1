// Package storage is the --data-dir format: what a fakekafka process keeps
// on disk so that topics, configs, partition state and logs survive a
// restart of the whole process. It knows the files, not the cluster: the
// server decides when to write what.
//
//	DIR/.lock               held while a cluster runs (lock_unix.go)
//	DIR/meta.json           topics (id, configs, assignment, leader, epoch,
//	                        ISR, HW checkpoint), broker configs, the next
//	                        producer id; replaced by write-then-rename
//	DIR/logs/TOPIC-N/       the partition's log: one file per segment and
//	                        its log start (log.go)
//
// Group and transaction state live in __consumer_offsets and
// __transaction_state, so their logs carry them; producer state is rebuilt
// from the logs, as Kafka rebuilds it at startup.
package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// MetaVersion is the version of meta.json this package reads and writes.
const MetaVersion = 1

// Meta is meta.json.
type Meta struct {
	Version        int               `json:"version"`
	NextProducerID int64             `json:"next_producer_id"`
	BrokerConfigs  map[string]string `json:"broker_configs,omitempty"`
	// PerBrokerConfigs are each broker's own dynamic configs, by broker id.
	PerBrokerConfigs map[string]map[string]string `json:"per_broker_configs,omitempty"`
	// GroupConfigs are each group's group configs, by group id.
	GroupConfigs map[string]map[string]string `json:"group_configs,omitempty"`
	Topics       []MetaTopic                  `json:"topics"`
	// The cluster metadata Kafka keeps in its metadata log beside topics:
	// ACL bindings, the SCRAM store, client quotas and the feature levels
	// UpdateFeatures finalized.
	ACLs             []MetaACL        `json:"acls,omitempty"`
	ScramCredentials []MetaScram      `json:"scram_credentials,omitempty"`
	ClientQuotas     []MetaQuota      `json:"client_quotas,omitempty"`
	Features         map[string]int16 `json:"features,omitempty"`
	// DelegationTokens are the delegation tokens, without their HMACs:
	// delegation.token.secret.key makes those again.
	DelegationTokens []MetaDelegationToken `json:"delegation_tokens,omitempty"`
}

// MetaACL is one ACL binding by Kafka's names (TOPIC, LITERAL, READ, ALLOW).
type MetaACL struct {
	ResourceType string `json:"resource_type"`
	Name         string `json:"name"`
	Pattern      string `json:"pattern"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// MetaScram is one user's SCRAM credential for one mechanism: what a
// server keeps (salt, iterations, stored and server keys), never a password.
type MetaScram struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"`
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
	StoredKey  []byte `json:"stored_key"`
	ServerKey  []byte `json:"server_key"`
}

// MetaQuota is one client-quota entity and its values; a nil part is
// absent from the entity.
type MetaQuota struct {
	User     *MetaQuotaPart     `json:"user,omitempty"`
	ClientID *MetaQuotaPart     `json:"client_id,omitempty"`
	IP       *MetaQuotaPart     `json:"ip,omitempty"`
	Values   map[string]float64 `json:"values"`
}

// MetaQuotaPart names an entity part, or is Kafka's <default>.
type MetaQuotaPart struct {
	Name    string `json:"name,omitempty"`
	Default bool   `json:"default,omitempty"`
}

// MetaDelegationToken is one delegation token of meta.json; principals are
// "Type:Name", times Unix milliseconds.
type MetaDelegationToken struct {
	ID        string   `json:"id"`
	Owner     string   `json:"owner"`
	Requester string   `json:"requester"`
	Renewers  []string `json:"renewers,omitempty"`
	Issue     int64    `json:"issue_timestamp"`
	Expiry    int64    `json:"expiry_timestamp"`
	Max       int64    `json:"max_timestamp"`
}

// MetaTopic is one topic of meta.json; ID is the topic id in hex.
type MetaTopic struct {
	Name       string            `json:"name"`
	ID         string            `json:"id"`
	Configs    map[string]string `json:"configs,omitempty"`
	Partitions []MetaPartition   `json:"partitions"`
}

// MetaPartition is one partition of a MetaTopic, HW its checkpoint.
type MetaPartition struct {
	Replicas []int32 `json:"replicas"`
	Leader   int32   `json:"leader"`
	Epoch    int32   `json:"leader_epoch"`
	ISR      []int32 `json:"isr"`
	HW       int64   `json:"high_watermark"`
}

// Dir is an open, locked data dir.
type Dir struct {
	dir  string
	lock *os.File   // DIR/.lock, held until Close
	mu   sync.Mutex // serialises meta.json writes
}

// Open creates dir (and dir/logs) if needed, locks it against a second
// process, and reads its meta.json: nil if there is none yet (a new data
// dir). An unreadable meta.json or another version is an error, never an
// empty cluster.
func Open(dir string) (_ *Dir, _ *Meta, err error) {
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("data dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()
	d := &Dir{dir: dir, lock: lock}
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		return d, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("data dir: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("data dir: meta.json: %w", err)
	}
	if m.Version != MetaVersion {
		return nil, nil, fmt.Errorf("data dir: meta.json version %d, want %d", m.Version, MetaVersion)
	}
	return d, &m, nil
}

// Path is the data dir's path.
func (d *Dir) Path() string { return d.dir }

// LogDir is the directory of a partition's log.
func (d *Dir) LogDir(topic string, partition int32) string {
	return filepath.Join(d.dir, "logs", logDirName(topic, partition))
}

// RemoveLog deletes a partition's log directory, with what an interrupted
// rewrite left beside it.
func (d *Dir) RemoveLog(topic string, partition int32) {
	dir := d.LogDir(topic, partition)
	os.RemoveAll(dir)
	os.RemoveAll(dir + ".tmp")
	os.RemoveAll(dir + ".old")
}

// WriteMeta replaces meta.json by write, fsync and rename, so a crash
// leaves the old one or the new one.
func (d *Dir) WriteMeta(m Meta) error {
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

// Close releases the lock. The logs are closed by their owners first.
func (d *Dir) Close() error { return d.lock.Close() }
