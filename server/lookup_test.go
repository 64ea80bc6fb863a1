package server

import (
	"errors"
	"testing"
)

// The one-item lookups the HTTP layer (package control) is built on: each
// agrees with the whole snapshot and says false for what does not exist.
func TestLookups(t *testing.T) {
	c := NewTestCluster(t, Config{Brokers: 3})
	scMust(t, c.CreateTopic("look", 2, 2, map[string]string{"min.insync.replicas": "2"}))

	st := c.State()
	ts, ok := c.Topic("look")
	if want := topicState(st, "look"); !ok || ts.ID != want.ID || len(ts.Partitions) != 2 || ts.Configs["min.insync.replicas"] != "2" {
		t.Errorf("Topic(look) = %+v, %v; State has %+v", ts, ok, want)
	}
	if _, ok := c.Topic("nope"); ok {
		t.Error("Topic(nope) found a topic")
	}
	for _, want := range st.Brokers {
		if got, ok := c.Broker(want.ID); !ok || got != want {
			t.Errorf("Broker(%d) = %+v, %v, want %+v", want.ID, got, ok, want)
		}
	}
	if _, ok := c.Broker(4); ok {
		t.Error("Broker(4) found a broker of a 3-broker cluster")
	}
	ls, ok := c.Listener(c.Listeners()[0].Name)
	if !ok || ls.Name != c.Listeners()[0].Name || len(ls.Brokers) != 3 {
		t.Errorf("Listener(first) = %+v, %v", ls, ok)
	}
	if _, ok := c.Listener("NOPE"); ok {
		t.Error("Listener(NOPE) found a listener")
	}

	// ReplicaPaused sees a pause of a replica and one set ahead of a
	// broker that has no replica yet.
	ps, _ := c.Partition("look", 0)
	follower := ps.Replicas[1].Broker
	var outsider int32
	for _, b := range st.Brokers {
		if b.ID != ps.Replicas[0].Broker && b.ID != follower {
			outsider = b.ID
		}
	}
	scMust(t, c.PauseReplica("look", 0, follower))
	scMust(t, c.PauseReplica("look", 0, outsider))
	if !c.ReplicaPaused("look", 0, follower) || !c.ReplicaPaused("look", 0, outsider) || c.ReplicaPaused("look", 1, follower) {
		t.Error("ReplicaPaused does not match the pauses")
	}
	scMust(t, c.ResumeReplica("look", 0, outsider))
	if c.ReplicaPaused("look", 0, outsider) || c.ReplicaPaused("nope", 0, follower) {
		t.Error("ReplicaPaused after resume, or for an unknown topic")
	}
	if err := c.PauseReplica("nope", 0, 1); !errors.Is(err, ErrUnknownPartition) {
		t.Errorf("PauseReplica(nope): %v, want ErrUnknownPartition", err)
	}

	// FaultRule finds a rule by id until it is removed; LastEventSeq is
	// the newest event's number.
	rule, err := c.InjectFault(Fault{API: "Produce", Count: 1})
	scMust(t, err)
	if got := c.FaultRule(rule.ID()); got != rule {
		t.Errorf("FaultRule(%s) = %v", rule.ID(), got)
	}
	c.RemoveFault(rule.ID())
	if c.FaultRule(rule.ID()) != nil {
		t.Error("FaultRule found a removed rule")
	}
	evs := c.Events(0)
	if got := c.LastEventSeq(); len(evs) == 0 || got < evs[len(evs)-1].Seq {
		t.Errorf("LastEventSeq %d, newest kept event %d", got, evs[len(evs)-1].Seq)
	}

	// ChaosSeed is the active run's seed, chosen when the spec has none.
	if _, ok := c.ChaosSeed(); ok {
		t.Error("ChaosSeed before any run")
	}
	spec := noSchedule
	spec.Seed = 0
	if _, err := c.StartChaos(spec); err != nil {
		t.Fatal(err)
	}
	seed, ok := c.ChaosSeed()
	if !ok || seed == 0 {
		t.Errorf("ChaosSeed during a run: %d, %v", seed, ok)
	}
	rep, err := c.StopChaos()
	scMust(t, err)
	if rep.Seed != seed {
		t.Errorf("report seed %d, ChaosSeed said %d", rep.Seed, seed)
	}
	if _, ok := c.ChaosSeed(); ok {
		t.Error("ChaosSeed after the run stopped")
	}
}
