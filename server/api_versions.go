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
func (c *Cluster) txnVersion2() bool { return c.transactionVersion() >= 2 }

// apiVersions is protocol's ApiVersions answer plus the features this
// cluster supports and finalizes (v3+, features.go).
func (c *Cluster) apiVersions(version int16) *kmsg.ApiVersionsResponse {
	resp := protocol.ApiVersionsResponse(version)
	if resp.Version < 3 || resp.ErrorCode != 0 {
		return resp
	}
	c.addFeatures(resp)
	return resp
}
