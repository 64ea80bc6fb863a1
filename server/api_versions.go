package server

// ApiVersions, versions 0-4: protocol's table of API keys and versions,
// plus the features this cluster finalizes.

import (
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnVersion2 reports whether transaction.version 2 is finalized, so
// clients that ask for it (EndTxn v5, Produce v12, TxnOffsetCommit v5) run
// KIP-890's rules.
func (c *Cluster) txnVersion2() bool { return c.transactionVersion() >= 2 }

// apiVersions is protocol's ApiVersions answer plus the features this
// cluster finalizes (v3+): transaction.version.
func (c *Cluster) apiVersions(version int16) *kmsg.ApiVersionsResponse {
	resp := protocol.ApiVersionsResponse(version)
	if resp.Version < 3 || resp.ErrorCode != 0 {
		return resp
	}
	addStreamsFeature(resp)
	if c.transactionVersion() < 0 {
		return resp
	}
	level := int16(c.transactionVersion())
	sf := kmsg.NewApiVersionsResponseSupportedFeature()
	sf.Name, sf.MinVersion, sf.MaxVersion = "transaction.version", 0, 2
	resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	if level > 0 { // a feature at level 0 is not finalized (UpdateFeatures' downgrade to 0)
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = "transaction.version", level, level
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	}
	c.shareFeature(resp)
	resp.FinalizedFeaturesEpoch = c.finalizedFeaturesEpoch()
	return resp
}
