package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const retention = 7 * 24 * time.Hour

var t0 = time.UnixMilli(1_000_000_000)

// ms is t0 plus d, in milliseconds (a commit timestamp).
func ms(d time.Duration) int64 { return t0.Add(d).UnixMilli() }

// expiredAt runs the expiry rules at t0+at and lists the expired
// partitions as topic-partition, with all.
func expiredAt(o *Offsets, e Expiry, at time.Duration) string {
	exp, all := o.Expired(e, t0.Add(at), retention)
	s := fmt.Sprint(exp)
	if all {
		s += " all"
	}
	return s
}

func subscription(topics ...string) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Topics = topics
	return md.AppendTo(nil)
}

// classicGroup is a classic group in state with members subscribed to
// topics (one member per list).
func classicGroup(protocolType, state string, subs ...[]string) *Classic {
	g := &Classic{ProtocolType: protocolType, Protocol: "range", State: state, Members: map[string]*Member{}}
	for i, ts := range subs {
		id := fmt.Sprintf("m%d", i)
		g.Members[id] = &Member{ID: id, Protocols: []Protocol{{"range", subscription(ts...)}}}
	}
	return g
}

// A simple group (no protocol type) expires each offset by its commit
// time: at commit + retention exactly, not a millisecond before.
func TestExpirySimpleGroupByCommitTime(t *testing.T) {
	o := NewOffsets()
	o.Commit(TopicPartition{"a", 0}, Offset{Offset: 1, Timestamp: ms(0)})
	o.Commit(TopicPartition{"a", 1}, Offset{Offset: 2, Timestamp: ms(time.Hour)})
	e, ok := ClassicExpiry(classicGroup("", Empty), time.Time{})
	if !ok {
		t.Fatal("a simple group's offsets must expire")
	}
	for _, c := range []struct {
		at   time.Duration
		want string
	}{
		{retention - time.Millisecond, "[]"},
		{retention, "[{a 0}]"},
		{retention + time.Hour - time.Millisecond, "[{a 0}]"},
		{retention + time.Hour, "[{a 0} {a 1}] all"},
	} {
		if got := expiredAt(&o, e, c.at); got != c.want {
			t.Errorf("at t0+%v: expired %s, want %s", c.at, got, c.want)
		}
	}
}

// An Empty consumer group counts from when it became Empty, not from the
// commits: an offset committed long ago is kept until retention after
// the group emptied; without that time the commit time counts.
func TestExpiryEmptyGroupSinceEmpty(t *testing.T) {
	o := NewOffsets()
	o.Commit(TopicPartition{"a", 0}, Offset{Offset: 1, Timestamp: ms(0)})
	o.Commit(TopicPartition{"b", 0}, Offset{Offset: 1, Timestamp: ms(2 * time.Hour)})
	emptied := t0.Add(3 * time.Hour)
	e, ok := ClassicExpiry(classicGroup("consumer", Empty), emptied)
	if !ok {
		t.Fatal("an Empty group's offsets must expire")
	}
	if got := expiredAt(&o, e, 3*time.Hour+retention-time.Millisecond); got != "[]" {
		t.Errorf("one ms before retention after emptying: %s", got)
	}
	if got := expiredAt(&o, e, 3*time.Hour+retention); got != "[{a 0} {b 0}] all" {
		t.Errorf("retention after emptying: %s", got)
	}
	e, _ = ClassicExpiry(classicGroup("consumer", Empty), time.Time{})
	if got := expiredAt(&o, e, retention); got != "[{a 0}]" {
		t.Errorf("empty-since unknown, commit time counts: %s", got)
	}
}

// A Stable consumer group keeps the offsets of subscribed topics forever
// and expires the others by commit time; in any other state, or with a
// subscription it cannot read, nothing expires.
func TestExpiryStableGroupKeepsSubscribed(t *testing.T) {
	o := NewOffsets()
	o.Commit(TopicPartition{"a", 0}, Offset{Offset: 1, Timestamp: ms(0)})
	o.Commit(TopicPartition{"old", 0}, Offset{Offset: 1, Timestamp: ms(0)})
	e, ok := ClassicExpiry(classicGroup("consumer", Stable, []string{"a"}), time.Time{})
	if !ok {
		t.Fatal("a Stable consumer group expires unsubscribed offsets")
	}
	if got := expiredAt(&o, e, 100*retention); got != "[{old 0}]" {
		t.Errorf("stable: %s", got)
	}
	for _, g := range []*Classic{
		classicGroup("consumer", PreparingRebalance, []string{"a"}),
		classicGroup("consumer", CompletingRebalance, []string{"a"}),
		classicGroup("connect", Stable, []string{"a"}),
	} {
		if _, ok := ClassicExpiry(g, time.Time{}); ok {
			t.Errorf("%s %s: offsets must not expire", g.ProtocolType, g.State)
		}
	}
	bad := classicGroup("consumer", Stable)
	bad.Members["x"] = &Member{ID: "x", Protocols: []Protocol{{"range", []byte{0xff}}}}
	if _, ok := ClassicExpiry(bad, time.Time{}); ok {
		t.Error("unreadable subscription: offsets must not expire")
	}
}

// A KIP-848 group expires by commit time the offsets of topics no member
// subscribes to, by name or regular expression.
func TestExpiryConsumerGroup(t *testing.T) {
	o := NewOffsets()
	for _, topic := range []string{"a", "logs-1", "z"} {
		o.Commit(TopicPartition{topic, 0}, Offset{Offset: 1, Timestamp: ms(0)})
	}
	cg := NewConsumerGroup()
	cg.Members["m"] = &ConsumerMember{ID: "m", Subscribed: []string{"a"}}
	cg.Members["r"] = &ConsumerMember{ID: "r", Regex: "logs-.*"}
	e := ConsumerExpiry(cg)
	if got := expiredAt(&o, e, retention-time.Millisecond); got != "[]" {
		t.Errorf("before retention: %s", got)
	}
	if got := expiredAt(&o, e, retention); got != "[{z 0}]" {
		t.Errorf("at retention: %s", got)
	}
	if got := expiredAt(&o, ConsumerExpiry(NewConsumerGroup()), retention); got != "[{a 0} {logs-1 0} {z 0}] all" {
		t.Errorf("empty KIP-848 group: %s", got)
	}
}

// A partition a transaction holds a pending offset for never expires, and
// while a transaction has pending offsets the group is not all expired.
func TestExpiryPendingTransactionalOffsetsKept(t *testing.T) {
	o := NewOffsets()
	o.Commit(TopicPartition{"a", 0}, Offset{Offset: 1, Timestamp: ms(0)})
	o.Commit(TopicPartition{"a", 1}, Offset{Offset: 1, Timestamp: ms(0)})
	o.AddPending(7, TopicPartition{"a", 1}, Offset{Offset: 9, Timestamp: ms(0)})
	if got := expiredAt(&o, Expiry{}, retention); got != "[{a 0}]" {
		t.Errorf("with a pending offset: %s", got)
	}
	o.AddPending(8, TopicPartition{"b", 0}, Offset{Offset: 9})
	o.CompleteTxn(7, false, nil)
	if got := expiredAt(&o, Expiry{}, retention); got != "[{a 0} {a 1}]" {
		t.Errorf("another transaction open: %s", got)
	}
	o.CompleteTxn(8, false, nil)
	if got := expiredAt(&o, Expiry{}, retention); got != "[{a 0} {a 1}] all" {
		t.Errorf("no transaction open: %s", got)
	}
}

// An offset committed with an explicit retention (OffsetCommit v2-v4)
// expires at its expire timestamp, whatever the group.
func TestExpiryExplicitExpireTimestamp(t *testing.T) {
	o := NewOffsets()
	o.Commit(TopicPartition{"a", 0}, Offset{Offset: 1, Timestamp: ms(0), ExpireTimestamp: ms(time.Hour)})
	e, _ := ClassicExpiry(classicGroup("consumer", Empty), t0.Add(100*retention))
	if got := expiredAt(&o, e, time.Hour-time.Millisecond); got != "[]" {
		t.Errorf("before its expire timestamp: %s", got)
	}
	if got := expiredAt(&o, e, time.Hour); got != "[{a 0}] all" {
		t.Errorf("at its expire timestamp: %s", got)
	}
}
