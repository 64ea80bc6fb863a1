package reference

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus's answer per API key: how many cases each API got, at which
// versions, how many compared identical and how many differ only as the
// allowlist explains (and by which of its lines), and how many were error
// paths: an answer carrying a non-zero error code anywhere, or a closed
// connection, on Kafka's side.

// apiStats is one API key's row of the table.
type apiStats struct {
	cases, identical, allowed, errorPaths int
	versions                              map[int16]bool
	lines                                 map[int]bool // allowlist lines used
}

type apiTable map[int16]*apiStats

func (a apiTable) row(key int16) *apiStats {
	s := a[key]
	if s == nil {
		s = &apiStats{versions: map[int16]bool{}, lines: map[int]bool{}}
		a[key] = s
	}
	return s
}

// isErrorPath reports whether doc, a normalised answer, is an error: a
// closed connection or any non-zero ErrorCode field.
func isErrorPath(doc any) bool {
	switch d := doc.(type) {
	case string:
		return d == closedConn
	case map[string]any:
		for k, v := range d {
			if k == "ErrorCode" {
				if n, ok := v.(float64); ok && n != 0 {
					return true
				}
			}
			if isErrorPath(v) {
				return true
			}
		}
	case []any:
		for _, v := range d {
			if isErrorPath(v) {
				return true
			}
		}
	}
	return false
}

// markdown renders the table, every API key both clusters advertise in
// key order (an API with no case shows 0 and fails coverage elsewhere).
func (a apiTable) markdown(versions map[int16][2]int16, allow allowlist) string {
	var keys []int16
	for k := range versions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("\n| key | API | versions (common) | cases | identical | differ as allowed | allowlist lines | error paths |\n|---:|---|---|---:|---:|---:|---|---:|\n")
	var total apiStats
	for _, k := range keys {
		s := a.row(k)
		vr := versions[k]
		var lines []string
		var ls []int
		for l := range s.lines {
			ls = append(ls, l)
		}
		slices.Sort(ls)
		for _, i := range ls {
			lines = append(lines, fmt.Sprint(allow[i].line))
		}
		fmt.Fprintf(&b, "| %d | %s | v%d–v%d (%d of %d) | %d | %d | %d | %s | %d |\n", k, kmsg.NameForKey(k), vr[0], vr[1],
			len(s.versions), vr[1]-vr[0]+1, s.cases, s.identical, s.allowed, strings.Join(lines, ", "), s.errorPaths)
		total.cases += s.cases
		total.identical += s.identical
		total.allowed += s.allowed
		total.errorPaths += s.errorPaths
	}
	fmt.Fprintf(&b, "| | **all** | | %d | %d | %d | | %d |\n", total.cases, total.identical, total.allowed, total.errorPaths)
	return b.String()
}

// middleVersionCases sends each API at every common version strictly
// between its oldest and newest, after every other case, so the cases
// before them see the state they always saw; stateful requests (a
// partition count raised, a marker written) then meet the state the
// newest left, identically on both clusters.
func middleVersionCases(versions map[int16][2]int16) []corpusCase {
	var keys []int16
	for k := range versions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []corpusCase
	for _, k := range keys {
		vr := versions[k]
		for v := vr[0] + 1; v < vr[1]; v++ {
			if k == kmsg.Fetch.Int16() {
				// Partition 0 now holds batches of producers whose ids
				// each cluster picks; a 1-byte partition limit answers
				// the first batch only, whole (KIP-74).
				v := v
				out = append(out, corpusCase{name: fmt.Sprintf("Fetch/v%d-first-batch", v), req: func(e *corpusEnv) kmsg.Request {
					req := fetchReq(v, e, "corpus", 0, 3)
					req.Topics[0].Partitions[0].PartitionMaxBytes = 1
					return req
				}})
				continue
			}
			if c, ok := validCase(k, v); ok {
				if k == kmsg.JoinGroup.Int16() && v < 4 {
					// A new member joins at once (no member id round
					// trip); the one before it never syncs. Each case
					// goes to Kafka first, whose join would wait for the
					// previous member's session (6 s) while fakekafka's
					// previous member expires meanwhile: each waits for
					// its previous member's expiry instead.
					c.settle = waitGroupState("cg", "Empty")
				}
				out = append(out, c)
			} else if c, ok := adminCase(k, v, false); ok {
				out = append(out, c)
			} else if c, ok := wireKeysCase(k, v, false); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// waitGroupState waits until group (classic) is in state, as
// DescribeGroups answers.
func waitGroupState(group, state string) func(*run, *corpusEnv) {
	return func(r *run, _ *corpusEnv) {
		r.waitFor(fmt.Sprintf("group %s %s", group, state), func() bool {
			req := at(5, kmsg.NewPtrDescribeGroupsRequest())
			req.Groups = []string{group}
			gs := r.do(r.coordinator(group), req).(*kmsg.DescribeGroupsResponse).Groups
			return len(gs) == 1 && gs[0].ErrorCode == 0 && gs[0].State == state
		})
	}
}
