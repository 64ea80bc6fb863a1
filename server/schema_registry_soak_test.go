package server_test

// The schema registry over time, under the failures its _schemas topic
// meets: writers register ever newer (compatible) versions of their
// subjects and re-register old ones, while the topic's leader crashes and
// restarts and a follower's crash leaves the ISR below
// min.insync.replicas. A registration may fail with a 5xx while a fault
// lasts (a real registry's does); one that was answered 200 must never be
// lost, an id must never name two schemas, and re-registering a schema
// must answer the id it got. At the end the _schemas log itself, read by a
// real consumer and replayed into a fresh State, must hold exactly what
// the registry answers.
//
// The default suite runs it for a few seconds; CI runs it longer with
// -sr-soak.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fakekafka/fakekafka/internal/testkit"
	"github.com/fakekafka/fakekafka/schemaregistry"
	"github.com/fakekafka/fakekafka/server"
	"github.com/twmb/franz-go/pkg/kgo"
)

var srSoakFor = flag.Duration("sr-soak", 3*time.Second, "how long TestSchemaRegistrySoak runs")

const srSoakWriters = 3

// soakSchema is version v of a writer's record: v int fields, every one
// after the first with a default, so each version reads the one before
// (BACKWARD).
func soakSchema(writer, v int) string {
	fields := []string{`{"name":"f1","type":"int"}`}
	for i := 2; i <= v; i++ {
		fields = append(fields, fmt.Sprintf(`{"name":"f%d","type":"int","default":0}`, i))
	}
	return fmt.Sprintf(`{"type":"record","name":"W%d","fields":[%s]}`, writer, strings.Join(fields, ","))
}

// srPost registers schema under subject; a transport error is an error,
// any answer is returned as it is.
func srPost(url, subject, schema string) (int, string, error) {
	body, _ := json.Marshal(map[string]string{"schema": schema})
	resp, err := http.Post(url+"/subjects/"+subject+"/versions", srContentType, strings.NewReader(string(body)))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

type soakAck struct {
	subject         string
	version, id     int
	schema          string
	reRegistrations int
}

type soakLedger struct {
	mu        sync.Mutex
	acked     map[string]*soakAck // subject/version
	idSchema  map[int]string      // what each id was answered for
	failures  int                 // 5xx answers
	successes int
}

func (l *soakLedger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.successes
}

// record checks and keeps one 200 answer to registering schema.
func (l *soakLedger) record(subject, schema, body string) error {
	var got struct{ ID, Version int }
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.ID < 1 || got.Version < 1 {
		return fmt.Errorf("register %s: 200 %s", subject, body)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.successes++
	if s, ok := l.idSchema[got.ID]; ok && s != schema {
		return fmt.Errorf("id %d answered for two schemas:\n%s\n%s", got.ID, s, schema)
	}
	l.idSchema[got.ID] = schema
	key := subject + "/" + strconv.Itoa(got.Version)
	if a, ok := l.acked[key]; ok {
		if a.id != got.ID || a.schema != schema {
			return fmt.Errorf("%s was id %d (%s), now id %d (%s)", key, a.id, a.schema, got.ID, schema)
		}
		a.reRegistrations++
		return nil
	}
	l.acked[key] = &soakAck{subject: subject, version: got.Version, id: got.ID, schema: schema}
	return nil
}

func TestSchemaRegistrySoak(t *testing.T) {
	c := server.NewTestCluster(t, server.Config{
		Brokers: 3, DefaultReplicationFactor: 3, MinInsyncReplicas: 2,
		SchemaRegistry: &server.SchemaRegistryConfig{},
	})
	url := c.SchemaRegistryURL()
	l := &soakLedger{acked: map[string]*soakAck{}, idSchema: map[int]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), *srSoakFor)
	defer cancel()

	var wg sync.WaitGroup
	errs := make(chan error, srSoakWriters+1)
	for w := range srSoakWriters {
		wg.Go(func() {
			subject := fmt.Sprintf("soak-%d-value", w)
			next := 1
			for i := 0; ctx.Err() == nil; i++ {
				v := next
				if i%3 == 2 && next > 1 {
					v = 1 + i%(next-1) // an old version again: must answer its id
				}
				schema := soakSchema(w, v)
				status, body, err := srPost(url, subject, schema)
				switch {
				case err != nil:
					errs <- err
					return
				case status == http.StatusOK:
					if err := l.record(subject, schema, body); err != nil {
						errs <- err
						return
					}
					if v == next {
						next++
					}
				case status >= 500:
					l.mu.Lock()
					l.failures++
					l.mu.Unlock()
				default:
					errs <- fmt.Errorf("register %s version %d: %d %s", subject, v, status, body)
					return
				}
			}
		})
	}
	// The faults, each once the writers made progress since the last: a
	// crash of the _schemas leader (a new leader from the ISR), then of
	// both followers (one replica in sync, below min.insync.replicas) for
	// as long as it takes a registration to fail.
	faults := 0
	wg.Go(func() {
		for ctx.Err() == nil {
			before := l.count()
			if !waitUntil(ctx, func() bool { return l.count() >= before+5 }) {
				return
			}
			ps, _ := c.Partition("_schemas", 0)
			if ps.Leader < 0 {
				continue // electing: the next round picks from the new leader
			}
			victims := []int32{ps.Leader}
			if faults%2 == 1 {
				victims = victims[:0]
				for _, r := range ps.Replicas {
					if r.Broker != ps.Leader {
						victims = append(victims, r.Broker)
					}
				}
			}
			l.mu.Lock()
			failed := l.failures
			l.mu.Unlock()
			for _, b := range victims {
				if err := c.StopBroker(b, server.StopCrash); err != nil {
					errs <- err
					return
				}
			}
			faults++
			if len(victims) > 1 {
				waitUntil(ctx, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.failures > failed })
			}
			for _, b := range victims {
				if err := c.StartBroker(b); err != nil {
					errs <- err
					return
				}
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	// Healed: every acknowledged registration is there, with its id.
	testkit.WaitFor(t, 10*time.Second, "every broker back in the ISR of _schemas", func() bool {
		ps, _ := c.Partition("_schemas", 0)
		return len(ps.ISR) == 3
	})
	for _, a := range l.acked {
		if got := idOf(t, url, a.subject, a.version); got != a.id {
			t.Errorf("%s version %d: id %d, acknowledged as %d", a.subject, a.version, got, a.id)
		}
	}
	// The log is the truth: a fresh State replaying what a consumer reads
	// from _schemas answers the same ids for the same versions.
	hw := int64(0)
	if ps, ok := c.Partition("_schemas", 0); ok {
		hw = ps.HighWatermark
	}
	st := schemaregistry.NewState()
	cl := testkit.NewClient(t, c, kgo.ConsumeTopics("_schemas"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	for read := int64(0); read < hw; {
		fs := cl.PollFetches(rctx)
		if err := rctx.Err(); err != nil {
			t.Fatalf("read %d of %d _schemas records: %v", read, hw, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read = r.Offset + 1
			if err := st.Replay(schemaregistry.Record{Key: r.Key, Value: r.Value}); err != nil {
				t.Errorf("offset %d: %v", r.Offset, err)
			}
		})
	}
	for _, a := range l.acked {
		v, ok := st.Version(a.subject, a.version)
		if !ok || v.ID != a.id {
			t.Errorf("_schemas replayed: %s version %d is %+v (found %v), acknowledged as id %d", a.subject, a.version, v, ok, a.id)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("%d registrations answered 200 (%d versions), %d answered 5xx, %d faults, _schemas HW %d",
		l.successes, len(l.acked), l.failures, faults, hw)
	if len(l.acked) < srSoakWriters {
		t.Errorf("only %d versions registered", len(l.acked))
	}
}

// waitUntil waits for cond, checking it each millisecond, until ctx ends;
// false when ctx ended first.
func waitUntil(ctx context.Context, cond func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}
