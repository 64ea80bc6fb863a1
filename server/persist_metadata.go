package server

// The cluster metadata Kafka keeps in its metadata log beside topics and
// configs: ACL bindings, the SCRAM store, client quotas, the feature
// levels UpdateFeatures finalized and the delegation tokens. With Config.DataDir they go into
// meta.json with the rest, so a restart of the process comes back with
// them, as a Kafka cluster does after a restart of its nodes.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/fakekafka/fakekafka/quota"
	"github.com/fakekafka/fakekafka/sasl"
	"github.com/fakekafka/fakekafka/storage"
)

// metaMetadata fills m's ACLs, SCRAM credentials, quotas, features and
// delegation tokens.
func (c *Cluster) metaMetadata(m *storage.Meta) {
	for _, a := range c.acls.Load().ACLs() {
		m.ACLs = append(m.ACLs, storage.MetaACL{ResourceType: a.ResourceType.String(), Name: a.Name,
			Pattern: a.Pattern.String(), Principal: a.Principal, Host: a.Host,
			Operation: a.Operation.String(), Permission: a.Permission.String()})
	}
	u := c.users
	u.mu.RLock()
	for _, mech := range sasl.ScramMechanisms {
		names := make([]string, 0, len(u.scram[mech]))
		for name := range u.scram[mech] {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			cred := u.scram[mech][name]
			m.ScramCredentials = append(m.ScramCredentials, storage.MetaScram{User: name, Mechanism: mech,
				Salt: cred.Salt, Iterations: cred.Iterations, StoredKey: cred.StoredKey, ServerKey: cred.ServerKey})
		}
	}
	u.mu.RUnlock()
	for _, e := range c.ClientQuotas() {
		m.ClientQuotas = append(m.ClientQuotas, storage.MetaQuota{User: metaPart(e.Entity.User),
			ClientID: metaPart(e.Entity.ClientID), IP: metaPart(e.Entity.IP), Values: e.Values})
	}
	if v := c.features.txn.Load(); v != 0 {
		m.Features = map[string]int16{transactionVersionFeature: int16(v - 1)}
	}
	m.DelegationTokens = c.metaTokens()
}

func metaPart(p quota.Part) *storage.MetaQuotaPart {
	if !p.Present {
		return nil
	}
	return &storage.MetaQuotaPart{Name: p.Name, Default: p.Default}
}

func quotaPart(p *storage.MetaQuotaPart) quota.Part {
	switch {
	case p == nil:
		return quota.Part{}
	case p.Default:
		return quota.Default()
	}
	return quota.Named(p.Name)
}

// restoreMetadata brings back what metaMetadata wrote. The SCRAM
// credentials of this start's SASL users (--sasl-user) stay as the
// configuration made them: the flag is the later word on them.
func (c *Cluster) restoreMetadata(m storage.Meta) error {
	acls := make([]authorizer.ACL, 0, len(m.ACLs))
	for i, ma := range m.ACLs {
		a, err := aclFromMeta(ma)
		if err != nil {
			return fmt.Errorf("data dir: ACL %d (%+v): %w", i, ma, err)
		}
		acls = append(acls, a)
	}
	if len(acls) > 0 {
		c.acls.Store(c.acls.Load().Add(acls...))
	}
	u := c.users
	u.mu.Lock()
	for _, ms := range m.ScramCredentials {
		if !slices.Contains(sasl.ScramMechanisms, ms.Mechanism) || ms.User == "" {
			u.mu.Unlock()
			return fmt.Errorf("data dir: SCRAM credential of %q for mechanism %q: unknown mechanism or no user", ms.User, ms.Mechanism)
		}
		if _, configured := c.cfg.SASLUsers[ms.User]; configured {
			continue
		}
		u.scram[ms.Mechanism][ms.User] = sasl.ScramCredential{Salt: ms.Salt, Iterations: ms.Iterations,
			StoredKey: ms.StoredKey, ServerKey: ms.ServerKey}
	}
	u.mu.Unlock()
	qc := c.quotas.cfg.Load()
	for _, mq := range m.ClientQuotas {
		e := quota.Entity{User: quotaPart(mq.User), ClientID: quotaPart(mq.ClientID), IP: quotaPart(mq.IP)}
		keys := make([]string, 0, len(mq.Values))
		for k := range mq.Values {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		ops := make([]quota.Op, 0, len(keys))
		for _, k := range keys {
			ops = append(ops, quota.Op{Key: k, Value: mq.Values[k]})
		}
		if err := quota.ValidateOps(e, ops); err != nil {
			return fmt.Errorf("data dir: client quota %s: %w", e, err)
		}
		qc = qc.Alter(e, ops)
	}
	c.quotas.cfg.Store(qc)
	for name, level := range m.Features {
		f, ok := lookupFeature(name)
		if name != transactionVersionFeature || !ok || level < f.min || level > f.max {
			return fmt.Errorf("data dir: feature %s at level %d: fakekafka keeps only transaction.version 0-2", name, level)
		}
		c.features.txn.Store(int32(level) + 1)
		c.features.epoch.Add(1)
	}
	c.restoreTokens(m.DelegationTokens)
	return nil
}

func aclFromMeta(ma storage.MetaACL) (authorizer.ACL, error) {
	rt, ok1 := authorizer.ParseResourceType(ma.ResourceType)
	pt, ok2 := authorizer.ParsePatternType(ma.Pattern)
	op, ok3 := authorizer.ParseOperation(ma.Operation)
	perm, ok4 := authorizer.ParsePermission(ma.Permission)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return authorizer.ACL{}, fmt.Errorf("unknown name among %s", strings.Join([]string{ma.ResourceType, ma.Pattern, ma.Operation, ma.Permission}, ", "))
	}
	a := authorizer.ACL{ResourceType: rt, Name: ma.Name, Pattern: pt, Principal: ma.Principal, Host: ma.Host, Operation: op, Permission: perm}
	return a, a.Validate()
}
