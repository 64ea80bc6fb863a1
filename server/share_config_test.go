package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareSet sets group configs (name, value pairs) with
// IncrementalAlterConfigs on the GROUP resource, as an admin does.
func shareSet(t *testing.T, c *Cluster, group string, kv ...string) {
	t.Helper()
	var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
	for i := 0; i+1 < len(kv); i += 2 {
		ops = append(ops, groupSet(kv[i], kv[i+1]))
	}
	if code, msg := groupAlter(t, newClient(t, c), group, false, ops...); code != 0 {
		t.Fatalf("set %v: %v %s", kv, kerr.ErrorForCode(code), msg)
	}
}

func lockTimeout(r *kmsg.ShareFetchResponse) int32 { return r.AcquisitionLockTimeoutMillis }

// A changed share.record.lock.duration.ms applies from the next
// acquisition, as Kafka's SharePartition reads it when it schedules a
// lock: a record already held keeps the deadline it was acquired with.
func TestShareConfigLockDurationNextAcquisition(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	shareProduce(t, c, "q", 1)
	r := m.fetch("q", time.Second)
	wantAcquired(t, "0 at the default 30s", r, "0-0/1")
	if lockTimeout(r) != 30000 {
		t.Fatalf("lock timeout %d, want 30000", lockTimeout(r))
	}
	shareSet(t, c, "sg", "share.record.lock.duration.ms", "15000")
	shareProduce(t, c, "q", 1)
	r = m.fetch("q", time.Second)
	wantAcquired(t, "1 at 15s", r, "1-1/1")
	if lockTimeout(r) != 15000 {
		t.Fatalf("lock timeout %d, want 15000", lockTimeout(r))
	}
	// At 15s only 1's lock ran out: 0 still has 15s left.
	if err := c.AdvanceClock(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantAcquired(t, "at 15s", m.fetch("q", 10*time.Millisecond), "1-1/2")
	// At 30s 0 comes back; 1 (re-acquired at 15s, 15s lock) too.
	if err := c.AdvanceClock(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantAcquired(t, "at 30s", m.fetch("q", 10*time.Millisecond), "0-0/2", "1-1/3")
	// Deleting the config reverts to the broker's 30s for the next lock.
	if code, msg := groupAlter(t, newClient(t, c), "sg", false, groupDelete("share.record.lock.duration.ms")); code != 0 {
		t.Fatalf("delete: %v %s", kerr.ErrorForCode(code), msg)
	}
	if err := c.AdvanceClock(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	r = m.fetch("q", 10*time.Millisecond)
	wantAcquired(t, "at 45s", r, "0-0/3", "1-1/4")
	if lockTimeout(r) != 30000 {
		t.Fatalf("lock timeout %d, want 30000", lockTimeout(r))
	}
	if err := c.AdvanceClock(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantAcquired(t, "at 60s: still locked", m.fetch("q", 10*time.Millisecond))
}

// A changed share.delivery.count.limit applies at the next release: a
// record released at a count under the old limit but at the new one is
// archived, never delivered again.
func TestShareConfigDeliveryCountLimitNextRelease(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	shareProduce(t, c, "q", 2)
	wantAcquired(t, "first", m.fetch("q", time.Second), "0-1/1")
	wantAcquired(t, "released under the default 5", m.fetch("q", time.Second, ack{0, 1, []int8{2}}), "0-1/2")
	shareSet(t, c, "sg", "share.delivery.count.limit", "2")
	// 0 released at count 2 = the new limit: archived; 1 accepted.
	r := m.fetch("q", 10*time.Millisecond, ack{0, 0, []int8{2}}, ack{1, 1, []int8{1}})
	if ackCode(r) != 0 {
		t.Fatalf("ack: %v", kerr.ErrorForCode(ackCode(r)))
	}
	wantAcquired(t, "nothing left", r)
	gs, _ := c.Group("sg")
	if sp := gs.SharePartitions[0]; sp.StartOffset != 2 || len(sp.InFlight) != 0 {
		t.Fatalf("window start %d in-flight %v, want 2 and none", sp.StartOffset, sp.InFlight)
	}
}

// share.partition.max.record.locks caps the in-flight records from the
// next fetch on.
func TestShareConfigMaxRecordLocks(t *testing.T) {
	c, _ := newShareCluster(t)
	shareSet(t, c, "sg", "share.partition.max.record.locks", "100")
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	for range 3 {
		shareProduce(t, c, "q", 60)
	}
	wantAcquired(t, "first 100", m.fetch("q", time.Second), "0-99/1")
	wantAcquired(t, "at the cap", m.fetch("q", 10*time.Millisecond))
	shareSet(t, c, "sg", "share.partition.max.record.locks", "200")
	wantAcquired(t, "raised", m.fetch("q", time.Second), "100-179/1")
}

// share.heartbeat.interval.ms is answered on the next heartbeat and
// share.session.timeout.ms fences a silent member on the cluster clock.
func TestShareConfigHeartbeatAndSession(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	if hb := m.join("q"); hb.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("interval %d, want 5000", hb.HeartbeatIntervalMillis)
	}
	shareSet(t, c, "sg", "share.heartbeat.interval.ms", "7000", "share.session.timeout.ms", "50000")
	if hb := m.heartbeat(m.epoch); hb.ErrorCode != 0 || hb.HeartbeatIntervalMillis != 7000 {
		t.Fatalf("heartbeat: %v interval %d, want 7000", kerr.ErrorForCode(hb.ErrorCode), hb.HeartbeatIntervalMillis)
	}
	// The session runs 50s from that heartbeat: alive at 49s, gone at 50s.
	if err := c.AdvanceClock(49 * time.Second); err != nil {
		t.Fatal(err)
	}
	if gs, _ := c.Group("sg"); len(gs.Members) != 1 {
		t.Fatalf("at 49s: %d members, want 1", len(gs.Members))
	}
	if err := c.AdvanceClock(time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the member fenced at 50s", func() bool { gs, _ := c.Group("sg"); return len(gs.Members) == 0 })
	if hb := m.heartbeat(m.epoch); hb.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("fenced member's heartbeat: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(hb.ErrorCode))
	}
}

// ShareFetch checks no membership, as Kafka 4.4's (KafkaApis and
// SharePartitionManager look only at the share session): a member id the
// group does not know opens a session and acquires records.
func TestShareFetchUnknownMember(t *testing.T) {
	c, _ := newShareCluster(t)
	m := newShareMember(t, c, "sg", "m1")
	m.join("q")
	wantAcquired(t, "init", m.fetch("q", 10*time.Millisecond))
	shareProduce(t, c, "q", 2)
	stranger := newShareMember(t, c, "sg", "not-a-member")
	r := stranger.fetch("q", time.Second)
	wantAcquired(t, "a stranger's fetch", r, "0-1/1")
	if r.AcquisitionLockTimeoutMillis != 30000 {
		t.Fatalf("lock timeout %d", r.AcquisitionLockTimeoutMillis)
	}
	if r := stranger.fetch("q", 10*time.Millisecond, ack{0, 1, []int8{1}}); ackCode(r) != 0 {
		t.Fatalf("the stranger's ack: %v", kerr.ErrorForCode(ackCode(r)))
	}
	if gs, _ := c.Group("sg"); len(gs.Members) != 1 || gs.SharePartitions[0].StartOffset != 2 {
		t.Fatalf("group after the stranger: %d members, %+v", len(gs.Members), gs.SharePartitions[0])
	}
}
