package group

// The sticky task assignor of streams groups, with Kafka 4.4's rules:
//
//   - active tasks, stateful or not, are balanced with a quota of
//     ceil(tasks/members) per member (recomputed as members fill up);
//   - a task stays with its previous active owner while that member is
//     below the quota, else goes to a previous standby holder (the least
//     loaded one) below the quota;
//   - the rest go, by subtopology then partition, to the least loaded
//     process (tasks per member), and within it to the member with the
//     fewest tasks;
//   - each stateful task gets num.standby.replicas standbys on processes
//     that do not hold it yet: its previous active owner first, then its
//     previous standby holders, then the least loaded processes. A task
//     never has an active and a standby in one process.
//
// Kafka 4.4 hands out no warm-up tasks: its assignment refiner returns
// the assignor's target as is. Ties the Java assignor leaves to hash
// order are broken by id here, so an assignment is a function of its
// input.

import (
	"cmp"
	"slices"
)

// AssignMember is a member as the assignor sees it: its process and its
// previous target.
type AssignMember struct {
	ID, ProcessID string
	Prev          TaskSet
}

type taskID struct {
	sub string
	p   int32
}

type processLoad struct {
	id      string
	members []string // sorted
	counts  map[string]int
	total   int
	tasks   map[taskID]bool // active or standby in this process
}

func (pl *processLoad) load() float64 { return float64(pl.total) / float64(len(pl.members)) }

func (pl *processLoad) leastLoadedMember() string {
	best := pl.members[0]
	for _, m := range pl.members[1:] {
		if pl.counts[m] < pl.counts[best] {
			best = m
		}
	}
	return best
}

func quotaOf(tasks, members int) int {
	if members == 0 {
		return 0
	}
	return (tasks + members - 1) / members
}

type stickyState struct {
	procs    map[string]*processLoad
	order    []*processLoad // by id
	memberPr map[string]*processLoad
	out      map[string]TaskSet
	// quotas as Kafka keeps them: a member reaching the quota leaves the
	// pool and the quota is recomputed for the others.
	activeQ, activeLeft, activeMembers int
	totalQ, totalLeft, totalMembers    int
	prevActive                         map[taskID]string
	prevStandby                        map[taskID][]string
}

func (st *stickyState) add(member string, t taskID, active bool) int {
	pl := st.memberPr[member]
	pl.counts[member]++
	pl.total++
	pl.tasks[t] = true
	ts := st.out[member]
	if active {
		ts.Active.Add(t.sub, t.p)
	} else {
		ts.Standby.Add(t.sub, t.p)
	}
	n := pl.counts[member]
	if active && n == st.activeQ {
		st.activeMembers--
		st.activeLeft -= n
		st.activeQ = quotaOf(st.activeLeft, st.activeMembers)
	}
	if n == st.totalQ {
		st.totalMembers--
		st.totalLeft -= n
		st.totalQ = quotaOf(st.totalLeft, st.totalMembers)
	}
	return n
}

// leastLoadedProcess is the process with the lowest load that accepts;
// ties: the first by id.
func (st *stickyState) leastLoadedProcess(accept func(*processLoad) bool) *processLoad {
	var best *processLoad
	for _, pl := range st.order {
		if !accept(pl) {
			continue
		}
		if best == nil {
			best = pl
			continue
		}
		if pl.load() < best.load() {
			best = pl
		}
	}
	return best
}

// AssignStreamsTasks computes the target assignment of members for a
// configured topology with numStandby standby replicas per stateful task.
func AssignStreamsTasks(members []AssignMember, ct *ConfiguredTopology, numStandby int) map[string]TaskSet {
	st := &stickyState{procs: map[string]*processLoad{}, memberPr: map[string]*processLoad{}, out: map[string]TaskSet{},
		prevActive: map[taskID]string{}, prevStandby: map[taskID][]string{}}
	slices.SortFunc(members, func(a, b AssignMember) int { return cmp.Compare(a.ID, b.ID) })
	for _, m := range members {
		pl := st.procs[m.ProcessID]
		if pl == nil {
			pl = &processLoad{id: m.ProcessID, counts: map[string]int{}, tasks: map[taskID]bool{}}
			st.procs[m.ProcessID] = pl
			st.order = append(st.order, pl)
		}
		pl.members = append(pl.members, m.ID)
		st.memberPr[m.ID] = pl
		st.out[m.ID] = TaskSet{Active: Tasks{}, Standby: Tasks{}, Warmup: Tasks{}}
		for sub, ps := range m.Prev.Active {
			for _, p := range ps {
				st.prevActive[taskID{sub, p}] = m.ID
			}
		}
		for _, prev := range []Tasks{m.Prev.Standby, m.Prev.Warmup} {
			for sub, ps := range prev {
				for _, p := range ps {
					t := taskID{sub, p}
					if !slices.Contains(st.prevStandby[t], m.ID) {
						st.prevStandby[t] = append(st.prevStandby[t], m.ID)
					}
				}
			}
		}
	}
	slices.SortFunc(st.order, func(a, b *processLoad) int { return cmp.Compare(a.id, b.id) })
	if len(members) == 0 || !ct.Ready() {
		return st.out
	}

	var stateful, stateless []taskID
	nStateful, nActive := 0, 0
	for _, sub := range slices.Sorted(mapKeys(ct.Tasks)) {
		for p := 0; p < ct.Tasks[sub]; p++ {
			if ct.Stateful[sub] {
				stateful = append(stateful, taskID{sub, int32(p)})
			} else {
				stateless = append(stateless, taskID{sub, int32(p)})
			}
		}
		nActive += ct.Tasks[sub]
		if ct.Stateful[sub] {
			nStateful += ct.Tasks[sub]
		}
	}
	n := len(members)
	st.activeLeft, st.activeMembers, st.activeQ = nActive, n, quotaOf(nActive, n)
	total := nActive + nStateful*numStandby
	st.totalLeft, st.totalMembers, st.totalQ = total, n, quotaOf(total, n)

	st.assignActive(append(slices.Clone(stateful), stateless...))
	if numStandby > 0 {
		st.assignStandby(stateful, numStandby)
	}
	return st.out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (st *stickyState) underActiveQuota(member string) bool {
	return st.memberPr[member].counts[member] < st.activeQ
}

func (st *stickyState) assignActive(tasks []taskID) {
	byPartition := func(a, b taskID) int { return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.sub, b.sub)) }
	slices.SortFunc(tasks, byPartition)
	rest := tasks[:0:0]
	// 1. previous active owners, while below the quota
	for _, t := range tasks {
		if m, ok := st.prevActive[t]; ok && st.memberPr[m] != nil && st.underActiveQuota(m) {
			st.add(m, t, true)
			continue
		}
		rest = append(rest, t)
	}
	// 2. previous standby holders, the least loaded one
	tasks, rest = rest, nil
	for _, t := range tasks {
		if m := st.prevMemberWithLeastLoad(t, false); m != "" && st.underActiveQuota(m) {
			st.add(m, t, true)
			continue
		}
		rest = append(rest, t)
	}
	// 3. the rest by subtopology, to the least loaded process
	slices.SortFunc(rest, func(a, b taskID) int { return cmp.Or(cmp.Compare(a.sub, b.sub), cmp.Compare(a.p, b.p)) })
	for _, t := range rest {
		pl := st.leastLoadedProcess(func(*processLoad) bool { return true })
		st.add(pl.leastLoadedMember(), t, true)
	}
}

// prevMemberWithLeastLoad is the previous standby holder of t with the
// least load (with skipHolders: whose process does not hold t yet).
func (st *stickyState) prevMemberWithLeastLoad(t taskID, skipHolders bool) string {
	best := ""
	var bestPL, bestML float64
	for _, m := range st.prevStandby[t] {
		pl := st.memberPr[m]
		if pl == nil || skipHolders && pl.tasks[t] {
			continue
		}
		l, ml := pl.load(), float64(pl.counts[m])
		if best == "" || l < bestPL && ml < bestML {
			best, bestPL, bestML = m, l, ml
		}
	}
	return best
}

func (st *stickyState) assignStandby(tasks []taskID, replicas int) {
	type toAssign struct {
		t    taskID
		left int
	}
	tasks = slices.Clone(tasks)
	slices.SortFunc(tasks, func(a, b taskID) int { return cmp.Or(cmp.Compare(b.p, a.p), cmp.Compare(b.sub, a.sub)) })
	var later []toAssign
	for _, t := range tasks {
		left := replicas
		for left > 0 {
			// the previous active owner keeps the state: it is first
			if m, ok := st.prevActive[t]; ok && st.memberPr[m] != nil && !st.memberPr[m].tasks[t] && st.memberPr[m].counts[m] < st.totalQ {
				st.add(m, t, false)
				left--
				continue
			}
			m := st.prevMemberWithLeastLoad(t, true)
			if m == "" || st.memberPr[m].counts[m] >= st.totalQ {
				break
			}
			st.add(m, t, false)
			left--
		}
		if left > 0 {
			later = append(later, toAssign{t, left})
		}
	}
	slices.SortFunc(later, func(a, b toAssign) int { return cmp.Or(cmp.Compare(b.t.sub, a.t.sub), cmp.Compare(b.t.p, a.t.p)) })
	for _, ta := range later {
		for range ta.left {
			pl := st.leastLoadedProcess(func(pl *processLoad) bool { return !pl.tasks[ta.t] })
			if pl == nil {
				break // not enough processes for the standbys asked for
			}
			st.add(pl.leastLoadedMember(), ta.t, false)
		}
	}
}
