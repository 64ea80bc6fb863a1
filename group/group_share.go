package group

// A share group's state on its shard: restoring it from the last record
// after a load, the members' session timers (share.session.timeout.ms
// from the group's config) and writing its record.

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// ShareGroup returns g's share-group state, rebuilding it from the last
// record after a coordinator load; members get fresh session timers.
// Callers hold g.Mu.
func (g *Group) ShareGroup() *ShareGroup {
	g.Ready()
	if g.Share != nil || g.ShareMeta == nil {
		return g.Share
	}
	var r ShareGroupRecord
	if err := json.Unmarshal(g.ShareMeta, &r); err != nil {
		g.s.host.Log().Warn("unreadable share group record", "group", g.ID, "error", err)
		return nil
	}
	sg := RestoreShareGroup(r)
	for _, id := range slices.Sorted(maps.Keys(sg.Members)) {
		g.TouchShareMember(sg.Members[id])
	}
	sg.TopicsSeen = sg.subscribedPartitions(g.s.host.Topics())
	sg.Persisted, _ = json.Marshal(sg.Record())
	g.Share = sg
	return sg
}

// IsShare says whether g is a share group. Callers hold g.Mu.
func (g *Group) IsShare() bool { return g.ShareGroup() != nil }

// PersistShare writes g's share-group state if it changed since the last
// write, and waits until it is committed and replayed. Callers hold
// g.WriteMu, not g.Mu. A group with no members stays (as Kafka keeps an
// empty share group) until it is deleted.
func (g *Group) PersistShare() int16 {
	return g.persistState(ShareKind, func() (any, *[]byte) {
		if g.Share == nil {
			return nil, nil
		}
		return g.Share.Record(), &g.Share.Persisted
	})
}

// persistState writes the record state gives (under g.Mu) as g's record
// of kind when its JSON differs from the last one written (*last), and
// waits until it is committed and replayed; a nil record writes nothing.
// Callers hold g.WriteMu, not g.Mu.
func (g *Group) persistState(kind string, state func() (any, *[]byte)) int16 {
	g.Mu.Lock()
	rec, last := state()
	if last == nil {
		g.Mu.Unlock()
		return 0
	}
	raw, _ := json.Marshal(rec)
	same := bytes.Equal(raw, *last)
	g.Mu.Unlock()
	if same {
		return 0
	}
	code := g.Write([]CoordinatorRecord{{Key: RecordKey{Kind: kind, Group: g.ID}, Value: rec}})
	if code == 0 {
		g.Mu.Lock()
		*last = raw
		g.Mu.Unlock()
	}
	return code
}

// RevertShare drops g's share state after a failed write; the next use
// restores it from the last committed record. Callers hold g.Mu.
func (g *Group) RevertShare() {
	if g.Share == nil {
		return
	}
	for _, m := range g.Share.Members {
		if m.Session != nil {
			m.Session.Stop()
		}
	}
	g.Share = nil
}

// DeleteShare writes the share group's tombstone (DeleteGroups). Callers
// hold g.WriteMu, not g.Mu.
func (g *Group) DeleteShare() int16 {
	code := g.Write([]CoordinatorRecord{{Key: RecordKey{Kind: ShareKind, Group: g.ID}}})
	if code == 0 {
		g.Mu.Lock()
		g.RevertShare()
		g.Mu.Unlock()
	}
	return code
}

// TouchShareMember restarts the member's session timer
// (share.session.timeout.ms); when it fires the member leaves and the new
// state is written. Callers hold g.Mu.
func (g *Group) TouchShareMember(m *ShareMember) {
	if m.Session != nil {
		m.Session.Stop()
	}
	h := g.s.host
	m.Session = g.after(h.GroupConfig(g.ID).ShareSessionTimeout, func() {
		if g.Share == nil || g.Share.Members[m.ID] != m {
			return
		}
		h.Log().Info("share group member session expired", "group", g.ID, "member", m.ID)
		evs := []Event{{Type: MemberExpired, Member: m.ID, Reason: "session timeout"}}
		h.EmitShare(g, m.ID, append(evs, g.Share.Remove(m, h.Topics())...))
		g.goLocked(func() {
			g.WriteMu.Lock()
			defer g.WriteMu.Unlock()
			if g.PersistShare() != 0 {
				g.Mu.Lock()
				g.RevertShare()
				g.Mu.Unlock()
			}
		})
	})
}
