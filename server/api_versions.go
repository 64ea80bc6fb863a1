package server

// ApiVersions, versions 0-5: protocol's table of API keys and versions,
// plus the features this cluster finalizes.

import (
	"github.com/fakekafka/fakekafka/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnVersion2 reports whether transaction.version 2 is finalized, so
// clients that ask for it (EndTxn v5, Produce v12, TxnOffsetCommit v5) run
// KIP-890's rules.
func (c *Cluster) txnVersion2() bool { return c.cfg.TransactionVersion >= 2 }

// apiVersions is protocol's ApiVersions answer plus the features this
// cluster finalizes (v3+): transaction.version.
func (c *Cluster) apiVersions(version int16) *kmsg.ApiVersionsResponse {
	resp := protocol.ApiVersionsResponse(version)
	if resp.Version < 3 || resp.ErrorCode != 0 {
		return resp
	}
	addStreamsFeature(resp)
	if c.cfg.TransactionVersion < 0 {
		return resp
	}
	level := int16(c.cfg.TransactionVersion)
	sf := kmsg.NewApiVersionsResponseSupportedFeature()
	sf.Name, sf.MinVersion, sf.MaxVersion = "transaction.version", 0, 2
	resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	ff := kmsg.NewApiVersionsResponseFinalizedFeature()
	ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = "transaction.version", level, level
	resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	c.shareFeature(resp)
	resp.FinalizedFeaturesEpoch = 1
	return resp
}
