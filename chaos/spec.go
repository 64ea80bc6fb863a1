// Package chaos holds the rules of fakekafka's chaos mode, with no sockets,
// goroutines or clocks: Schedule turns a seed and a Spec into a list of
// timed fault actions (the same seed and Spec always give the same list),
// and Check turns what the cluster recorded during a run (acknowledged
// writes, served fetches, the final logs, elections, group commits) into a
// Report that says what was lost, duplicated or read and then lost, and
// whether Kafka's guarantees allowed it. Package server drives both.
package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fakekafka/fakekafka/api"
)

// Kind names a fault action. The names are part of the spec format and
// the HTTP contract.
type Kind string

// The actions a schedule can hold. The first group are faults; the second
// undo a fault after its Hold.
const (
	Crash        Kind = "crash"         // stop Broker without a controlled shutdown
	Stop         Kind = "stop"          // controlled shutdown of Broker
	PowerLoss    Kind = "powerloss"     // crash Broker and lose its unflushed records
	Isolate      Kind = "isolate"       // cut Broker off from the other brokers (zombie leader)
	Pause        Kind = "pause"         // a follower of a partition stops fetching
	ShrinkISR    Kind = "shrink_isr"    // drop a follower from a partition's ISR
	Elect        Kind = "elect"         // clean election of another replica (fails if it is out of the ISR)
	UncleanElect Kind = "unclean_elect" // unclean election of another live replica
	Coordinator  Kind = "coordinator"   // move a __consumer_offsets partition's leader (group coordinator)
	Error        Kind = "error"         // requests of API fail with Error
	Latency      Kind = "latency"       // requests of API wait Delay
	Drop         Kind = "drop"          // connections sending API close before the work
	DropAfter    Kind = "drop_after"    // connections sending API close after the work (lost acks)

	Restart     Kind = "restart"      // start Broker again
	Heal        Kind = "heal"         // reconnect an isolated Broker
	Resume      Kind = "resume"       // the paused follower fetches again
	RemoveFault Kind = "remove_fault" // remove the rule an error/latency/drop action added
)

// faultKinds are the kinds a spec may weigh, in a fixed order so that
// drawing among them is deterministic.
var faultKinds = []Kind{Crash, Stop, PowerLoss, Isolate, Pause, ShrinkISR, Elect, UncleanElect, Coordinator, Error, Latency, Drop, DropAfter}

// impairs says whether k takes a broker or replica out of service for its
// hold, which counts against Spec.MaxDown.
func (k Kind) impairs() bool {
	switch k {
	case Crash, Stop, PowerLoss, Isolate, Pause, ShrinkISR:
		return true
	}
	return false
}

// brokerKind says whether k targets a whole broker.
func (k Kind) brokerKind() bool { return k == Crash || k == Stop || k == PowerLoss || k == Isolate }

// ruleKind says whether k adds a fault rule.
func (k Kind) ruleKind() bool { return k == Error || k == Latency || k == Drop || k == DropAfter }

// Undo is the action that ends a fault of kind k after its hold, or "".
func (k Kind) Undo() Kind {
	switch {
	case k == Crash || k == Stop || k == PowerLoss:
		return Restart
	case k == Isolate:
		return Heal
	case k == Pause:
		return Resume
	case k.ruleKind():
		return RemoveFault
	}
	return ""
}

// Spec says which faults a chaos run injects, how often and under which
// constraints. The zero value with a Preset is complete.
type Spec struct {
	// Preset fills the fields left zero: "gentle", "rough" or "network".
	Preset string
	// Seed makes the schedule; 0 draws one at start (the report and the
	// first event say which).
	Seed uint64
	// Duration is how long the schedule runs. Default 60 s.
	Duration time.Duration
	// Interval is the mean time between two faults. Default 2 s.
	Interval time.Duration
	// Hold is how long a fault lasts before its undo (restart, heal,
	// resume, rule removal). Default Interval.
	Hold time.Duration
	// Weights gives each fault kind's relative frequency; kinds left out
	// never happen.
	Weights map[Kind]int
	// Actions is a fixed schedule used instead of drawing one: each
	// action's At, and its Hold for an automatic undo.
	Actions []Action
	// MaxDown caps the brokers and replicas out of service at once
	// (crashed, stopped, isolated, paused, dropped from the ISR). Default 1.
	MaxDown int
	// AllowUnclean permits unclean elections; without it UncleanElect is
	// never drawn and a fixed UncleanElect is refused.
	AllowUnclean bool
	// KeepMinISR caps MaxDown further at replication factor minus
	// min.insync.replicas, so acks=all writes always have enough replicas.
	KeepMinISR bool
	// Topics restricts partition faults (pause, shrink, elections) to these
	// topics; empty means every topic but the internal ones.
	Topics []string
	// APIs are the request types error, latency and drop faults hit.
	// Default Produce and Fetch.
	APIs []string
	// Errors are the Kafka errors an error fault answers with. Default
	// NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT and NOT_ENOUGH_REPLICAS.
	Errors []string
	// Latency is the delay a latency fault adds. Default 200 ms.
	Latency time.Duration
}

// maxDrawn bounds how many faults a drawn schedule may hold.
const maxDrawn = 100_000

// Presets are the named specs.
var Presets = map[string]Spec{
	// gentle injects only what Kafka's guarantees survive: acks=all writes
	// must never be lost, consumers never read what later vanishes.
	"gentle": {
		Weights:    map[Kind]int{Crash: 3, Stop: 2, Isolate: 1, Pause: 2, ShrinkISR: 1, Elect: 2, Coordinator: 1, Error: 2, Latency: 1},
		MaxDown:    1,
		KeepMinISR: true,
	},
	// rough adds unclean elections and power loss without flush: loss of
	// acknowledged writes is allowed, and reported with its cause.
	"rough": {
		Weights:      map[Kind]int{Crash: 3, Stop: 1, PowerLoss: 2, Isolate: 1, Pause: 2, ShrinkISR: 1, Elect: 1, UncleanElect: 2, Coordinator: 1, Error: 1, Latency: 1},
		MaxDown:      1,
		AllowUnclean: true,
	},
	// network: latency, dropped connections (before and after the work, so
	// non-idempotent retries duplicate) and zombie leaders.
	"network": {
		Weights:    map[Kind]int{Latency: 3, Drop: 3, DropAfter: 2, Isolate: 2, Error: 2},
		MaxDown:    1,
		KeepMinISR: true,
	},
}

// PresetNames lists the presets in a stable order.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Resolve returns s with its preset applied and defaults filled, or an
// error naming what is wrong.
func (s Spec) Resolve() (Spec, error) {
	if s.Preset != "" {
		p, ok := Presets[s.Preset]
		if !ok {
			return s, fmt.Errorf("unknown chaos preset %q (presets: %s)", s.Preset, strings.Join(PresetNames(), ", "))
		}
		if s.Weights == nil {
			s.Weights = maps.Clone(p.Weights) // the caller may change its copy
		}
		if s.MaxDown == 0 {
			s.MaxDown = p.MaxDown
		}
		s.AllowUnclean = s.AllowUnclean || p.AllowUnclean
		s.KeepMinISR = s.KeepMinISR || p.KeepMinISR
	}
	if s.Weights == nil && s.Actions == nil {
		return s, fmt.Errorf("a chaos spec needs a preset, weights or a fixed list of actions")
	}
	for k, w := range s.Weights {
		if !slices.Contains(faultKinds, k) {
			return s, fmt.Errorf("unknown chaos fault %q", k)
		}
		if w < 0 {
			return s, fmt.Errorf("negative weight %d for %s", w, k)
		}
	}
	if s.Duration < 0 || s.Interval < 0 || s.Hold < 0 || s.Latency < 0 || s.MaxDown < 0 {
		return s, fmt.Errorf("durations and max_down may not be negative")
	}
	if s.Duration == 0 {
		s.Duration = 60 * time.Second
	}
	if s.Interval == 0 {
		s.Interval = 2 * time.Second
	}
	if s.Hold == 0 {
		s.Hold = s.Interval
	}
	if s.Duration/s.Interval > maxDrawn {
		return s, fmt.Errorf("interval %s over duration %s makes more than %d faults", s.Interval, s.Duration, maxDrawn)
	}
	if s.MaxDown == 0 {
		s.MaxDown = 1
	}
	if s.APIs == nil {
		s.APIs = []string{"Produce", "Fetch"}
	}
	if s.Errors == nil {
		s.Errors = []string{"NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS"}
	}
	if s.Latency == 0 {
		s.Latency = 200 * time.Millisecond
	}
	for i, a := range s.Actions {
		if !slices.Contains(faultKinds, a.Kind) {
			return s, fmt.Errorf("action %d: unknown chaos fault %q", i, a.Kind)
		}
		if a.Kind == UncleanElect && !s.AllowUnclean {
			return s, fmt.Errorf("action %d: unclean elections are not allowed by this spec", i)
		}
		if a.At < 0 || a.Hold < 0 {
			return s, fmt.Errorf("action %d: negative time", i)
		}
	}
	return s, nil
}

// ParseSpec reads a spec: a JSON object, or a preset name followed by
// comma-separated key=value settings, e.g.
// "rough,seed=42,duration=20s,interval=500ms,max_down=1". Keys: seed,
// duration, interval, hold, latency (Go durations or milliseconds),
// max_down, unclean, keep_min_isr (true/false), topics, apis, errors
// (separated by '+'), and any fault kind with its weight (crash=3).
func ParseSpec(text string) (Spec, error) {
	text = strings.TrimSpace(text)
	var s Spec
	if strings.HasPrefix(text, "{") {
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			return s, fmt.Errorf("chaos spec: %w", err)
		}
		return s.Resolve()
	}
	parts := strings.Split(text, ",")
	if parts[0] != "" && !strings.Contains(parts[0], "=") {
		s.Preset, parts = parts[0], parts[1:]
	}
	for _, kv := range parts {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return s, fmt.Errorf("chaos spec: %q is not key=value", kv)
		}
		if err := s.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return s, fmt.Errorf("chaos spec: %s: %w", k, err)
		}
	}
	return s.Resolve()
}

func (s *Spec) set(k, v string) error {
	var err error
	switch k {
	case "seed":
		s.Seed, err = strconv.ParseUint(v, 10, 64)
	case "duration":
		s.Duration, err = parseDuration(v)
	case "interval":
		s.Interval, err = parseDuration(v)
	case "hold":
		s.Hold, err = parseDuration(v)
	case "latency":
		s.Latency, err = parseDuration(v)
	case "max_down":
		s.MaxDown, err = strconv.Atoi(v)
	case "unclean":
		s.AllowUnclean, err = strconv.ParseBool(v)
	case "keep_min_isr":
		s.KeepMinISR, err = strconv.ParseBool(v)
	case "topics":
		s.Topics = strings.Split(v, "+")
	case "apis":
		s.APIs = strings.Split(v, "+")
	case "errors":
		s.Errors = strings.Split(v, "+")
	default:
		if !slices.Contains(faultKinds, Kind(k)) {
			return fmt.Errorf("unknown setting")
		}
		var w int
		if w, err = strconv.Atoi(v); err == nil {
			if s.Weights == nil {
				s.Weights = map[Kind]int{}
				if p, ok := Presets[s.Preset]; ok {
					maps.Copy(s.Weights, p.Weights)
				}
			}
			s.Weights[Kind(k)] = w
		}
	}
	return err
}

// parseDuration reads a Go duration ("1.5s") or a number of milliseconds.
func parseDuration(v string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(ms) * time.Millisecond, nil
	}
	return time.ParseDuration(v)
}

// specJSON is Spec's JSON form: durations in milliseconds.
type specJSON struct {
	Preset       string       `json:"preset,omitempty"`
	Seed         uint64       `json:"seed,omitempty"`
	DurationMs   int64        `json:"duration_ms,omitempty"`
	IntervalMs   int64        `json:"interval_ms,omitempty"`
	HoldMs       int64        `json:"hold_ms,omitempty"`
	Weights      map[Kind]int `json:"weights,omitempty"`
	Actions      []Action     `json:"actions,omitempty"`
	MaxDown      int          `json:"max_down,omitempty"`
	AllowUnclean bool         `json:"unclean,omitempty"`
	KeepMinISR   bool         `json:"keep_min_isr,omitempty"`
	Topics       []string     `json:"topics,omitempty"`
	APIs         []string     `json:"apis,omitempty"`
	Errors       []string     `json:"errors,omitempty"`
	LatencyMs    int64        `json:"latency_ms,omitempty"`
}

// MarshalJSON writes durations as milliseconds.
func (s Spec) MarshalJSON() ([]byte, error) {
	return json.Marshal(specJSON{s.Preset, s.Seed, s.Duration.Milliseconds(), s.Interval.Milliseconds(), s.Hold.Milliseconds(),
		s.Weights, s.Actions, s.MaxDown, s.AllowUnclean, s.KeepMinISR, s.Topics, s.APIs, s.Errors, s.Latency.Milliseconds()})
}

// UnmarshalJSON reads the form MarshalJSON writes, refusing unknown keys.
// A JSON string is read as ParseSpec's text form.
func (s *Spec) UnmarshalJSON(b []byte) error {
	var text string
	if json.Unmarshal(b, &text) == nil {
		sp, err := ParseSpec(text)
		if err != nil {
			return err
		}
		*s = sp
		return nil
	}
	var j specJSON
	if err := strictJSON(b, &j); err != nil {
		return err
	}
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	*s = Spec{j.Preset, j.Seed, ms(j.DurationMs), ms(j.IntervalMs), ms(j.HoldMs), j.Weights, j.Actions, j.MaxDown,
		j.AllowUnclean, j.KeepMinISR, j.Topics, j.APIs, j.Errors, ms(j.LatencyMs)}
	return nil
}

// strictJSON refuses unknown keys, and keys in another case, too.
func strictJSON(b []byte, v any) error { return api.DecodeStrict(b, v) }
