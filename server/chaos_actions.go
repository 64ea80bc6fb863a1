package server

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/chaos"
)

// runAction carries out one action of run and reports it as an event.
// Which partition and replica a partition action hits is chosen here from
// its Pick and the partitions that exist now, so a run whose clients
// create the same topics replays the same way.
func (c *Cluster) runAction(run *chaosRun, a chaos.Action) {
	before := c.events.seq.Load() // what the action causes comes after
	target, err := c.doAction(run, a)
	done := ChaosAction{Action: a, Time: c.now(), Target: target}
	if err != nil {
		done.Error = err.Error()
	}
	ruleSeq := a.Seq
	if a.Kind == chaos.RemoveFault {
		ruleSeq = a.Of
	}
	if fr := run.rule(ruleSeq); fr != nil && (a.Kind == chaos.RemoveFault || a.Kind.Undo() == chaos.RemoveFault) {
		done.Fault = fr.id
	}
	detail := a.String()
	if target != "" {
		detail += " on " + target
	}
	if done.Fault != "" {
		detail += " (fault " + done.Fault + ")"
	}
	if err != nil {
		detail += ": " + err.Error()
	}
	run.mu.Lock()
	run.executed = append(run.executed, done)
	run.decisions = append(run.decisions, chaos.Decision{Seq: before, Kind: chaos.DecisionAction, Detail: detail})
	switch {
	case a.Of > 0:
		delete(run.open, a.Of)
	case err == nil && a.Kind.Undo() != "":
		run.open[a.Seq] = a
	}
	run.mu.Unlock()
	c.emit(EventChaosAction, func(e *Event) {
		e.Reason, e.Detail = string(a.Kind), detail
		if a.Broker > 0 {
			e.Broker = a.Broker
		}
		e.Fault = done.Fault
	})
	c.log.Info("chaos action", "seed", run.seed, "action", detail)
}

func (r *chaosRun) rule(seq int) *FaultRule {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rules[seq]
}

func (c *Cluster) doAction(run *chaosRun, a chaos.Action) (string, error) {
	switch a.Kind {
	case chaos.Crash:
		return "", c.StopBroker(a.Broker, StopCrash)
	case chaos.Stop:
		return "", c.StopBroker(a.Broker, StopClean)
	case chaos.PowerLoss:
		return "", c.StopBroker(a.Broker, StopPowerLoss)
	case chaos.Restart:
		return "", c.StartBroker(a.Broker)
	case chaos.Isolate:
		return "", c.IsolateBroker(a.Broker)
	case chaos.Heal:
		return "", c.HealBroker(a.Broker)
	case chaos.Pause, chaos.ShrinkISR, chaos.Elect, chaos.UncleanElect, chaos.Coordinator:
		return c.partitionAction(run, a)
	case chaos.Resume:
		run.mu.Lock()
		t, ok := run.targets[a.Of]
		run.mu.Unlock()
		if !ok {
			return "", fmt.Errorf("nothing to resume")
		}
		return fmt.Sprintf("%s/%d replica %d", t.topic, t.partition, t.broker), c.ResumeReplica(t.topic, t.partition, t.broker)
	case chaos.Error, chaos.Latency, chaos.Drop, chaos.DropAfter:
		f := Fault{API: a.API, Broker: a.Broker, Error: a.Error, Count: a.Count, Delay: a.Delay,
			DropConnection: a.Kind == chaos.Drop || a.Kind == chaos.DropAfter, AfterWork: a.Kind == chaos.DropAfter}
		r, err := c.InjectFault(f)
		if err != nil {
			return "", err
		}
		run.mu.Lock()
		run.rules[a.Seq] = r
		run.mu.Unlock()
		return "", nil
	case chaos.RemoveFault:
		r := run.rule(a.Of)
		if r == nil {
			return "", fmt.Errorf("no fault to remove")
		}
		c.RemoveFault(r.id)
		return "", nil
	}
	return "", fmt.Errorf("unknown action %q", a.Kind)
}

// chaosPartitions lists the partitions partition actions may hit, in a
// stable order: the spec's topics, or every non-internal topic; for a
// coordinator move, the __consumer_offsets partitions.
func (c *Cluster) chaosPartitions(spec chaos.Spec, coordinator bool) []*partition {
	var out []*partition
	for name, t := range c.topics.Load().byName {
		switch {
		case coordinator:
			if name != offsetsTopic {
				continue
			}
		case len(spec.Topics) > 0:
			if !slices.Contains(spec.Topics, name) {
				continue
			}
		case isInternalTopic(name):
			continue
		}
		if !t.deleted.Load() {
			out = append(out, t.partitions()...)
		}
	}
	slices.SortFunc(out, func(a, b *partition) int {
		return cmp.Or(strings.Compare(a.t.name, b.t.name), cmp.Compare(a.index, b.index))
	})
	return out
}

// partitionAction runs a pause, ISR shrink or election on the partition
// a.Pick chooses. The replica it acts on is chosen from the assignment
// (without the leader and stopped brokers), never from the ISR or the
// logs, which move with the replica fetchers' timing: the same run hits
// the same replicas, and where the cluster's state makes the action
// impossible (a clean election of a replica out of the ISR) it fails and
// says why.
func (c *Cluster) partitionAction(run *chaosRun, a chaos.Action) (string, error) {
	parts := c.chaosPartitions(run.spec, a.Kind == chaos.Coordinator)
	if len(parts) == 0 {
		return "", fmt.Errorf("no partition to act on")
	}
	p := parts[int(a.Pick)%len(parts)]
	name := fmt.Sprintf("%s/%d", p.t.name, p.index)
	p.mu.Lock()
	leader, isr, minISR := p.st.Leader(), p.st.ISR(), p.st.EffectiveMinISR()
	var others []int32
	for _, r := range p.st.Replicas() {
		if r.Broker != leader && c.broker(r.Broker).up.Load() {
			others = append(others, r.Broker)
		}
	}
	p.mu.Unlock()
	if len(others) == 0 {
		return name, fmt.Errorf("no live replica other than the leader")
	}
	id := others[int(a.Pick>>8)%len(others)]
	target := fmt.Sprintf("%s replica %d", name, id)
	switch a.Kind {
	case chaos.Pause:
		if err := c.PauseReplica(p.t.name, p.index, id); err != nil {
			return target, err
		}
		run.mu.Lock()
		run.targets[a.Seq] = chaosTarget{p.t.name, p.index, id}
		run.mu.Unlock()
		return target, nil
	case chaos.ShrinkISR:
		switch {
		case !slices.Contains(isr, id):
			return target, fmt.Errorf("not in the ISR %v", isr)
		case run.spec.KeepMinISR && len(isr)-1 < minISR:
			return target, fmt.Errorf("the ISR %v would fall below min.insync.replicas %d", isr, minISR)
		}
		return target, c.SetISR(p.t.name, p.index, slices.DeleteFunc(isr, func(x int32) bool { return x == id }))
	case chaos.Elect, chaos.Coordinator:
		_, err := c.ElectLeader(p.t.name, p.index, id, false)
		return fmt.Sprintf("%s leader %d", name, id), err
	case chaos.UncleanElect:
		_, err := c.ElectLeader(p.t.name, p.index, id, true)
		return fmt.Sprintf("%s leader %d", name, id), err
	}
	return name, fmt.Errorf("unknown partition action %q", a.Kind)
}
