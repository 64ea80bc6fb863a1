package server

// The KRaft feature levels (KIP-584) as Kafka 4.4's controller knows them:
// the range each feature supports and the level this cluster finalizes.
// UpdateFeatures validates against them; ApiVersions (v3+) lists them as a
// Kafka 4.4 broker does, in its order.
//
// The levels are those of the reference configuration: metadata.version
// 4.4's newest (33), group.version 1 (KIP-848 on), kraft.version 0 (a
// static voter set), eligible.leader.replicas.version 0 (fakekafka models
// the classic ISR, KIP-966 off), share.version 2, streams.version 1 and
// transaction.version Config.TransactionVersion. Only transaction.version
// can change at runtime: fakekafka switches KIP-890's rules by it.

import (
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// featureRange is one feature Kafka 4.4's controller supports.
type featureRange struct {
	name     string
	min, max int16
}

// supportedFeatures are Kafka 4.4's features and the levels its
// controller supports, as its brokers list them in ApiVersions.
var supportedFeatures = []featureRange{
	{"group.version", 0, 1},
	{"kraft.version", 0, 1},
	{metadataVersionFeature, 7, 33},
	{"share.version", 0, 2},
	{"streams.version", 0, 1},
	{transactionVersionFeature, 0, 2},
	{"eligible.leader.replicas.version", 0, 1},
}

const (
	metadataVersionFeature    = "metadata.version"
	transactionVersionFeature = "transaction.version"
	kraftVersionFeature       = "kraft.version"
)

// finalizedOrder is the order Kafka 4.4's brokers list finalized features.
var finalizedOrder = []string{"group.version", "streams.version", transactionVersionFeature, "share.version",
	metadataVersionFeature, kraftVersionFeature, "eligible.leader.replicas.version"}

// fixedFeatureLevels are the finalized levels fakekafka cannot change.
var fixedFeatureLevels = map[string]int16{
	"group.version": 1, kraftVersionFeature: 0, metadataVersionFeature: 33,
	"share.version": 2, "streams.version": 1, "eligible.leader.replicas.version": 0,
}

func lookupFeature(name string) (featureRange, bool) {
	for _, f := range supportedFeatures {
		if f.name == name {
			return f, true
		}
	}
	return featureRange{}, false
}

// featureLevels is what UpdateFeatures changed at runtime.
type featureLevels struct {
	mu sync.Mutex // serialises updates
	// txn is transaction.version + 1 once UpdateFeatures set it; 0 means
	// Config.TransactionVersion.
	txn atomic.Int32
	// epoch counts applied updates, for ApiVersions' finalized epoch.
	epoch atomic.Int64
}

// transactionVersion is the finalized transaction.version: -1 when the
// cluster runs without the feature (Config.TransactionVersion -1) and no
// update set it.
func (c *Cluster) transactionVersion() int {
	if v := c.features.txn.Load(); v != 0 {
		return int(v - 1)
	}
	return c.cfg.TransactionVersion
}

// finalizedLevel is feature name's finalized level (0 when not finalized).
func (c *Cluster) finalizedLevel(name string) int16 {
	if name == transactionVersionFeature {
		return int16(max(c.transactionVersion(), 0))
	}
	return fixedFeatureLevels[name]
}

// finalizedFeaturesEpoch is ApiVersions' FinalizedFeaturesEpoch: 1, plus
// one for each level UpdateFeatures changed.
func (c *Cluster) finalizedFeaturesEpoch() int64 { return 1 + c.features.epoch.Load() }

// addFeatures fills ApiVersions' supported and finalized features: every
// feature Kafka 4.4 supports, the finalized ones at a level above 0.
// With Config.TransactionVersion -1 (a cluster from before KIP-890)
// transaction.version is not there at all.
func (c *Cluster) addFeatures(resp *kmsg.ApiVersionsResponse) {
	noTxn := c.transactionVersion() < 0
	for _, f := range supportedFeatures {
		if noTxn && f.name == transactionVersionFeature {
			continue
		}
		if resp.Version < 4 && f.min == 0 {
			// KIP-1022: clients before ApiVersions v4 cannot read a
			// supported range starting at 0, so Kafka leaves those out.
			continue
		}
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = f.name, f.min, f.max
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	}
	for _, name := range finalizedOrder {
		level := c.finalizedLevel(name)
		if level <= 0 {
			continue
		}
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = name, level, level
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	}
	resp.FinalizedFeaturesEpoch = c.finalizedFeaturesEpoch()
}
