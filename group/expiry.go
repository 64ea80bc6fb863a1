package group

// Committed-offset expiry (offsets.retention.minutes, KIP-211), as Kafka
// 4.x's group coordinator decides it (GroupMetadataManager
// .cleanupGroupMetadata, OffsetMetadataManager.cleanupExpiredOffsets, each
// group's offsetExpirationCondition and isSubscribedToTopic):
//
//   - A classic group with a protocol type that is Empty: every offset
//     expires once the retention has passed since the group became Empty
//     (its currentStateTimestamp), or since the offset's commit when that
//     time is unknown.
//   - A classic "consumer" group that is Stable with known subscriptions,
//     and a KIP-848 group: offsets of topics no member subscribes to
//     expire by their commit time; subscribed topics keep theirs.
//   - A group without a protocol type (simple commits, generation -1):
//     every offset expires by its commit time.
//   - A classic group in any other state: nothing expires.
//
// An offset with an explicit expire timestamp (OffsetCommit v2-v4 with a
// retention_time_ms) expires at that instant instead. A partition a
// transaction still holds a pending offset for never expires. When every
// offset expired and no transaction has pending offsets, an Empty group is
// deleted.

import (
	"regexp"
	"slices"
	"time"
)

// Expiry is how a group's offsets expire now (Kafka's
// OffsetExpirationCondition with the group's isSubscribedToTopic).
type Expiry struct {
	// EmptySince is the base of every offset when set (the time the
	// group became Empty); otherwise each offset's commit time is.
	EmptySince time.Time
	// Subscribed says whether a topic is subscribed: its offsets are
	// kept. Nil: no topic is.
	Subscribed func(topic string) bool
}

// ClassicExpiry is a classic group's condition; emptySince is when it
// became Empty, zero when unknown. ok is false when no offset may expire.
func ClassicExpiry(g *Classic, emptySince time.Time) (e Expiry, ok bool) {
	switch {
	case g.ProtocolType == "":
		return Expiry{}, true
	case g.State == Empty:
		return Expiry{EmptySince: emptySince}, true
	case g.ProtocolType == "consumer" && g.State == Stable:
		topics := map[string]bool{}
		for _, m := range g.Members {
			ts, ok := Subscription(m.MetadataFor(g.Protocol))
			if !ok {
				return Expiry{}, false // subscriptions unknown
			}
			for _, t := range ts {
				topics[t] = true
			}
		}
		return Expiry{Subscribed: func(t string) bool { return topics[t] }}, true
	}
	return Expiry{}, false
}

// ConsumerExpiry is a KIP-848 group's condition: offsets expire by commit
// time, except those of topics a member subscribes to (by name or by its
// regular expression).
func ConsumerExpiry(cg *ConsumerGroup) Expiry {
	topics := map[string]bool{}
	var res []*regexp.Regexp
	for _, m := range cg.Members {
		for _, t := range m.Subscribed {
			topics[t] = true
		}
		if m.Regex != "" {
			if re, err := regexp.Compile("^(?:" + m.Regex + ")$"); err == nil {
				res = append(res, re)
			}
		}
	}
	return Expiry{Subscribed: func(t string) bool {
		return topics[t] || slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(t) })
	}}
}

// Expired returns the partitions whose offsets expired at now under e
// and retention, sorted, and whether no offset is left afterwards and no
// transaction holds pending offsets (then an Empty group may be deleted).
func (o *Offsets) Expired(e Expiry, now time.Time, retention time.Duration) (expired []TopicPartition, all bool) {
	all = len(o.Pending) == 0
	nowMs := now.UnixMilli()
	for tp, off := range o.Committed {
		if e.Subscribed != nil && e.Subscribed(tp.Topic) {
			all = false
			continue
		}
		if off.expired(e, nowMs, retention) && !o.Unstable(tp) {
			expired = append(expired, tp)
		} else {
			all = false
		}
	}
	slices.SortFunc(expired, func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	return expired, all
}

// expired is Kafka's OffsetExpirationConditionImpl.isOffsetExpired.
func (off Offset) expired(e Expiry, nowMs int64, retention time.Duration) bool {
	if off.ExpireTimestamp > 0 {
		return nowMs >= off.ExpireTimestamp
	}
	base := off.Timestamp
	if !e.EmptySince.IsZero() {
		base = e.EmptySince.UnixMilli()
	}
	return nowMs-base >= retention.Milliseconds()
}
