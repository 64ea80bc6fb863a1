package server

// DescribeClientQuotas, versions 0-1 (KIP-546).
//
// Needs DESCRIBE_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED).
// Each component selects entities by type: EXACT a name, DEFAULT the
// <default> entity, ANY any; strict leaves out entities with other types.
// Empty or repeated types, an EXACT match without a name, a name with
// DEFAULT or ANY, and ip with user or client-id get INVALID_REQUEST with
// a message and no entries; an unknown type UNSUPPORTED_VERSION, as Kafka
// answers them. Entities list client-id before user, as Kafka's do.

import (
	"errors"
	"maps"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleDescribeClientQuotas(req *kmsg.DescribeClientQuotasRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.ErrorMessage = noMessage(req.Version, 0)
	if !cn.allowedCluster(authorizer.OpDescribeConfigs) {
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	var filter []quota.FilterComponent
	for _, c := range req.Components {
		filter = append(filter, quota.FilterComponent{Type: c.EntityType, MatchType: int8(c.MatchType), Match: c.Match})
	}
	entries, err := cn.b.c.quotas.cfg.Load().Describe(filter, req.Strict)
	if err != nil {
		resp.ErrorCode = kerr.InvalidRequest.Code
		if errors.Is(err, quota.ErrUnsupported) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
		}
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp, nil
	}
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, e := range entries {
		re := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range e.Entity.Components() {
			re.Entity = append(re.Entity, kmsg.DescribeClientQuotasResponseEntryEntity{Type: p.Type, Name: p.Name})
		}
		for _, k := range slices.Sorted(maps.Keys(e.Values)) {
			re.Values = append(re.Values, kmsg.DescribeClientQuotasResponseEntryValue{Key: k, Value: e.Values[k]})
		}
		resp.Entries = append(resp.Entries, re)
	}
	return resp, nil
}
