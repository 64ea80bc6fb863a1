package quota

import (
	"errors"
	"testing"
	"time"
)

func str(s string) *string { return &s }

func TestRateThrottleExact(t *testing.T) {
	r := NewRate()
	// 5000 bytes at t=0 over the minimum window of 10 s: 500 B/s.
	if d := r.RecordAndThrottle(5000, 1000, 0); d != 0 {
		t.Fatalf("throttle %d under the quota", d)
	}
	// 15000 bytes in 10 s is 1500 B/s: (1500-1000)/1000 * 10000 ms.
	if d := r.RecordAndThrottle(10000, 1000, 0); d != 5000 {
		t.Fatalf("throttle %d, want 5000", d)
	}
	// 4 s later the window is still 10 s: 15000+1000 over 10 s.
	if d := r.RecordAndThrottle(1000, 1000, 4000); d != 6000 {
		t.Fatalf("throttle %d, want 6000", d)
	}
	if got := r.Measure(4000); got != 1600 {
		t.Fatalf("rate %v, want 1600", got)
	}
	// 11 windows after t=0 the first sample is forgotten: the t=4s
	// sample's 1000 bytes over the 10 s since it started.
	if got := r.Measure(14000); got != 100 {
		t.Fatalf("rate %v after the first sample expired, want 100", got)
	}
	if got := r.Measure(15000); got != 0 {
		t.Fatalf("rate %v after every sample expired", got)
	}
}

func TestRequestQuotaExact(t *testing.T) {
	if got := RequestTime(10 * time.Millisecond); got != 1 {
		t.Fatalf("10 ms of handler time is %v percent-seconds, want 1", got)
	}
	// 1 percent-second over the minimum 10 s window: a rate of 0.1 (%).
	r := NewRate()
	if d := r.RecordRequest(10*time.Millisecond, 0.1, 0); d != 0 {
		t.Fatalf("throttle %d at the bound", d)
	}
	// 2 percent-seconds: 0.2 against 0.19 is (0.2-0.19)/0.19*10000 ms.
	if d := r.RecordRequest(10*time.Millisecond, 0.19, 0); d != 526 {
		t.Fatalf("throttle %d, want 526", d)
	}
	r = NewRate()
	r.Record(2, 0)
	// Against 0.199: 0.001/0.199*10000 = 50.25 ms, rounded.
	if d := r.RecordRequest(0, 0.199, 0); d != 50 {
		t.Fatalf("throttle %d, want 50", d)
	}
	// Far over the bound: capped at one window (1000 ms), as Kafka does.
	if d := r.RecordRequest(time.Second, 0.01, 0); d != 1000 {
		t.Fatalf("throttle %d, want the 1000 ms cap", d)
	}
}

func TestRateWindowGrowsPastMinimum(t *testing.T) {
	r := NewRate()
	for i := int64(0); i <= 10; i++ {
		r.Record(1000, i*1000) // 1000 B each second, 11 samples
	}
	// From the oldest sample (0) to 10.5 s: 10.5 s, above the 10 s minimum.
	if got := r.Measure(10500); got != 11000/10.5 {
		t.Fatalf("rate %v, want %v", got, 11000/10.5)
	}
	// At 11 s the first sample (started at 0) has left the 11-window span.
	if got := r.Measure(11000); got != 10000/10.0 {
		t.Fatalf("rate %v, want 1000", got)
	}
}

func TestUnrecordAndMax(t *testing.T) {
	r := NewRate()
	r.Record(20000, 0)
	r.Unrecord(20000, 0)
	if got := r.Measure(0); got != 0 {
		t.Fatalf("rate %v after unrecord", got)
	}
	if got := r.MaxValueInWindow(1000); got != 10000 {
		t.Fatalf("max in window %v, want 10000", got)
	}
}

func TestResolvePrecedence(t *testing.T) {
	set := func(c *Config, e Entity, v float64) *Config {
		return c.Alter(e, []Op{{Key: ProducerByteRate, Value: v}})
	}
	c := &Config{}
	if _, _, ok := c.Resolve(ProducerByteRate, "alice", "app"); ok {
		t.Fatal("a quota without configuration")
	}
	steps := []struct {
		e    Entity
		v    float64
		want Key
	}{
		{Entity{ClientID: Default()}, 8, Key{"", "app"}},
		{Entity{ClientID: Named("app")}, 7, Key{"", "app"}},
		{Entity{User: Default()}, 6, Key{"alice", ""}},
		{Entity{User: Default(), ClientID: Default()}, 5, Key{"alice", "app"}},
		{Entity{User: Default(), ClientID: Named("app")}, 4, Key{"alice", "app"}},
		{Entity{User: Named("alice")}, 3, Key{"alice", ""}},
		{Entity{User: Named("alice"), ClientID: Default()}, 2, Key{"alice", "app"}},
		{Entity{User: Named("alice"), ClientID: Named("app")}, 1, Key{"alice", "app"}},
	}
	// Each more specific entity takes over from the ones before it.
	for _, s := range steps {
		c = set(c, s.e, s.v)
		k, v, ok := c.Resolve(ProducerByteRate, "alice", "app")
		if !ok || v != s.v || k != s.want {
			t.Fatalf("after %s: %v %v %v, want %v %v", s.e, k, v, ok, s.want, s.v)
		}
	}
	// Another user falls back to the default-user entities.
	if k, v, _ := c.Resolve(ProducerByteRate, "bob", "app"); v != 4 || k != (Key{"bob", "app"}) {
		t.Fatalf("bob: %v %v", k, v)
	}
	// Other kinds are resolved on their own.
	if _, _, ok := c.Resolve(ConsumerByteRate, "alice", "app"); ok {
		t.Fatal("a consumer quota from producer settings")
	}
	// Removing the last key removes the entity.
	c = c.Alter(Entity{User: Named("alice"), ClientID: Named("app")}, []Op{{Key: ProducerByteRate, Remove: true}})
	if _, v, _ := c.Resolve(ProducerByteRate, "alice", "app"); v != 2 {
		t.Fatalf("after removal: %v, want 2", v)
	}
}

func TestValidation(t *testing.T) {
	for name, cs := range map[string][]Component{
		"empty":            nil,
		"unknown type":     {{Type: "group", Name: str("g")}},
		"ip and user":      {{Type: TypeIP, Name: str("1.2.3.4")}, {Type: TypeUser, Name: str("a")}},
		"ip and client-id": {{Type: TypeClientID}, {Type: TypeIP}},
	} {
		if _, err := ParseEntity(cs); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	// Kafka reads the components into a map: the last of a type wins.
	if e, err := ParseEntity([]Component{{Type: TypeUser, Name: str("a")}, {Type: TypeUser, Name: str("b")}}); err != nil || e != (Entity{User: Named("b")}) {
		t.Fatalf("a repeated type: %v %v, want user b", e, err)
	}
	e, err := ParseEntity([]Component{{Type: TypeUser}, {Type: TypeClientID, Name: str("c")}})
	if err != nil || e != (Entity{User: Default(), ClientID: Named("c")}) {
		t.Fatalf("user default + client-id: %v %v", e, err)
	}
	// Answered as Kafka's HashMap iterates: client-id, then user.
	if cs := e.Components(); len(cs) != 2 || cs[0].Type != TypeClientID || *cs[0].Name != "c" || cs[1].Type != TypeUser || cs[1].Name != nil {
		t.Fatalf("components %+v", cs)
	}
	resolves := func(host string) bool { return host == "broker.example" }
	for ip, ok := range map[string]bool{"127.0.0.1": true, "::1": true, "broker.example": true, "example.invalid": false} {
		if err := CheckIP(Entity{IP: Named(ip)}, resolves); (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("ip %s: %v, want valid %v", ip, err, ok)
		}
	}
	if err := CheckIP(Entity{IP: Default()}, resolves); err != nil {
		t.Errorf("default ip: %v", err)
	}
	for name, ops := range map[string][]Op{
		"unknown key":      {{Key: "bytes", Value: 1}},
		"ip key on a user": {{Key: ConnectionCreationRate, Value: 1}},
		"fractional bytes": {{Key: ProducerByteRate, Value: 1.5}},
		"negative":         {{Key: ConsumerByteRate, Value: -1}},
		"duplicate key":    {{Key: ProducerByteRate, Value: 1}, {Key: ProducerByteRate, Remove: true}},
	} {
		if err := ValidateOps(e, ops); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if err := ValidateOps(e, []Op{{Key: RequestPercentage, Value: 12.5}, {Key: ProducerByteRate, Value: 1024}, {Key: "unknown", Remove: true}}); err != nil {
		t.Fatal(err)
	}
	if err := ValidateOps(e, []Op{{Key: ProducerByteRate}}); err == nil || err.Error() != "Quota producer_byte_rate must be greater than 0" {
		t.Fatalf("zero quota: %v, want Kafka's message", err)
	}
}

func TestDescribe(t *testing.T) {
	c := (&Config{}).
		Alter(Entity{User: Named("alice")}, []Op{{Key: ProducerByteRate, Value: 1}}).
		Alter(Entity{User: Named("alice"), ClientID: Named("app")}, []Op{{Key: ProducerByteRate, Value: 2}}).
		Alter(Entity{User: Default()}, []Op{{Key: ConsumerByteRate, Value: 3}}).
		Alter(Entity{ClientID: Named("app")}, []Op{{Key: RequestPercentage, Value: 4}})
	count := func(f []FilterComponent, strict bool) int {
		t.Helper()
		es, err := c.Describe(f, strict)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	if n := count(nil, false); n != 4 {
		t.Fatalf("everything: %d", n)
	}
	if n := count([]FilterComponent{{Type: TypeUser, MatchType: MatchExact, Match: str("alice")}}, false); n != 2 {
		t.Fatalf("user alice, not strict: %d", n)
	}
	if n := count([]FilterComponent{{Type: TypeUser, MatchType: MatchExact, Match: str("alice")}}, true); n != 1 {
		t.Fatalf("user alice, strict: %d", n)
	}
	if n := count([]FilterComponent{{Type: TypeUser, MatchType: MatchDefault}}, false); n != 1 {
		t.Fatalf("default user: %d", n)
	}
	if n := count([]FilterComponent{{Type: TypeUser, MatchType: MatchAny}}, false); n != 3 {
		t.Fatalf("any user: %d", n)
	}
	if n := count([]FilterComponent{{Type: TypeClientID, MatchType: MatchAny}}, true); n != 1 {
		t.Fatalf("any client-id alone: %d", n)
	}
	if _, err := c.Describe([]FilterComponent{{Type: TypeUser, MatchType: MatchExact}}, false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("exact without a name: %v", err)
	}
	// Kafka's order of checks per component: an empty or repeated type is
	// invalid, then an unknown type unsupported.
	for name, f := range map[string][]FilterComponent{
		"empty type":          {{Type: "", MatchType: MatchAny}},
		"repeated":            {{Type: TypeUser, MatchType: MatchAny}, {Type: TypeUser, MatchType: MatchAny}},
		"user then empty":     {{Type: TypeUser, MatchType: MatchAny}, {Type: "", MatchType: MatchAny}},
		"ip with user":        {{Type: TypeUser, MatchType: MatchAny}, {Type: TypeIP, MatchType: MatchAny}},
		"default with a name": {{Type: TypeUser, MatchType: MatchDefault, Match: str("a")}},
	} {
		if _, err := c.Describe(f, false); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := c.Describe([]FilterComponent{{Type: "group", MatchType: MatchAny}}, false); !errors.Is(err, ErrUnsupported) || err.Error() != "Unsupported entity type group" {
		t.Fatalf("unknown type: %v, want ErrUnsupported", err)
	}
}
