package replication

import "testing"

// replicateAll lets every online follower fetch until nothing changes.
func replicateAll(t *testing.T, p *Partition) {
	t.Helper()
	for range 5 {
		for _, r := range p.Replicas() {
			if r.Broker != p.Leader() && r.Online() {
				fetch(t, p, r.Broker, t0)
			}
		}
	}
}

// KIP-101 scenario 1: follower A restarts with a stale HW, then leader B
// dies before A fetches again. Truncating to the HW loses the committed m2;
// truncating by epoch keeps it.
func TestKIP101Scenario1(t *testing.T) {
	for _, c := range []struct {
		mode    TruncationMode
		wantLEO int64
	}{{TruncateToHW, 1}, {TruncateByEpoch, 2}} {
		// B = broker 1 leads, A = broker 2 follows.
		p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1, Truncation: c.mode}, t0)
		mustAppend(t, p, batch(1), 1) // m1 at 0
		fetch(t, p, 2, t0)
		fetch(t, p, 2, t0)
		mustAppend(t, p, batch(1), 1) // m2 at 1
		fetch(t, p, 2, t0)
		fetch(t, p, 2, t0) // leader learns A has m2: HW 2; A still has HW 1
		checkReplicas(t, p, map[int32]offsets{1: {2, 2}, 2: {2, 1}})
		p.CheckpointHW()

		p.Crash(2, false)
		p.Restart(2)
		crash(p, 1)
		if code := p.Elect(2, false, t0); code != 0 {
			t.Fatal(code)
		}
		if got := p.Replica(2).LEO(); got != c.wantLEO {
			t.Errorf("mode %d: new leader LEO %d, want %d", c.mode, got, c.wantLEO)
		}
	}
}

// KIP-101 scenario 2: both replicas lose power; B comes back with less and
// leads, writes m3 at offset 1; A returns. With HW truncation offset 1
// holds m2 on A and m3 on B forever; by epoch A truncates and converges.
func TestKIP101Scenario2(t *testing.T) {
	for _, mode := range []TruncationMode{TruncateToHW, TruncateByEpoch} {
		// A = broker 1 leads, B = broker 2 follows.
		p := NewPartition([]int32{1, 2}, Config{MinInsyncReplicas: 1, Truncation: mode}, t0)
		mustAppend(t, p, batch(1), 1) // m1
		replicateAll(t, p)
		p.Flush(1)
		p.Flush(2)
		mustAppend(t, p, batch(1), 1) // m2
		replicateAll(t, p)
		p.Flush(1) // only A's m2 reaches the disk
		p.CheckpointHW()
		checkReplicas(t, p, map[int32]offsets{1: {2, 2}, 2: {2, 2}})

		p.Crash(1, true)
		p.Crash(2, true)
		p.MakeLeaderless()
		if got := p.Replica(2).LEO(); got != 1 {
			t.Fatalf("B's LEO after power loss %d, want 1", got)
		}
		p.Restart(2)
		if code := p.Elect(2, false, t0); code != 0 {
			t.Fatal(code)
		}
		mustAppend(t, p, batch(1), 1) // m3 at offset 1, epoch 2
		p.Restart(1)
		replicateAll(t, p)

		a, b := p.Replica(1).Log().Batches(), p.Replica(2).Log().Batches()
		diverged := len(a) != len(b) || a[1] != b[1]
		if mode == TruncateToHW && !diverged {
			t.Error("HW truncation: logs converged, but KIP-101 says offset 1 diverges")
		}
		if mode == TruncateByEpoch && diverged {
			t.Errorf("epoch truncation: offset 1 has epoch %d on A and %d on B", a[1].Epoch, b[1].Epoch)
		}
	}
}

func TestPowerLossLosesEverythingPastTheRecoveryPoint(t *testing.T) {
	for _, c := range []struct {
		flushMessages int64
		wantLEO       int64
	}{{0, 0}, {1, 3}, {2, 2}} {
		p := NewPartition([]int32{1}, Config{FlushMessages: c.flushMessages}, t0)
		for range 3 {
			mustAppend(t, p, batch(1), 1)
		}
		p.CheckpointHW()
		p.Crash(1, true)
		p.Restart(1)
		if r := p.Replica(1); r.LEO() != c.wantLEO || r.HW() != c.wantLEO {
			t.Errorf("flush.messages %d: LEO %d HW %d after power loss, want %d", c.flushMessages, r.LEO(), r.HW(), c.wantLEO)
		}
	}
}

func TestRestartComesBackWithTheCheckpointedHW(t *testing.T) {
	p := newPartition(t, 1)
	mustAppend(t, p, batch(2), 1)
	replicateAll(t, p)
	p.CheckpointHW() // HW 2 everywhere
	mustAppend(t, p, batch(2), 1)
	replicateAll(t, p) // HW 4, not checkpointed
	p.Crash(3, false)
	p.Restart(3)
	checkReplicas(t, p, map[int32]offsets{3: {4, 2}})
	// A clean shutdown checkpoints the HW first.
	p.Shutdown(2)
	p.Restart(2)
	checkReplicas(t, p, map[int32]offsets{2: {4, 4}})
}
