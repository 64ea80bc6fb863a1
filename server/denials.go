package server

// Denials and principals: each authorization the authorizer denies becomes
// an authorization_denied event, once per request, resource and operation
// (Kafka's authorizer logs each denied action of a request once, with a
// count of the references). The cluster keeps the latest few for the
// Security view, with the principals of the open connections.

import (
	"cmp"
	"slices"
	"sync"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recentDenials is how many denials Security keeps.
const recentDenials = 100

// denialKey is one denied action of the request being handled.
type denialKey struct {
	op   authorizer.Operation
	rt   authorizer.ResourceType
	name string
}

// denialLog is the newest denials, a ring guarded by mu.
type denialLog struct {
	mu     sync.Mutex
	recent []Event
	next   int
	total  uint64
}

// recordDenial emits the denial unless the request already had it. Only
// denied requests reach here: an allowed one allocates nothing.
func (cn *conn) recordDenial(op authorizer.Operation, rt authorizer.ResourceType, name, host string) {
	k := denialKey{op, rt, name}
	if slices.Contains(cn.denied, k) {
		return
	}
	cn.denied = append(cn.denied, k)
	c := cn.b.c
	e := newEvent(EventAuthorizationDenied)
	e.Broker, e.Principal, e.Host, e.API = cn.b.id, cn.principal, host, kmsg.NameForKey(cn.hdr.APIKey)
	e.Operation, e.ResourceType, e.PatternType, e.ResourceName = op.String(), rt.String(), authorizer.PatternLiteral.String(), name
	e = c.events.add(e, c.now)
	d := &c.denials
	d.mu.Lock()
	if len(d.recent) < recentDenials {
		d.recent = append(d.recent, e)
	} else {
		d.recent[d.next] = e
		d.next = (d.next + 1) % recentDenials
	}
	d.total++
	d.mu.Unlock()
}

// setPrincipal names the connection's principal, also for Security.
func (cn *conn) setPrincipal(p string) {
	cn.principal = p
	cn.shownPrincipal.Store(&p)
}

// Security returns who is connected (per broker, listener and principal)
// and the recent denials.
func (c *Cluster) Security() SecurityState {
	st := SecurityState{Authorizer: c.cfg.Authorizer, SSLPrincipalMappingRules: c.cfg.sslRules(),
		Principals: []ConnectedPrincipal{}, Denials: []Event{}}
	type key struct {
		broker    int32
		listener  string
		principal string
	}
	byKey := map[key]*ConnectedPrincipal{}
	for _, b := range c.brokers {
		b.mu.Lock()
		for cn := range b.conns {
			p := anonymousPrincipal
			if sp := cn.shownPrincipal.Load(); sp != nil {
				p = *sp
			}
			k := key{b.id, cn.bl.name, p}
			cp := byKey[k]
			if cp == nil {
				cp = &ConnectedPrincipal{Broker: b.id, Listener: cn.bl.name, SecurityProtocol: cn.bl.protocol, Principal: p, Hosts: []string{}}
				byKey[k] = cp
			}
			cp.Connections++
			if h := cn.host(); !slices.Contains(cp.Hosts, h) {
				cp.Hosts = append(cp.Hosts, h)
			}
		}
		b.mu.Unlock()
	}
	for _, cp := range byKey {
		slices.Sort(cp.Hosts)
		st.Principals = append(st.Principals, *cp)
	}
	slices.SortFunc(st.Principals, func(a, b ConnectedPrincipal) int {
		return cmp.Or(cmp.Compare(a.Broker, b.Broker), cmp.Compare(a.Listener, b.Listener), cmp.Compare(a.Principal, b.Principal))
	})
	d := &c.denials
	d.mu.Lock()
	st.Denials = append(st.Denials, d.recent[d.next:]...)
	st.Denials = append(st.Denials, d.recent[:d.next]...)
	st.DeniedTotal = d.total
	d.mu.Unlock()
	return st
}
