package chaos

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

var topo3 = Topology{Brokers: 3, ReplicationFactor: 3, MinInsync: 2}

func mustParse(t *testing.T, text string) Spec {
	t.Helper()
	s, err := ParseSpec(text)
	if err != nil {
		t.Fatalf("ParseSpec(%q): %v", text, err)
	}
	return s
}

func TestScheduleSameSeedSameActions(t *testing.T) {
	for _, preset := range PresetNames() {
		s := mustParse(t, preset+",duration=30s,interval=700ms")
		a, b := Schedule(7, s, topo3), Schedule(7, s, topo3)
		if len(a) < 10 {
			t.Fatalf("%s: only %d actions in 30 s at 700 ms", preset, len(a))
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: same seed, different schedules", preset)
		}
		if reflect.DeepEqual(a, Schedule(8, s, topo3)) {
			t.Fatalf("%s: seeds 7 and 8 gave the same schedule", preset)
		}
	}
}

// TestScheduleExact pins one schedule: a change to the generator that
// changes what a seed means breaks replays of recorded failures, and must
// be deliberate.
func TestScheduleExact(t *testing.T) {
	s := mustParse(t, "rough,duration=5s,interval=1s,hold=1s")
	got := Schedule(42, s, topo3)
	var lines []string
	for _, a := range got {
		lines = append(lines, a.String())
	}
	want := []string{
		"#1 at 1.325s: crash broker 2 for 1.276s",
		"#2 at 2.601s: restart broker 2 (ends #1)",
		"#3 at 2.805s: crash broker 1 for 1.075s",
		"#4 at 3.88s: restart broker 1 (ends #3)",
		"#5 at 4.209s: isolate broker 2 for 791ms",
		"#6 at 4.893s: elect pick 2470141129",
		"#7 at 5s: heal broker 2 (ends #5)",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("schedule for seed 42:\n%s", strings.Join(lines, "\n"))
	}
}

func TestScheduleConstraints(t *testing.T) {
	for _, preset := range PresetNames() {
		for seed := uint64(1); seed <= 50; seed++ {
			s := mustParse(t, preset+",duration=20s,interval=300ms,hold=2s")
			acts := Schedule(seed, s, topo3)
			open := map[int]Action{}
			undone := map[int]bool{}
			for i, a := range acts {
				if a.Seq != i+1 {
					t.Fatalf("seq %d at index %d", a.Seq, i)
				}
				if a.At < 0 || a.At > s.Duration {
					t.Fatalf("%s seed %d: action at %s outside the run", preset, seed, a.At)
				}
				if i > 0 && a.At < acts[i-1].At {
					t.Fatalf("%s seed %d: actions out of order", preset, seed)
				}
				if a.Kind == UncleanElect && !s.AllowUnclean {
					t.Fatalf("%s seed %d: unclean election drawn", preset, seed)
				}
				if a.Of > 0 {
					f, ok := open[a.Of]
					if !ok || f.Kind.Undo() != a.Kind || f.Broker != a.Broker {
						t.Fatalf("%s seed %d: %v ends nothing open (%v)", preset, seed, a, f)
					}
					delete(open, a.Of)
					undone[a.Of] = true
					continue
				}
				impaired := 0
				for _, o := range open {
					if o.Kind.impairs() {
						impaired++
					}
				}
				if a.Kind.impairs() && impaired >= 1 {
					t.Fatalf("%s seed %d: %v while %d faults keep replicas out (max 1)", preset, seed, a, impaired)
				}
				if a.Kind.Undo() != "" {
					open[a.Seq] = a
				}
			}
			if len(open) > 0 {
				t.Fatalf("%s seed %d: faults never undone: %v", preset, seed, open)
			}
		}
	}
}

func TestScheduleKeepMinISRForbidsImpairment(t *testing.T) {
	s := mustParse(t, "gentle,duration=20s,interval=200ms")
	for _, a := range Schedule(3, s, Topology{Brokers: 3, ReplicationFactor: 2, MinInsync: 2}) {
		if a.Kind.impairs() {
			t.Fatalf("rf 2 with min.insync 2 leaves no replica to take out, got %v", a)
		}
	}
}

func TestScheduleFixedActions(t *testing.T) {
	s, err := ParseSpec(`{"seed":1,"duration_ms":10000,"actions":[
		{"at_ms":3000,"kind":"isolate","broker":2,"hold_ms":1000},
		{"at_ms":1000,"kind":"crash","broker":1,"hold_ms":5000},
		{"at_ms":2000,"kind":"elect","pick":7}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got := Schedule(1, s, topo3)
	ms := time.Millisecond
	want := []Action{
		{Seq: 1, At: 1000 * ms, Kind: Crash, Broker: 1, Hold: 5000 * ms},
		{Seq: 2, At: 2000 * ms, Kind: Elect, Pick: 7},
		{Seq: 3, At: 3000 * ms, Kind: Isolate, Broker: 2, Hold: 1000 * ms},
		{Seq: 4, At: 4000 * ms, Kind: Heal, Broker: 2, Of: 3},
		{Seq: 5, At: 6000 * ms, Kind: Restart, Broker: 1, Of: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestParseSpec(t *testing.T) {
	s := mustParse(t, "rough,seed=42,duration=20s,interval=500,crash=9,topics=a+b,max_down=2")
	if s.Seed != 42 || s.Duration != 20*time.Second || s.Interval != 500*time.Millisecond || s.Hold != 500*time.Millisecond ||
		s.Weights[Crash] != 9 || s.Weights[UncleanElect] != 2 || !s.AllowUnclean || s.MaxDown != 2 || !reflect.DeepEqual(s.Topics, []string{"a", "b"}) {
		t.Fatalf("parsed %+v", s)
	}
	g := mustParse(t, "gentle")
	g.Weights[Crash] = 99
	if Presets["rough"].Weights[Crash] != 3 || Presets["gentle"].Weights[Crash] != 3 {
		t.Fatal("setting a weight changed the preset itself")
	}
	for _, bad := range []string{"", "wild", "gentle,seed=x", "gentle,colour=red", "gentle,crash=-1", "gentle,duration=-1s", "gentle,nokey", "gentle,duration=1h,interval=1ms",
		`{"preset":"gentle","bogus":1}`, `{"actions":[{"at_ms":1,"kind":"unclean_elect"}]}`, `{"actions":[{"at_ms":1,"kind":"explode"}]}`} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
	var fromString Spec
	if err := json.Unmarshal([]byte(`"network,seed=5"`), &fromString); err != nil || fromString.Seed != 5 || fromString.Weights[Drop] != 3 {
		t.Fatalf("JSON string spec: %+v, %v", fromString, err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back, _ = back.Resolve(); !reflect.DeepEqual(back, s) {
		t.Fatalf("JSON round trip:\n%+v\n%+v", back, s)
	}
}
