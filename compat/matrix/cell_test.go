package matrix

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// cell is one client × scenario run: a testing.T that also records the
// table cell. Fatalf and Errorf record the first failure as the note.
//
// A trial cell (the first of two tries, see tryOnce) keeps its failures,
// skips and cleanups to itself and leaves the testing.T underneath
// untouched, so that a second try can still pass; its Fatal ends the
// goroutine the trial runs on.
type cell struct {
	*testing.T
	mu       sync.Mutex
	status   string
	note     string
	trial    bool
	failed   bool // a trial's failure
	skipped  bool // a trial's skip
	cleanups []func()
}

func (r *cell) Fatalf(format string, args ...any) {
	r.Helper()
	r.fail(fmt.Sprintf(format, args...))
	r.endTrial()
	r.T.Fatalf(format, args...)
}

func (r *cell) Fatal(args ...any) {
	r.Helper()
	r.fail(fmt.Sprint(args...))
	r.endTrial()
	r.T.Fatal(args...)
}

func (r *cell) FailNow() {
	r.Helper()
	r.fail("failed")
	r.endTrial()
	r.T.FailNow()
}

func (r *cell) Errorf(format string, args ...any) {
	r.Helper()
	r.fail(fmt.Sprintf(format, args...))
	if !r.trial {
		r.T.Errorf(format, args...)
	}
}

func (r *cell) Error(args ...any) {
	r.Helper()
	r.fail(fmt.Sprint(args...))
	if !r.trial {
		r.T.Error(args...)
	}
}

func (r *cell) Fail() {
	r.Helper()
	r.fail("failed")
	if !r.trial {
		r.T.Fail()
	}
}

func (r *cell) Skip(args ...any) { r.Helper(); r.skip(fmt.Sprint(args...)) }

func (r *cell) Skipf(format string, args ...any) { r.Helper(); r.skip(fmt.Sprintf(format, args...)) }

func (r *cell) SkipNow() { r.Helper(); r.skip("") }

func (r *cell) skip(msg string) {
	r.Helper()
	if !r.trial {
		r.T.Skip(msg)
	}
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	r.Logf("skipped: %s", msg)
	runtime.Goexit()
}

// endTrial ends a trial's goroutine; a cell that is not a trial goes on
// to end the testing.T's way.
func (r *cell) endTrial() {
	if r.trial {
		runtime.Goexit()
	}
}

func (r *cell) Failed() bool {
	if !r.trial {
		return r.T.Failed()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *cell) Skipped() bool {
	if !r.trial {
		return r.T.Skipped()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

func (r *cell) Cleanup(f func()) {
	if !r.trial {
		r.T.Cleanup(f)
		return
	}
	r.mu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.mu.Unlock()
}

// runCleanups runs a trial's cleanups, last registered first, as the
// testing package would at the end of the test.
func (r *cell) runCleanups() {
	r.mu.Lock()
	fs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for _, f := range slices.Backward(fs) {
		f()
	}
}

// fail records the first failure. A failure that knownBugs lists for this
// cell is recorded as such and skips the cell instead of failing it.
func (r *cell) fail(msg string) {
	r.Helper()
	r.mu.Lock()
	if r.status == statusFail || r.status == statusKnownBug {
		r.mu.Unlock()
		return
	}
	bug, known := knownBugs[r.key()]
	if known && strings.Contains(msg, bug.match) {
		r.status, r.note = statusKnownBug, bug.note
		r.mu.Unlock()
		r.Skipf("known fakekafka bug: %s\n%s", bug.note, msg)
	}
	r.status, r.note = statusFail, firstLine(msg)
	r.failed = true
	r.mu.Unlock()
	if r.trial {
		r.Logf("first try: %s", msg)
	}
}

// key is the cell's subtest name below TestMatrix: "scenario/client".
func (r *cell) key() string { return strings.TrimPrefix(r.Name(), "TestMatrix/") }

// pass records the cell's note; a later failure overrides it.
func (r *cell) pass(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status == "" {
		r.status, r.note = statusPass, fmt.Sprintf(format, args...)
	}
}

// notSupported records why the client cannot run the scenario and skips.
func (r *cell) notSupported(reason string) {
	r.Helper()
	r.mu.Lock()
	r.status, r.note = statusNotSupported, reason
	r.mu.Unlock()
	r.Skip(reason)
}

// check stops the cell on err: a NotSupportedError makes it "not
// supported", anything else fails.
func (r *cell) check(err error, what string) {
	r.Helper()
	if err == nil {
		return
	}
	if ns, ok := IsNotSupported(err); ok {
		r.notSupported(ns.Reason)
	}
	r.Fatalf("%s: %v", what, err)
}

// text is the cell as the table shows it; false for a cell the table
// does not get (skipped for a reason of its own, such as -short). stale
// says knownBugs lists the cell but it did not fail that way.
func (r *cell) text() (text string, stale, ok bool) {
	r.mu.Lock()
	status, note := r.status, r.note
	r.mu.Unlock()
	if _, known := knownBugs[r.key()]; known && status != statusKnownBug {
		status, note, stale = statusFail, "knownBugs lists this cell but it did not fail that way", true
	}
	switch {
	case r.Failed() && status != statusFail:
		status, note = statusFail, "failed (see the test log)"
	case status == "" && r.Skipped():
		return "", false, false
	case status == "":
		status, note = statusFail, "ended without a result"
	}
	text = "**" + status + "**"
	if note != "" {
		text += " — " + note
	}
	return strings.ReplaceAll(text, "|", "/"), stale, true
}

// tryOnce runs the cell once as a trial when the page has the cell to
// compare with, and reports whether the trial agreed with it. A client's
// reaction to a fault can hang on timing on a loaded machine
// (kafka-python's first join of a group has consumed nothing for 20 s,
// against Kafka 4.4 too), so a cell whose first run differs
// from the page runs once more, and the second run is the one recorded;
// the first one's log stays in the test output. A real change differs
// both times. -update-matrix runs each cell once.
func tryOnce(t *testing.T, sc scenario, cl Client) (*cell, bool) {
	if *updateMatrix {
		return nil, false
	}
	want, ok := pageCell(sc.title, cl.Name())
	if !ok {
		return nil, false
	}
	return trial(t, sc, cl, want)
}

// trial runs sc once as a trial cell and compares it with want. A trial
// that failed never agrees, even with a page that says fail: only
// knownBugs turns a failure into an accepted cell.
func trial(t *testing.T, sc scenario, cl Client, want string) (*cell, bool) {
	r := &cell{T: t, trial: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc.run(r, cl)
		r.pass("")
	}()
	<-done
	r.runCleanups()
	got, _, ok := r.text()
	if ok && got == want && !r.Failed() {
		return r, true
	}
	t.Logf("the first run differs from docs/compatibility.md; running the cell once more:\n  docs:      %s\n  first run: %s", want, got)
	return nil, false
}

// page is docs/compatibility.md's table as committed, read once.
var page struct {
	once  sync.Once
	cells map[string]map[string]string
}

// pageCell is the page's cell for a scenario and client.
func pageCell(title, client string) (string, bool) {
	page.once.Do(func() {
		if raw, err := os.ReadFile(readmePath); err == nil {
			page.cells, _ = tableOf(string(raw))
		}
	})
	v, ok := page.cells[title][client]
	return v, ok
}

// TestCellTrial: a trial's Fatal, Error and cleanups stay its own, so a
// cell that fails once and then passes ends green with the second
// result; one that differs both times is reported by the second run.
func TestCellTrial(t *testing.T) {
	var calls, cleaned int
	sc := scenario{name: "flaky", title: "flaky", run: func(r *cell, _ Client) {
		calls++
		r.Cleanup(func() { cleaned++ })
		if calls == 1 {
			r.Errorf("not this time")
			r.Fatalf("first run")
		}
		r.pass("second run")
	}}
	passed := t.Run("flaky", func(t *testing.T) {
		first, agrees := trial(t, sc, nil, "**pass** — second run")
		if agrees || first != nil {
			t.Fatalf("a failed trial agreed with the page")
		}
		if cleaned != 1 {
			t.Fatalf("the trial's cleanup ran %d times before the second run", cleaned)
		}
		r := &cell{T: t}
		sc.run(r, nil)
		if text, _, _ := r.text(); text != "**pass** — second run" {
			t.Fatalf("second run: %s", text)
		}
	})
	if !passed || calls != 2 || cleaned != 2 {
		t.Fatalf("passed %v after %d runs, %d cleanups", passed, calls, cleaned)
	}

	failing := scenario{name: "failing", title: "failing", run: func(r *cell, _ Client) { r.Fatalf("broken") }}
	t.Run("failing", func(t *testing.T) {
		if first, agrees := trial(t, failing, nil, "**fail** — broken"); agrees || first != nil {
			t.Fatalf("a failed trial agreed with a page that says fail")
		}
	})

	agreeing := scenario{name: "steady", title: "steady", run: func(r *cell, _ Client) { r.notSupported("never") }}
	t.Run("steady", func(t *testing.T) {
		first, agrees := trial(t, agreeing, nil, "**not supported** — never")
		if !agrees || !first.Skipped() || t.Skipped() {
			t.Fatalf("a not-supported trial: agrees %v, skipped %v, the test skipped %v", agrees, first.Skipped(), t.Skipped())
		}
	})
}
