package server

// AlterClientQuotas, versions 0-1 (KIP-546).
//
// Needs ALTER_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED on every
// entry). Each entry is validated alone, as Kafka's ClientQuotaControlManager
// does: entity types user, client-id (either or both, a null name being
// <default>) or ip alone (an address or a host name that resolves), a
// later component of a type replacing an earlier one; keys producer_byte_rate,
// consumer_byte_rate (whole numbers), request_percentage and
// controller_mutation_rate for users and client ids,
// connection_creation_rate for ips, each once; values greater than 0. A bad
// entry gets INVALID_REQUEST with Kafka's message. validate_only checks
// without changing anything.

import (
	"errors"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (cn *conn) handleAlterClientQuotas(req *kmsg.AlterClientQuotasRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	allowed := cn.allowedCluster(authorizer.OpAlterConfigs)
	for _, re := range req.Entries {
		out := kmsg.NewAlterClientQuotasResponseEntry()
		var cs []quota.Component
		for _, p := range re.Entity {
			cs = append(cs, quota.Component{Type: p.Type, Name: p.Name})
		}
		// Kafka answers the entity as it read it, a map of type to name;
		// refused as a whole (unauthorized), as the request gave it.
		e, err := quota.ParseEntity(cs)
		if err == nil && allowed {
			cs = e.Components()
		}
		for _, p := range cs {
			out.Entity = append(out.Entity, kmsg.AlterClientQuotasResponseEntryEntity{Type: p.Type, Name: p.Name})
		}
		switch {
		case !allowed:
			out.ErrorCode, out.ErrorMessage, err = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description), nil // Errors.message(), as Kafka's error response
		case err == nil:
			ops := make([]quota.Op, len(re.Ops))
			for i, op := range re.Ops {
				ops[i] = quota.Op{Key: op.Key, Value: op.Value, Remove: op.Remove}
			}
			if err = quota.CheckIP(e, wellFormedHost); err == nil {
				err = quota.ValidateOps(e, ops)
			}
			if err == nil && !req.ValidateOnly {
				err = c.AlterClientQuotas(e, ops...)
			}
		}
		if err != nil {
			out.ErrorCode = kerr.UnknownServerError.Code
			if errors.Is(err, quota.ErrInvalid) {
				out.ErrorCode = kerr.InvalidRequest.Code
			}
			msg := err.Error()
			out.ErrorMessage = &msg
		}
		resp.Entries = append(resp.Entries, out)
	}
	return resp, nil
}
