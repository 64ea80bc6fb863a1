package server

// Chaos mode: a seeded fault schedule (package chaos) run against the
// cluster on its clock while clients work, and a checker over what the
// run recorded (chaos_record.go). StartChaos draws the schedule, turns
// recording on and starts two goroutines: the runner, which sleeps on the
// cluster's clock until each action is due and runs it, and the watcher,
// which follows the event ring for the decisions the checker explains
// losses with and reports the first loss with the seed. StopChaos stops
// the schedule, undoes whatever it left broken (stopped brokers restart,
// isolated ones heal, paused followers resume, rules go) and stops
// recording; ChaosReport checks the recording against the logs as they
// are then.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fakekafka/fakekafka/chaos"
)

// ErrChaosRunning is returned by StartChaos while a run is active.
var ErrChaosRunning = errors.New("a chaos run is already active")

// ErrNoChaos is returned when there is no chaos run to stop or report on.
var ErrNoChaos = errors.New("no chaos run")

// chaosRun is one run: its schedule, what it did and recorded.
type chaosRun struct {
	seed    uint64
	spec    chaos.Spec
	actions []chaos.Action
	started time.Time
	since   uint64 // the event seq when it started

	entries atomic.Int64 // recorded entries, against maxChaosEntries
	full    atomic.Bool

	stop     chan struct{}
	done     chan struct{} // the runner ended
	watchEnd chan struct{}
	cancel   context.CancelFunc

	mu         sync.Mutex
	running    bool
	executed   []ChaosAction
	targets    map[int]chaosTarget  // a pause's follower, by action seq
	rules      map[int]*FaultRule   // a rule action's rule, by action seq
	open       map[int]chaos.Action // faults whose undo has not run
	partitions map[*partition]bool  // partitions holding recordings
	decisions  []chaos.Decision     // from the event ring
	commits    []chaos.Commit       // group commits
	seen       uint64               // the last event seq read
	anomaly    string               // the first loss, as reported
	share      shareRecording       // share deliveries and acknowledgements
	shareSeq   atomic.Uint64        // orders them (chaos_share.go)
}

// chaosTarget is the replica a partition action chose.
type chaosTarget struct {
	topic     string
	partition int32
	broker    int32
}

// ChaosAction is an action as it ran.
type ChaosAction struct {
	chaos.Action
	// Time is the cluster's clock when it ran.
	Time time.Time `json:"-"`
	// Target says which partition and replica a partition action hit.
	Target string
	// Error says why it could not run (a constraint, no candidate).
	Error string
	// Fault is the id of the rule a rule action added or removed.
	Fault string
}

// MarshalJSON flattens the action with its outcome.
func (a ChaosAction) MarshalJSON() ([]byte, error) {
	b, err := a.Action.MarshalJSON()
	if err != nil {
		return nil, err
	}
	extra := fmt.Sprintf(`,"time":%q`, a.Time.Format(time.RFC3339Nano))
	if a.Target != "" {
		extra += fmt.Sprintf(`,"target":%q`, a.Target)
	}
	if a.Error != "" {
		extra += fmt.Sprintf(`,"error":%q`, a.Error)
	}
	if a.Fault != "" {
		extra += fmt.Sprintf(`,"fault":%q`, a.Fault)
	}
	return append(b[:len(b)-1], append([]byte(extra), '}')...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (a *ChaosAction) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	var out struct {
		Time                 time.Time
		Target, Error, Fault string
	}
	for key, dst := range map[string]any{"time": &out.Time, "target": &out.Target, "error": &out.Error, "fault": &out.Fault} {
		if raw, ok := fields[key]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return fmt.Errorf("chaos action %s: %w", key, err)
			}
			delete(fields, key)
		}
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	if err := a.Action.UnmarshalJSON(rest); err != nil {
		return err
	}
	a.Time, a.Target, a.Error, a.Fault = out.Time, out.Target, out.Error, out.Fault
	return nil
}

// take counts one recorded entry; false once the run's bound is reached.
func (r *chaosRun) take() bool {
	if r.entries.Add(1) > maxChaosEntries {
		r.full.Store(true)
		return false
	}
	return true
}

// touch remembers that p holds recordings of r. Callers hold p.mu.
func (r *chaosRun) touch(p *partition) {
	r.mu.Lock()
	r.partitions[p] = true
	r.mu.Unlock()
}

// StartChaos starts a chaos run of spec (see package chaos and
// docs/chaos.md) and returns its schedule. Only one run is active
// at a time; the last run's report stays available after it stops.
func (c *Cluster) StartChaos(spec chaos.Spec) ([]chaos.Action, error) {
	spec, err := spec.Resolve()
	if err != nil {
		return nil, err
	}
	c.chaosMu.Lock()
	defer c.chaosMu.Unlock()
	if c.chaos.Load() != nil {
		return nil, ErrChaosRunning
	}
	c.ctlMu.Lock() // Close takes it to close c.closing: no goroutine starts after
	defer c.ctlMu.Unlock()
	select {
	case <-c.closing:
		return nil, errClusterClosed
	default:
	}
	seed := spec.Seed
	if seed == 0 {
		seed = rand.Uint64()>>12 + 1 // short enough to type back
	}
	spec.Seed = seed
	s := c.cfg.Clock
	rf := c.cfg.DefaultReplicationFactor
	run := &chaosRun{
		seed: seed, spec: spec, started: s.Now(), since: c.events.seq.Load(),
		actions: chaos.Schedule(seed, spec, chaos.Topology{Brokers: len(c.brokers), ReplicationFactor: rf, MinInsync: c.cfg.MinInsyncReplicas}),
		stop:    make(chan struct{}), done: make(chan struct{}), watchEnd: make(chan struct{}),
		running: true, targets: map[int]chaosTarget{}, rules: map[int]*FaultRule{}, open: map[int]chaos.Action{},
		partitions: map[*partition]bool{},
	}
	run.seen = run.since
	ctx, cancel := context.WithCancel(context.Background())
	run.cancel = cancel
	c.chaosLast = run
	c.chaos.Store(run)
	var l produceListener = run
	c.produceListener.Store(&l)
	c.emit(EventChaosStarted, func(e *Event) {
		e.Detail = fmt.Sprintf("seed=%d preset=%s duration=%s actions=%d", seed, spec.Preset, spec.Duration, len(run.actions))
	})
	c.log.Info("chaos started", "seed", seed, "preset", spec.Preset, "duration", spec.Duration, "actions", len(run.actions))
	c.wg.Add(2)
	go c.runChaos(run)
	go c.watchChaos(ctx, run)
	return slices.Clone(run.actions), nil
}

// ChaosSeed is the seed of the active chaos run (StartChaos picks one when
// the spec has none), or false when no run is active.
func (c *Cluster) ChaosSeed() (uint64, bool) {
	run := c.chaos.Load()
	if run == nil {
		return 0, false
	}
	return run.seed, true
}

// StopChaos ends the active run: the schedule stops, every fault it left
// in place is undone, recording stops. It returns the run's report.
func (c *Cluster) StopChaos() (*ChaosReport, error) {
	c.chaosMu.Lock()
	run := c.chaos.Load()
	if run == nil {
		c.chaosMu.Unlock()
		return nil, ErrNoChaos
	}
	close(run.stop)
	<-run.done
	run.mu.Lock()
	open := make([]chaos.Action, 0, len(run.open))
	for _, a := range run.open {
		open = append(open, a)
	}
	run.mu.Unlock()
	slices.SortFunc(open, func(a, b chaos.Action) int { return a.Seq - b.Seq })
	for _, a := range open {
		c.runAction(run, chaos.Action{Seq: 0, At: a.At, Kind: a.Kind.Undo(), Broker: a.Broker, Of: a.Seq})
	}
	run.mu.Lock()
	run.running = false
	run.mu.Unlock()
	c.produceListener.Store(nil)
	c.chaos.Store(nil)
	c.emit(EventChaosStopped, func(e *Event) { e.Detail = fmt.Sprintf("seed=%d", run.seed) })
	run.cancel()
	<-run.watchEnd
	c.chaosMu.Unlock()
	return c.ChaosReport()
}

// runChaos runs the schedule's actions when the cluster's clock reaches
// them.
func (c *Cluster) runChaos(run *chaosRun) {
	defer c.wg.Done()
	defer close(run.done)
	clk := c.cfg.Clock
	for _, a := range run.actions {
		t := clk.NewTimerAt(run.started.Add(a.At))
		select {
		case <-t.C:
		case <-run.stop:
			t.Stop()
			return
		case <-c.closing:
			t.Stop()
			return
		}
		c.runAction(run, a)
	}
}

// watchChaos follows the event ring while the run lasts.
func (c *Cluster) watchChaos(ctx context.Context, run *chaosRun) {
	defer c.wg.Done()
	defer close(run.watchEnd)
	for {
		run.mu.Lock()
		since := run.seen
		run.mu.Unlock()
		if _, err := c.WaitEvents(ctx, since); err != nil {
			c.drainChaosEvents(run)
			return
		}
		c.drainChaosEvents(run)
	}
}

// drainChaosEvents turns the events since the last drain into the
// checker's decisions, and reports the run's first loss with its seed.
func (c *Cluster) drainChaosEvents(run *chaosRun) {
	run.mu.Lock()
	defer run.mu.Unlock()
	evs := c.Events(run.seen)
	if len(evs) > 0 && evs[0].Seq > run.seen+1 {
		c.log.Warn("chaos: the event ring dropped events before the checker read them; raise EventBuffer", "missed", evs[0].Seq-run.seen-1)
	}
	for _, e := range evs {
		run.seen = e.Seq
		tp := chaos.TP{Topic: e.Topic, Partition: e.Partition}
		switch e.Type {
		case EventLeaderElected:
			run.decisions = append(run.decisions, chaos.Decision{Seq: e.Seq, Kind: chaos.DecisionElection, TP: tp, Broker: e.Leader, Unclean: e.Unclean})
		case EventLogTruncated:
			run.decisions = append(run.decisions, chaos.Decision{Seq: e.Seq, Kind: chaos.DecisionTruncated, TP: tp, Broker: e.Broker, From: e.From, To: e.To, Detail: e.Reason})
		case EventBrokerStopped:
			if e.Mode == StopPowerLoss {
				run.decisions = append(run.decisions, chaos.Decision{Seq: e.Seq, Kind: chaos.DecisionPowerLoss, Broker: e.Broker})
			}
		case EventRecordsLost:
			if run.anomaly == "" {
				run.anomaly = fmt.Sprintf("%s/%d: acknowledged offsets [%d, %d) lost (%s); replay with seed=%d", e.Topic, e.Partition, e.From, e.To, e.Reason, run.seed)
				msg := run.anomaly
				c.log.Warn("chaos: first anomaly", "topic", e.Topic, "partition", e.Partition, "from", e.From, "to", e.To, "reason", e.Reason, "seed", run.seed)
				c.emit(EventChaosAnomaly, func(ev *Event) {
					ev.Topic, ev.Partition, ev.From, ev.To, ev.Reason, ev.Detail = e.Topic, e.Partition, e.From, e.To, e.Reason, msg
				})
			}
		}
	}
}
