package chaos

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Action is one step of a schedule. Which partition or replica a
// partition fault hits is chosen when it runs, from Pick and the
// partitions that exist then, so the list itself depends only on the seed,
// the spec and the broker count.
type Action struct {
	// Seq numbers the actions of a schedule from 1, in time order.
	Seq int
	// At is the time from the start of the run.
	At   time.Duration
	Kind Kind
	// Broker is the target of a broker fault or its undo; for a fault
	// rule, the broker it applies to (0: every broker).
	Broker int32
	// Pick chooses the partition (and replica) of a partition fault.
	Pick uint32
	// API, Error, Delay and Count shape a fault rule.
	API   string
	Error string
	Delay time.Duration
	Count int
	// Hold is how long the fault lasts before its undo action.
	Hold time.Duration
	// Of is, for an undo action, the Seq of the fault it ends.
	Of int
}

// String is the action as events and logs show it.
func (a Action) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d at %s: %s", a.Seq, a.At, a.Kind)
	if a.Broker > 0 {
		fmt.Fprintf(&b, " broker %d", a.Broker)
	}
	if a.Pick > 0 && !a.Kind.brokerKind() && !a.Kind.ruleKind() {
		fmt.Fprintf(&b, " pick %d", a.Pick)
	}
	if a.API != "" {
		fmt.Fprintf(&b, " %s", a.API)
	}
	if a.Error != "" {
		fmt.Fprintf(&b, " %s", a.Error)
	}
	if a.Delay > 0 {
		fmt.Fprintf(&b, " delay %s", a.Delay)
	}
	if a.Count > 0 {
		fmt.Fprintf(&b, " count %d", a.Count)
	}
	if a.Hold > 0 {
		fmt.Fprintf(&b, " for %s", a.Hold)
	}
	if a.Of > 0 {
		fmt.Fprintf(&b, " (ends #%d)", a.Of)
	}
	return b.String()
}

type actionJSON struct {
	Seq     int    `json:"seq,omitempty"`
	AtMs    int64  `json:"at_ms"`
	Kind    Kind   `json:"kind"`
	Broker  int32  `json:"broker,omitempty"`
	Pick    uint32 `json:"pick,omitempty"`
	API     string `json:"api,omitempty"`
	Error   string `json:"error,omitempty"`
	DelayMs int64  `json:"delay_ms,omitempty"`
	Count   int    `json:"count,omitempty"`
	HoldMs  int64  `json:"hold_ms,omitempty"`
	Of      int    `json:"of,omitempty"`
}

// MarshalJSON writes times as milliseconds.
func (a Action) MarshalJSON() ([]byte, error) {
	return json.Marshal(actionJSON{a.Seq, a.At.Milliseconds(), a.Kind, a.Broker, a.Pick, a.API, a.Error,
		a.Delay.Milliseconds(), a.Count, a.Hold.Milliseconds(), a.Of})
}

// UnmarshalJSON reads the form MarshalJSON writes, refusing unknown keys.
func (a *Action) UnmarshalJSON(b []byte) error {
	var j actionJSON
	if err := strictJSON(b, &j); err != nil {
		return err
	}
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	*a = Action{j.Seq, ms(j.AtMs), j.Kind, j.Broker, j.Pick, j.API, j.Error, ms(j.DelayMs), j.Count, ms(j.HoldMs), j.Of}
	return nil
}

// Topology is what a schedule needs to know of the cluster.
type Topology struct {
	Brokers int
	// ReplicationFactor and MinInsync are the defaults new topics get;
	// with Spec.KeepMinISR they cap how many replicas may be out at once.
	ReplicationFactor int
	MinInsync         int
}

// Schedule draws the actions of a run from seed. s must be resolved
// (Spec.Resolve). The same seed, spec and topology always give the same
// list. Every fault with a hold is followed by its undo, no later than
// the end of the run.
func Schedule(seed uint64, s Spec, topo Topology) []Action {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	maxDown := s.MaxDown
	if s.KeepMinISR && topo.ReplicationFactor > 0 {
		maxDown = min(maxDown, topo.ReplicationFactor-max(topo.MinInsync, 1))
	}
	maxDown = min(maxDown, topo.Brokers-1)

	var faults []Action
	if s.Actions != nil {
		faults = slices.Clone(s.Actions)
		slices.SortStableFunc(faults, func(a, b Action) int { return int(a.At - b.At) })
	} else {
		faults = draw(rng, s, topo, maxDown)
	}
	return withUndos(faults, s.Duration)
}

// draw picks faults at random times, about Interval apart, keeping at most
// maxDown impairing faults active at once.
func draw(rng *rand.Rand, s Spec, topo Topology, maxDown int) []Action {
	var kinds []Kind
	total := 0
	for _, k := range faultKinds {
		if w := s.Weights[k]; w > 0 && (k != UncleanElect || s.AllowUnclean) {
			kinds = append(kinds, k)
			total += w
		}
	}
	if total == 0 {
		return nil
	}
	type active struct {
		end    time.Duration
		broker int32
	}
	var down []active
	var out []Action
	t := time.Duration(0)
	for {
		t += time.Duration(float64(s.Interval) * (0.5 + rng.Float64())).Round(time.Millisecond)
		if t >= s.Duration {
			return out
		}
		n := rng.IntN(total)
		k := kinds[0]
		for _, kk := range kinds {
			if n < s.Weights[kk] {
				k = kk
				break
			}
			n -= s.Weights[kk]
		}
		hold := time.Duration(float64(s.Hold) * (0.5 + rng.Float64())).Round(time.Millisecond)
		pick := rng.Uint32()
		a := Action{At: t, Kind: k, Pick: pick}
		down = slices.DeleteFunc(down, func(d active) bool { return d.end <= t })
		if k.impairs() {
			if len(down) >= maxDown {
				continue // the constraint skips this slot; the draws above keep the sequence stable
			}
			a.Hold = min(hold, s.Duration-t)
		}
		switch {
		case k.brokerKind():
			var free []int32
			for id := int32(1); id <= int32(topo.Brokers); id++ {
				if !slices.ContainsFunc(down, func(d active) bool { return d.broker == id }) {
					free = append(free, id)
				}
			}
			a.Broker = free[int(pick)%len(free)]
		case k.ruleKind():
			a.Hold = min(hold, s.Duration-t)
			a.API = s.APIs[int(pick)%len(s.APIs)]
			switch k {
			case Error:
				a.Error = s.Errors[int(pick>>8)%len(s.Errors)]
				a.Count = 1 + int(pick>>16)%5
			case Latency:
				a.Delay = s.Latency
			case Drop, DropAfter:
				a.Count = 1 + int(pick>>16)%3
			}
		}
		if k.impairs() {
			down = append(down, active{end: t + a.Hold, broker: a.Broker})
		}
		out = append(out, a)
	}
}

// withUndos adds each fault's undo at At+Hold (at the latest the end of
// the run), sorts by time (equal times keep the order they were added in)
// and numbers the actions.
func withUndos(faults []Action, end time.Duration) []Action {
	type entry struct {
		a     Action
		fault int // index in faults of the fault an undo ends, or -1
	}
	var all []entry
	for i, f := range faults {
		all = append(all, entry{f, -1})
		if u := f.Kind.Undo(); u != "" {
			at := f.At + f.Hold
			if f.Hold == 0 || at > end {
				at = max(end, f.At)
			}
			all = append(all, entry{Action{At: at, Kind: u, Broker: f.Broker}, i})
		}
	}
	slices.SortStableFunc(all, func(x, y entry) int { return int(x.a.At - y.a.At) })
	seqOf := make([]int, len(faults))
	fi := 0
	for i := range all {
		all[i].a.Seq = i + 1
		if all[i].fault < 0 {
			seqOf[fi] = i + 1
			fi++
		}
	}
	out := make([]Action, len(all))
	for i, e := range all {
		if e.fault >= 0 {
			e.a.Of = seqOf[e.fault]
		}
		out[i] = e.a
	}
	return out
}
