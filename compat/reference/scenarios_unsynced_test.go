package reference

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Classic members that join and never sync nor heartbeat (JoinGroup v1-v3,
// no member id round trip, session and rebalance timeout 6 s): a join
// while the previous member is in the group waits for its session to end
// and moves the generation once; once the previous member expired alone,
// the group is Empty a generation on and the next join moves it again.
// The request corpus's version sweep met both timings, one per cluster.
func init() {
	scenarios = append(scenarios, scenario{
		name: "classic-unsynced-members",
		rows: []string{
			"JoinGroup v1, then v2 at once, then (the v2 member expired, the group Empty) v3; none syncs (session 6 s)",
		},
		run: func(r *run) []string {
			const group = "unsynced"
			var coord int32
			// Right after start Kafka's coordinator may not have loaded
			// its __consumer_offsets partition yet.
			r.waitFor("a ready coordinator", func() bool {
				coord = r.coordinator(group)
				req := at(5, kmsg.NewPtrDescribeGroupsRequest())
				req.Groups = []string{group}
				return r.do(coord, req).(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode == 0
			})
			join := func(v int16) string {
				req := at(v, kmsg.NewPtrJoinGroupRequest())
				req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = group, 6000, 6000, "consumer"
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "range", []byte{0, 1}
				req.Protocols = append(req.Protocols, p)
				start := time.Now()
				resp := r.do(coord, req).(*kmsg.JoinGroupResponse)
				waited := "at once"
				if time.Since(start) > 4*time.Second {
					waited = "after the previous member's session"
				}
				return fmt.Sprintf("v%d: %s generation %d, %d members, %s", v, errName(resp.ErrorCode), resp.Generation, len(resp.Members), waited)
			}
			state := func() string {
				req := at(5, kmsg.NewPtrDescribeGroupsRequest())
				req.Groups = []string{group}
				g := r.do(coord, req).(*kmsg.DescribeGroupsResponse).Groups[0]
				if g.ErrorCode != 0 {
					return errName(g.ErrorCode)
				}
				return fmt.Sprintf("%s, %d members", g.State, len(g.Members))
			}
			var out []string
			out = append(out, join(1), join(2))
			last := ""
			if !r.poll(60*time.Second, func() bool { last = state(); return last == "Empty, 0 members" }) {
				r.Fatalf("%s: timed out waiting for the v2 member's expiry (%s so far; the group: %s)", r.tg.Name(), strings.Join(out, "; "), last)
			}
			out = append(out, "then Empty", join(3))
			return []string{strings.Join(out, "; ")}
		},
	})
}
