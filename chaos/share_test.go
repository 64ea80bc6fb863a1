package chaos

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

var st0 = time.Unix(1_700_000_000, 0)

func rules(vs []ShareViolation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule+"@"+strconv.FormatInt(v.Offset, 10))
	}
	return out
}

func sd(seq uint64, off int64, count int16, member string, at time.Duration) ShareDelivery {
	return ShareDelivery{Group: "g", TP: TP{"t", 0}, Offset: off, DeliveryCount: count, Member: member, At: st0.Add(at), Seq: seq}
}

func sa(seq uint64, off int64, typ int8, member string) ShareAck {
	return ShareAck{Group: "g", TP: TP{"t", 0}, Offset: off, Type: typ, Member: member, At: st0, Seq: seq}
}

// onP1 moves a delivery to partition 1, so the rules of partition 0's
// cases do not see it.
func onP1(d ShareDelivery) ShareDelivery { d.TP.Partition = 1; return d }

func TestCheckShareClean(t *testing.T) {
	in := ShareInput{LockDuration: 30 * time.Second, DeliveryLimit: 5,
		Deliveries: []ShareDelivery{sd(1, 0, 1, "a", 0), sd(2, 1, 1, "a", 0), sd(5, 1, 2, "b", time.Second), sd(7, 2, 1, "b", 40*time.Second)},
		Acks:       []ShareAck{sa(3, 0, 1, "a"), sa(4, 1, 2, "a"), sa(6, 1, 1, "b"), sa(8, 2, 1, "b")},
	}
	if vs := CheckShare(in); len(vs) != 0 {
		t.Fatalf("clean run: %+v", vs)
	}
}

func TestCheckShareViolations(t *testing.T) {
	in := ShareInput{LockDuration: 30 * time.Second, DeliveryLimit: 5,
		Deliveries: []ShareDelivery{
			sd(1, 0, 1, "a", 0), sd(3, 0, 2, "b", time.Second), // 0 accepted at 2, delivered again (then held: no later delivery on 0)
			sd(4, 1, 2, "a", 0), sd(6, 1, 2, "a", time.Second), // 1 released at 5, same count again
			onP1(sd(7, 2, 1, "a", 0)), onP1(sd(8, 3, 1, "b", 31*time.Second)), // 2 never acked: 3 handed out past 2's lock first
			sd(9, 4, 3, "a", 0), sd(10, 4, 2, "a", time.Second), // the count went down
		},
		Acks: []ShareAck{sa(2, 0, 1, "a"), sa(5, 1, 2, "a")},
	}
	got := rules(CheckShare(in))
	want := []string{"accepted_redelivered@0", "delivery_count_backwards@1", "delivery_count_backwards@4", "lock_not_released@2"} // partition 0, then 1
	if !slices.Equal(got, want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	// At the delivery limit a held record is archived, not given back.
	in = ShareInput{LockDuration: 30 * time.Second, DeliveryLimit: 2,
		Deliveries: []ShareDelivery{sd(1, 2, 2, "a", 0), sd(2, 3, 1, "b", 31*time.Second)}}
	if vs := CheckShare(in); len(vs) != 0 {
		t.Fatalf("at the limit: %+v", vs)
	}
	// Acknowledged (released) before the later delivery: no lock rule.
	in = ShareInput{LockDuration: 30 * time.Second, DeliveryLimit: 5,
		Deliveries: []ShareDelivery{sd(1, 2, 1, "a", 0), sd(3, 3, 1, "b", 31*time.Second)},
		Acks:       []ShareAck{sa(2, 2, 3, "a")}}
	if vs := CheckShare(in); len(vs) != 0 {
		t.Fatalf("rejected in time: %+v", vs)
	}
}

// Check runs the share rules per group: a finding is a violation unless
// the run had an unclean election on __share_group_state or on the
// partition, or an unflushed power loss.
func TestCheckShareAllowed(t *testing.T) {
	share := []ShareInput{{LockDuration: 30 * time.Second, DeliveryLimit: 5,
		Deliveries: []ShareDelivery{sd(1, 0, 1, "a", 0), sd(3, 0, 2, "b", time.Second)},
		Acks:       []ShareAck{sa(2, 0, 1, "a")}}}
	for _, tc := range []struct {
		name      string
		decisions []Decision
		flushed   bool
		allowed   bool
	}{
		{"nothing unsafe", nil, false, false},
		{"clean election of the state", []Decision{{Kind: DecisionElection, TP: TP{"__share_group_state", 3}}}, false, false},
		{"unclean election of the state", []Decision{{Kind: DecisionElection, Unclean: true, TP: TP{"__share_group_state", 3}}}, false, true},
		{"unclean election of the partition", []Decision{{Kind: DecisionElection, Unclean: true, TP: TP{"t", 0}}}, false, true},
		{"unclean election elsewhere", []Decision{{Kind: DecisionElection, Unclean: true, TP: TP{"t", 1}}}, false, false},
		{"power loss", []Decision{{Kind: DecisionPowerLoss, Broker: 2}}, false, true},
		{"power loss, flushed", []Decision{{Kind: DecisionPowerLoss, Broker: 2}}, true, false},
	} {
		rep := Check(Input{Share: share, Decisions: tc.decisions, Flushed: tc.flushed})
		if len(rep.Share) != 1 || rep.Share[0].Rule != "accepted_redelivered" || rep.Share[0].Allowed != tc.allowed {
			t.Fatalf("%s: %+v", tc.name, rep.Share)
		}
		v := rep.Violations()
		if tc.allowed != (len(v) == 0) {
			t.Fatalf("%s: violations %v", tc.name, v)
		}
		if !tc.allowed && (v[0].Kind != "accepted_redelivered" || v[0].Group != "g" || v[0].Topic != "t" || v[0].Partition != 0) {
			t.Fatalf("%s: violation %+v", tc.name, v[0])
		}
	}
	if rep := Check(Input{}); rep.Share == nil || len(rep.Share) != 0 {
		t.Fatalf("no share groups: %#v", rep.Share)
	}
}
