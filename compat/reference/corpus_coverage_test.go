package reference

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus must send every API that both clusters advertise in
// ApiVersions at every version they have in common;
// corpus_uncovered.txt names the few that cannot be, each with its reason.

// sentVersions records which versions of which API keys the corpus sent.
type sentVersions map[int16]map[int16]bool

func (s sentVersions) add(req kmsg.Request) {
	k := req.Key()
	if s[k] == nil {
		s[k] = map[int16]bool{}
	}
	s[k][req.GetVersion()] = true
}

// uncoveredEntry is one line of corpus_uncovered.txt: an API name and why
// the corpus does not send it at both ends of the common range.
type uncoveredEntry struct {
	line         int
	api, because string
}

func readUncovered(t *testing.T) []uncoveredEntry {
	f, err := os.Open("corpus_uncovered.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []uncoveredEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		api, because, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(because) == "" {
			t.Fatalf("corpus_uncovered.txt:%d: want API<tab>REASON", n)
		}
		out = append(out, uncoveredEntry{n, api, strings.TrimSpace(because)})
	}
	return out
}

// checkCoverage fails the run for every API key both clusters advertise
// that the corpus did not send at every version of the common range,
// unless corpus_uncovered.txt exempts it, and for every exemption that no
// longer applies. It returns docs/reference.md's coverage paragraph.
func checkCoverage(t *testing.T, versions map[int16][2]int16, sent sentVersions) string {
	exempt := map[string]uncoveredEntry{}
	for _, e := range readUncovered(t) {
		exempt[e.api] = e
	}
	var keys []int16
	for k := range versions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var covered []string
	var exempted []string
	for _, k := range keys {
		name := kmsg.NameForKey(k)
		vr := versions[k]
		var missing []string
		for v := vr[0]; v <= vr[1]; v++ {
			if !sent[k][v] {
				missing = append(missing, fmt.Sprintf("v%d", v))
			}
		}
		e, isExempt := exempt[name]
		delete(exempt, name)
		switch {
		case len(missing) > 0 && isExempt:
			exempted = append(exempted, fmt.Sprintf("%s (%s)", name, e.because))
		case len(missing) > 0:
			t.Errorf("the corpus does not send %s (key %d) at %s of the common range v%d-v%d: add cases, or a line to corpus_uncovered.txt with the reason",
				name, k, strings.Join(missing, " and "), vr[0], vr[1])
		case isExempt:
			t.Errorf("corpus_uncovered.txt line %d exempts %s, which the corpus covers: drop the line", e.line, name)
		default:
			vs := fmt.Sprintf("v%d", vr[0])
			if vr[1] != vr[0] {
				vs += fmt.Sprintf("–v%d", vr[1])
			}
			covered = append(covered, name+" "+vs)
		}
	}
	for _, e := range exempt {
		t.Errorf("corpus_uncovered.txt line %d exempts %s, which is not an API both clusters advertise: drop the line", e.line, e.api)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nAPIs both clusters advertise: %d. Sent at every common version (checked by the run): %d — %s.",
		len(keys), len(covered), strings.Join(covered, ", "))
	if len(exempted) > 0 {
		fmt.Fprintf(&b, " Exempt (`compat/reference/corpus_uncovered.txt`): %s.", strings.Join(exempted, "; "))
	} else {
		b.WriteString(" Exempt: none.")
	}
	b.WriteString("\n")
	return b.String()
}
