package main

// The tables fakekafka ctl prints.

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fakekafka/fakekafka/api"
)

func (c *ctl) table(headers ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	return tw
}

func ids(v []int32) string {
	s := make([]string, len(v))
	for i, id := range v {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

func brokerStatus(b api.BrokerState) string {
	switch {
	case b.Isolated:
		return "isolated"
	case b.Up:
		return "up"
	case b.Fenced:
		return "down, fenced"
	}
	return "down"
}

func (c *ctl) printState(st api.ClusterState) {
	tw := c.table("BROKER", "ADDRESS", "STATUS", "")
	for _, b := range st.Brokers {
		ctrl := ""
		if b.ID == st.Controller {
			ctrl = "controller"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", b.ID, b.Address, brokerStatus(b), ctrl)
	}
	tw.Flush()
	for _, t := range st.Topics {
		fmt.Fprintln(c.out)
		c.printPartitions(t.Name, t.Partitions)
	}
}

func (c *ctl) printPartitions(topic string, ps []api.PartitionState) {
	tw := c.table("TOPIC", "PARTITION", "LEADER", "EPOCH", "ISR", "HW", "REPLICAS (broker:state start/LEO/HW)")
	for _, p := range ps {
		var reps []string
		for _, r := range p.Replicas {
			s := fmt.Sprintf("%d:%s %d/%d/%d", r.Broker, r.State, r.LogStartOffset, r.LogEndOffset, r.HighWatermark)
			if r.Paused {
				s += " paused"
			}
			if !r.InSync {
				s += " out-of-sync"
			}
			s += reassignmentRole(p, r.Broker)
			reps = append(reps, s)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t%s\n", topic, p.Partition, p.Leader, p.LeaderEpoch, ids(p.ISR), p.HighWatermark, strings.Join(reps, "  "))
	}
	tw.Flush()
}

func (c *ctl) printFaults(fs []api.FaultState) {
	tw := c.table("ID", "API", "ERROR", "BROKER", "TOPIC", "PARTITION", "COUNT", "DELAY", "HITS", "REMAINING")
	for _, f := range fs {
		part := "*"
		if f.Partition != nil {
			part = strconv.Itoa(int(*f.Partition))
		}
		remaining := strconv.Itoa(f.Remaining)
		if f.Remaining < 0 {
			remaining = "unlimited"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%d\t%dms\t%d\t%s\n", f.ID, or(f.API, "*"), or(f.Error, "-"), f.Broker, or(f.Topic, "*"), part, f.Count, f.DelayMillis, f.Hits, remaining)
	}
	tw.Flush()
}

func (c *ctl) printGroups(gs []api.GroupState) {
	tw := c.table("GROUP", "TYPE", "STATE", "GENERATION", "COORDINATOR", "MEMBERS")
	for _, g := range gs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", g.Group, g.Type, g.State, g.Generation, g.Coordinator, len(g.Members))
	}
	tw.Flush()
	for _, g := range gs {
		if len(g.Members) > 0 {
			fmt.Fprintln(c.out)
			tw := c.table("GROUP", "MEMBER", "CLIENT", "HOST", "ASSIGNMENT")
			for _, m := range g.Members {
				var as []string
				for t, ps := range m.Assignment {
					as = append(as, t+":"+ids(ps))
				}
				sort.Strings(as)
				if m.Streams != nil { // a streams member: its process and tasks
					as = append([]string{"process=" + m.Streams.ProcessID}, streamsTasks(m.Streams.Tasks)...)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", g.Group, m.MemberID, m.ClientID, m.ClientHost, strings.Join(as, " "))
			}
			tw.Flush()
		}
		if len(g.SharePartitions) > 0 {
			fmt.Fprintln(c.out)
			tw := c.table("GROUP", "TOPIC", "PARTITION", "LEADER", "START", "END", "IN FLIGHT")
			for _, sp := range g.SharePartitions {
				var recs []string
				for _, r := range sp.InFlight {
					recs = append(recs, fmt.Sprintf("%d:%s×%d", r.Offset, strings.ToLower(r.State), r.DeliveryCount))
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", g.Group, sp.Topic, sp.Partition, sp.Leader, sp.StartOffset, sp.EndOffset, or(strings.Join(recs, " "), "-"))
			}
			tw.Flush()
		}
		if len(g.Offsets) > 0 {
			fmt.Fprintln(c.out)
			tw := c.table("GROUP", "TOPIC", "PARTITION", "COMMITTED", "HW", "LAG")
			for _, o := range g.Offsets {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", g.Group, o.Topic, o.Partition, o.Offset, o.HighWatermark, o.Lag)
			}
			tw.Flush()
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// printEvent writes one event as a table row: seq, time, type and a
// summary of its fields.
func printEvent(tw *tabwriter.Writer, e api.Event) {
	fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", e.Seq, e.Time.Format("15:04:05.000"), e.Type, eventSummary(e))
}

func eventSummary(e api.Event) string {
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	if e.Topic != "" {
		if e.Partition >= 0 {
			add("%s/%d", e.Topic, e.Partition)
		} else {
			add("topic %s", e.Topic)
		}
	}
	if e.Group != "" {
		add("group %s", e.Group)
	}
	if e.Member != "" {
		add("member %s", e.Member)
	}
	if e.TransactionalID != "" {
		add("txn %s producer %d epoch %d", e.TransactionalID, e.ProducerID, e.ProducerEpoch)
	}
	if e.Subject != "" || strings.HasPrefix(string(e.Type), "schema_") {
		add("%s", schemaEventSummary(e))
	}
	if e.PreviousState != "" {
		add("%s -> %s", e.PreviousState, e.State)
	} else if e.State != "" {
		add("%s", e.State)
	}
	for _, tp := range e.Partitions {
		add("%s/%d", tp.Topic, tp.Partition)
	}
	switch e.Type {
	case api.EventLeaderElected:
		add("leader %d (was %d) epoch %d", e.Leader, e.OldLeader, e.Epoch)
		if e.Unclean {
			add("UNCLEAN")
		}
	case api.EventHWAdvanced:
		add("HW %d -> %d", e.From, e.To)
	case api.EventLSOAdvanced:
		add("LSO %d -> %d", e.From, e.To)
	case api.EventLogStartMoved:
		add("replica %d log start %d -> %d", e.Broker, e.From, e.To)
	case api.EventLogTruncated:
		add("replica %d LEO %d -> %d", e.Broker, e.From, e.To)
	case api.EventRecordsLost:
		add("offsets %d-%d LOST (leader %d)", e.From, e.To-1, e.Broker)
	default:
		if e.Broker >= 0 {
			add("broker %d", e.Broker)
		}
	}
	if e.ISR != nil {
		add("isr [%s]", ids(e.ISR))
	}
	if e.Mode != "" {
		add("mode %s", e.Mode)
	}
	if e.Fault != "" {
		add("fault %s", e.Fault)
	}
	if e.Generation >= 0 && e.Group != "" {
		add("generation %d", e.Generation)
	}
	if e.Reason != "" {
		add("(%s)", e.Reason)
	}
	if e.Detail != "" {
		add("%s", e.Detail)
	}
	if len(e.Configs) > 0 {
		keys := make([]string, 0, len(e.Configs))
		for k := range e.Configs {
			keys = append(keys, k+"="+e.Configs[k])
		}
		sort.Strings(keys)
		add("%s", strings.Join(keys, " "))
	}
	return strings.Join(parts, " ")
}

// schemaEventSummary says which subject, version and schema an event of
// the registry names.
func schemaEventSummary(e api.Event) string {
	parts := []string{"subject " + or(e.Subject, "(global)")}
	if e.Version >= 0 {
		parts = append(parts, fmt.Sprintf("version %d", e.Version))
	}
	if e.SchemaID >= 0 {
		parts = append(parts, fmt.Sprintf("id %d", e.SchemaID))
	}
	if e.SchemaType != "" {
		parts = append(parts, e.SchemaType)
	}
	switch {
	case e.Type == api.EventSchemaDeleted && e.Permanent:
		parts = append(parts, "permanent")
	case e.Type == api.EventSchemaDeleted:
		parts = append(parts, "soft")
	}
	if len(e.Messages) > 0 {
		parts = append(parts, strings.Join(e.Messages, "; "))
	}
	return strings.Join(parts, " ")
}

func (c *ctl) printClock(cs api.ClockState) {
	fmt.Fprintf(c.out, "clock %s: now %s (%d ms), advanced %v, %d timers waiting\n",
		cs.Mode, cs.Now.UTC().Format(time.RFC3339Nano), cs.NowMillis, time.Duration(cs.AdvancedMillis)*time.Millisecond, cs.Timers)
}

func (c *ctl) printTransactions(ts []api.TransactionState) {
	if len(ts) == 0 {
		fmt.Fprintln(c.out, "no transactional ids")
		return
	}
	w := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TRANSACTIONAL ID\tCOORDINATOR\tSTATE\tPRODUCER\tEPOCH\tTIMEOUT\tTV\tPARTITIONS")
	for _, t := range ts {
		var parts []string
		for _, p := range t.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%d\t%v\t%d\t%s\n", t.TransactionalID, t.Coordinator, t.State, t.ProducerID, t.ProducerEpoch,
			time.Duration(t.TimeoutMs)*time.Millisecond, t.TransactionVersion, strings.Join(parts, " "))
	}
	w.Flush()
}

func (c *ctl) printACLs(st api.ACLState) {
	switch {
	case !st.Authorizer:
		fmt.Fprintln(c.out, "authorizer off (--authorizer): every request is allowed")
	case len(st.SuperUsers) > 0:
		fmt.Fprintf(c.out, "authorizer on; super users: %s; allow.everyone.if.no.acl.found=%v\n", strings.Join(st.SuperUsers, " "), st.AllowEveryoneIfNoACLFound)
	default:
		fmt.Fprintf(c.out, "authorizer on; no super users; allow.everyone.if.no.acl.found=%v\n", st.AllowEveryoneIfNoACLFound)
	}
	if len(st.ACLs) == 0 {
		fmt.Fprintln(c.out, "no ACLs")
		return
	}
	w := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PRINCIPAL\tPERMISSION\tOPERATION\tRESOURCE\tPATTERN\tNAME\tHOST")
	for _, a := range st.ACLs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Principal, a.Permission, a.Operation, a.ResourceType, a.PatternType, a.ResourceName, a.Host)
	}
	w.Flush()
}

func (c *ctl) printQuotas(st api.QuotaState) {
	if len(st.Quotas) == 0 {
		fmt.Fprintln(c.out, "no client quotas")
		return
	}
	w := tabwriter.NewWriter(c.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ENTITY\tQUOTAS")
	for _, q := range st.Quotas {
		var ent, vals []string
		for _, typ := range []string{"user", "client-id", "ip"} {
			if name, ok := q.Entity[typ]; ok {
				n := "<default>"
				if name != nil {
					n = *name
				}
				ent = append(ent, typ+"="+n)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(q.Values)) {
			vals = append(vals, fmt.Sprintf("%s=%g", k, q.Values[k]))
		}
		fmt.Fprintf(w, "%s\t%s\n", strings.Join(ent, ","), strings.Join(vals, " "))
	}
	w.Flush()
}

// streamsTasks is a streams member's tasks: "active=0:0,1;1:2", then the
// standby and warm-up ones when it has any.
func streamsTasks(t api.StreamsTasks) []string {
	var out []string
	for _, k := range []struct {
		name  string
		tasks map[string][]int32
	}{{"active", t.Active}, {"standby", t.Standby}, {"warmup", t.Warmup}} {
		var subs []string
		for s, ps := range k.tasks {
			subs = append(subs, s+":"+ids(ps))
		}
		sort.Strings(subs)
		if len(subs) > 0 || k.name == "active" {
			out = append(out, k.name+"="+strings.Join(subs, ";"))
		}
	}
	return out
}
