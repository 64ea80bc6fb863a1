package server

// A group's classic membership (package group's Classic) on this
// coordinator: restoring it from the metadata record after a load, its
// timers bound to the shard's load, the goroutines that write its metadata
// and stop its timers when the cluster closes. The request handlers are
// join_group.go, sync_group.go, heartbeat.go and leave_group.go.
//
// Timers (sessions, the rebalance, the pending sync) are the runtime's
// AfterFunc callbacks, bound to the shard's load, that take g.mu. A watcher
// goroutine per group stops them when the cluster closes, and a callback
// that finds its group replaced (deleted, or the shard reloaded under a new
// leader) shuts the stale copy down.

import (
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/clock"
	grp "github.com/fakekafka/fakekafka/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ready initialises the membership on first use after a load, restoring
// it from the last group metadata record. Callers hold g.mu.
func (g *group) ready() {
	if g.Members != nil {
		return
	}
	c := g.s.c
	g.done = make(chan struct{})
	if !c.goTracked(g.watch) {
		g.Shut = true
	}
	var md *grp.Meta
	if g.meta != nil {
		md = new(grp.Meta)
		if err := json.Unmarshal(g.meta, md); err != nil {
			c.log.Warn("unreadable group metadata in "+offsetsTopic, "group", g.id, "error", err)
			md = nil
		}
	}
	g.Restore(md)
}

// goTracked runs f on a goroutine that Close waits for, unless the cluster
// is closing.
func (c *Cluster) goTracked(f func()) bool {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	select {
	case <-c.closing:
		return false
	default:
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// watch stops the group's timers when the cluster closes.
func (g *group) watch() {
	select {
	case <-g.s.c.closing:
		g.mu.Lock()
		g.shutdown(kerr.CoordinatorNotAvailable.Code)
		g.mu.Unlock()
	case <-g.done:
	}
}

// goLocked runs f on a tracked goroutine. While the group is not shut its
// watcher is running, so the cluster's WaitGroup is above zero and may
// grow. Callers hold g.mu.
func (g *group) goLocked(f func()) {
	if g.Shut {
		return
	}
	c := g.s.c
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// shutdown stops every timer, answers every waiting request with code and
// ends the watcher. Callers hold g.mu.
func (g *group) shutdown(code int16) {
	if g.Shutdown(code) && g.done != nil {
		close(g.done)
	}
}

// after runs f under g.mu after d, unless the group shut down or is no
// longer the coordinator's copy by then: the timer is bound to the load
// of the group's shard, and a stale copy shuts down instead. Callers hold
// g.mu.
func (g *group) after(d time.Duration, f func()) *clock.Timer {
	if g.Shut {
		return nil
	}
	sh := g.s.shard()
	if sh == nil {
		return nil
	}
	return sh.AfterFunc(g.s.at, d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		switch {
		case g.Shut:
		case !g.s.holds(g):
			g.stopStale()
		default:
			f()
		}
	}, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.stopStale()
	})
}

// stopStale shuts down a copy of the group its coordinator no longer
// holds. Callers hold g.mu.
func (g *group) stopStale() {
	if !g.Shut {
		g.s.c.log.Info("group moved; stopping the stale copy", "group", g.id, "broker", g.s.at.Leader)
		g.shutdown(kerr.NotCoordinator.Code)
	}
}

// current says whether g is still the group as its coordinator holds it:
// the shard was not reloaded, its partition's leadership did not move and
// the group was not replaced.
func (g *group) current() bool {
	sh := g.s.shard()
	return sh != nil && g.s.holds(g) && sh.Current(g.s.at)
}

// hasClassicMembers reports whether the classic protocol has members in g.
// Callers hold g.mu.
func (g *group) hasClassicMembers() bool {
	g.ready()
	return g.HasMembers()
}

// consumerProtocol returns g's KIP-848 state when g is a KIP-848 group:
// it has that state and no classic members or metadata. Callers hold g.mu.
func (g *group) consumerProtocol() *consumerGroup {
	g.ready()
	cg := g.s.c.consumerGroupOf(g)
	if cg == nil || len(g.Members) > 0 || len(cg.Members) == 0 && g.meta != nil {
		return nil
	}
	return cg
}

// classicHost is what package group's classic protocol needs of the
// group's coordinator. Its calls come with g.mu held.
type classicHost struct{ g *group }

func (h classicHost) After(d time.Duration, f func()) *clock.Timer { return h.g.after(d, f) }

func (h classicHost) Emit(ev grp.Event) {
	h.g.s.c.emit(groupEventType(ev.Type), func(e *Event) {
		e.Group, e.Member, e.Reason, e.Detail, e.Generation = h.g.id, ev.Member, ev.Reason, ev.Detail, ev.Epoch
	})
}

func (h classicHost) PersistAsync(snap grp.MetaSnapshot) {
	g := h.g
	g.goLocked(func() {
		if code := g.storeMeta(snap); code != 0 {
			g.s.c.log.Warn("writing group metadata failed", "group", g.id, "error", errorName(code))
		}
	})
}

func (h classicHost) ConsumerMembers() int {
	if cg := h.g.s.c.consumerGroupOf(h.g); cg != nil {
		return len(cg.Members)
	}
	return 0
}

func (h classicHost) Now() time.Time { return h.g.s.c.now() }
func (h classicHost) InitialRebalanceDelay() time.Duration {
	return h.g.s.c.cfg.GroupInitialRebalanceDelay
}
func (h classicHost) Log() *slog.Logger { return h.g.s.c.log }

// groupEventType is the cluster's event type of a group change.
func groupEventType(t grp.EventType) EventType {
	switch t {
	case grp.MemberJoined:
		return EventGroupMemberJoined
	case grp.MemberLeft:
		return EventGroupMemberLeft
	case grp.MemberExpired:
		return EventGroupMemberExpired
	case grp.RebalanceStarted:
		return EventGroupRebalanceStarted
	}
	return EventGroupRebalanceCompleted
}

// clientHost is how Kafka shows a member's address: "/" and the IP.
func (cn *conn) clientHost() string {
	host := cn.nc.RemoteAddr().String()
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = strings.Trim(host[:i], "[]")
	}
	return "/" + host
}

// checkCommit is package group's CheckCommit on the restored membership.
// Callers hold g.mu.
func (g *group) checkCommit(memberID string, generation int32, instanceID *string) int16 {
	g.ready()
	return g.CheckCommit(memberID, generation, instanceID)
}
