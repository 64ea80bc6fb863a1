package main

// fakekafka ctl: the HTTP control API from a terminal.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fakekafka/fakekafka/api"
)

// defaultControl is the binary's own default --control address.
const defaultControl = "http://127.0.0.1:9099"

const ctlUsage = `usage: fakekafka ctl [--control URL] [--json] VERB [ARGS]

The control URL defaults to $FAKEKAFKA_CONTROL, else ` + defaultControl + `.
--json prints the API's JSON answer instead of a table.

Cluster
  state                              brokers, topics, partitions and every replica's LEO/HW
  groups [GROUP]                     consumer groups with members, offsets and lag
  events [--since N] [--type T,..] [--topic T] [--partition P] [--broker B] [--group G] [--transactional_id ID] [--subject S]
         [--follow | --wait DURATION]   --wait: until an event after --since matches (then exit)
Brokers
  crash ID | powerloss ID            stop a broker abruptly (powerloss also loses unflushed data)
  stop ID [--mode clean|crash|powerloss]   (default clean)
  start ID | restart ID              start a stopped broker
  isolate ID | heal ID               cut a broker off from the others; reconnect it
Topics
  topics                             every topic: partitions, replication factor, configs set
  topic create NAME [--partitions N] [--replication-factor N] [--config KEY=VALUE]...
               [--replica-assignment 1:2,2:3]   (Kafka's form: partitions by commas, replicas by colons)
  topic describe NAME                partitions, leaders, ISR, replicas, configs set
  topic delete NAME
  topic config NAME [--set KEY=VALUE]... [--delete KEY]...   show every config in force, or change some
Partitions
  pause TOPIC PARTITION BROKER       that follower stops fetching
  resume TOPIC PARTITION BROKER
  step TOPIC PARTITION BROKER [--up-to OFFSET]   one fetch by a paused follower
  isr TOPIC PARTITION BROKER...      set the ISR
  elect TOPIC PARTITION [LEADER] [--unclean | --preferred]
  clean TOPIC [PARTITION]            run retention and compaction now (the active segment stays)
  create-partitions TOPIC COUNT [REPLICAS...]  grow to COUNT partitions (REPLICAS: 1,2,3 per new one)
  reassign TOPIC PARTITION BROKER... move the replicas there (KIP-455); --cancel reverts
  reassignments                      reassignments in progress: replicas, adding, removing
Time and transactions
  clock                              the cluster's clock: mode, now, how far it was advanced
  advance DURATION                   move the clock forward (30s, 1500ms, 2m); everything due runs first
  transactions                       transactional ids: state, producer id/epoch, partitions, timeout
Security
  acls                               the authorizer's settings and every ACL binding
  quotas                             client quotas: entity and values
  users                              SASL users and their mechanisms
  user add NAME PASSWORD | user rm NAME
  security                           connected principals per broker and listener, recent denials
Faults
  fault add --api API [--error NAME] [--topic T] [--partition P] [--broker B] [--client-id C]
            [--count N] [--delay 100ms] [--drop-connection] [--after-work]
  fault list | faults
  fault rm ID
Schema registry
  schemas                            subjects: versions, latest id and type, compatibility and mode
  schemas show SUBJECT [VERSION|latest]   a subject's versions, or one version's schema
  schemas fault add [--method POST] [--path /subjects/*/versions] [--status 500] [--error-code 50001]
                    [--message TEXT] [--count N] [--delay 2s]   (* one path segment, a final ** any)
  schemas fault list | rm ID | clear
Chaos
  chaos start SPEC                   start a run: PRESET[,key=value...] or a JSON spec file (prints the seed)
  chaos report                       the checker's report of the active or last run
  chaos stop                         stop the run, undo its faults, print its report

Exit status: 0 on success, 1 when the API refuses or cannot be reached, 2 for bad usage.
`

// ctl is one invocation.
type ctl struct {
	base   string
	json   bool
	out    io.Writer
	client *http.Client
}

// usageError is bad command-line usage (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// apiError is an answer of 400 or more from the control API.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.msg, e.status) }

func runCtl(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	c := &ctl{base: getenv("FAKEKAFKA_CONTROL"), out: stdout, client: &http.Client{}}
	if c.base == "" {
		c.base = defaultControl
	}
	err := c.run(ctx, args)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, ctlUsage)
		return 0
	case errors.As(err, &ue):
		// One line, as the server's flags: the whole usage would bury it.
		fmt.Fprintf(stderr, "fakekafka ctl: %v (see fakekafka ctl help)\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "fakekafka ctl: %v\n", err)
		return 1
	}
}

// parse parses flags anywhere among the positional arguments, as
// "elect t 0 --unclean" wants, and returns the positionals.
func (c *ctl) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.base, "control", c.base, "control API URL")
	fs.BoolVar(&c.json, "json", c.json, "print JSON")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func (c *ctl) run(ctx context.Context, args []string) error {
	// Global flags come before the verb.
	global := flag.NewFlagSet("ctl", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	global.StringVar(&c.base, "control", c.base, "")
	global.BoolVar(&c.json, "json", false, "")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	args = global.Args()
	if len(args) == 0 {
		return usagef("missing verb")
	}
	verb, args := args[0], args[1:]
	if verb == "help" {
		return flag.ErrHelp
	}
	if !strings.Contains(c.base, "://") {
		c.base = "http://" + c.base
	}
	c.base = strings.TrimRight(c.base, "/")
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	switch verb {
	case "state", "cluster":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var st api.ClusterState
		return c.show("GET", "/v1/cluster", nil, &st, func() { c.printState(st) })
	case "crash", "powerloss", "stop":
		mode := fs.String("mode", "clean", "")
		pos, err := c.args(fs, args, 1, 1, "BROKER")
		if err != nil {
			return err
		}
		if verb != "stop" {
			*mode = verb
		}
		return c.brokerAction(pos[0], "stop", map[string]any{"mode": *mode})
	case "start", "restart", "isolate", "heal":
		pos, err := c.args(fs, args, 1, 1, "BROKER")
		if err != nil {
			return err
		}
		action := verb
		if verb == "restart" {
			action = "start"
		}
		return c.brokerAction(pos[0], action, nil)
	case "pause", "resume", "step":
		upTo := fs.Int64("up-to", -1, "")
		pos, err := c.args(fs, args, 3, 3, "TOPIC PARTITION BROKER")
		if err != nil {
			return err
		}
		action, body := verb, map[string]any(nil)
		if verb == "step" {
			action = "fetch"
			if *upTo >= 0 {
				body = map[string]any{"up_to": *upTo}
			}
		}
		return c.partitionAction(pos[0], pos[1], "/replicas/"+url.PathEscape(pos[2])+"/"+action, body)
	case "isr":
		pos, err := c.args(fs, args, 2, -1, "TOPIC PARTITION BROKER...")
		if err != nil {
			return err
		}
		isr, err := brokerIDList(pos[2:])
		if err != nil {
			return err
		}
		return c.partitionAction(pos[0], pos[1], "/isr", map[string]any{"isr": isr})
	case "elect":
		unclean := fs.Bool("unclean", false, "")
		preferred := fs.Bool("preferred", false, "")
		pos, err := c.args(fs, args, 2, 3, "TOPIC PARTITION [LEADER]")
		if err != nil {
			return err
		}
		body := map[string]any{"unclean": *unclean}
		if *preferred {
			body = map[string]any{"preferred": true}
			if *unclean || len(pos) == 3 {
				return usagef("--preferred excludes a leader and --unclean")
			}
		}
		if len(pos) == 3 {
			n, err := strconv.ParseInt(pos[2], 10, 32)
			if err != nil {
				return usagef("leader %q is not a broker id", pos[2])
			}
			body["leader"] = n
		}
		return c.partitionAction(pos[0], pos[1], "/elect", body)
	case "clean":
		return c.clean(fs, args)
	case "fault", "faults":
		return c.fault(verb, args)
	case "chaos":
		return c.chaos(args)
	case "groups", "group":
		pos, err := c.args(fs, args, 0, 1, "[GROUP]")
		if err != nil {
			return err
		}
		if len(pos) == 1 {
			var g api.GroupState
			return c.show("GET", "/v1/groups/"+url.PathEscape(pos[0]), nil, &g, func() { c.printGroups([]api.GroupState{g}) })
		}
		var gs struct {
			Groups []api.GroupState `json:"groups"`
		}
		return c.show("GET", "/v1/groups", nil, &gs, func() { c.printGroups(gs.Groups) })
	case "events":
		return c.events(ctx, fs, args)
	case "clock":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var cs api.ClockState
		return c.show("GET", "/v1/clock", nil, &cs, func() { c.printClock(cs) })
	case "advance":
		pos, err := c.args(fs, args, 1, 1, "DURATION")
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(pos[0])
		if err != nil || d < 0 {
			return usagef("duration %q: want a non-negative Go duration such as 30s or 1500ms", pos[0])
		}
		var cs api.ClockState
		return c.show("POST", "/v1/clock/advance", map[string]int64{"ms": d.Milliseconds()}, &cs, func() { c.printClock(cs) })
	case "acls":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var st api.ACLState
		return c.show("GET", "/v1/acls", nil, &st, func() { c.printACLs(st) })
	case "quotas":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var st api.QuotaState
		return c.show("GET", "/v1/quotas", nil, &st, func() { c.printQuotas(st) })
	case "transactions", "txns":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var ts struct {
			Transactions []api.TransactionState `json:"transactions"`
		}
		return c.show("GET", "/v1/transactions", nil, &ts, func() { c.printTransactions(ts.Transactions) })
	case "users", "user":
		return c.users(fs, args)
	case "security":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var st api.SecurityState
		return c.show("GET", "/v1/security", nil, &st, func() { c.printSecurity(st) })
	}
	if ok, err := c.adminVerb(verb, fs, args); ok {
		return err
	}
	if ok, err := c.topicVerb(verb, fs, args); ok {
		return err
	}
	if ok, err := c.schemaVerb(verb, args); ok {
		return err
	}
	return usagef("unknown verb %q", verb)
}

// args parses fs and checks the number of positionals (max -1: any).
func (c *ctl) args(fs *flag.FlagSet, args []string, minN, maxN int, want string) ([]string, error) {
	pos, err := c.parse(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) < minN || maxN >= 0 && len(pos) > maxN {
		if want == "" {
			return nil, usagef("%s takes no arguments, got %q", fs.Name(), pos)
		}
		return nil, usagef("%s wants %s, got %q", fs.Name(), want, pos)
	}
	return pos, nil
}

func (c *ctl) brokerAction(id, action string, body any) error {
	if _, err := strconv.ParseInt(id, 10, 32); err != nil {
		return usagef("broker id %q is not a number", id)
	}
	var st api.ClusterState
	return c.show("POST", "/v1/brokers/"+id+"/"+action, body, &st, func() { c.printState(st) })
}

func (c *ctl) partitionAction(topic, partition, rest string, body any) error {
	if _, err := strconv.ParseInt(partition, 10, 32); err != nil {
		return usagef("partition %q is not a number", partition)
	}
	var ps api.PartitionState
	return c.show("POST", "/v1/partitions/"+url.PathEscape(topic)+"/"+partition+rest, body, &ps, func() {
		c.printPartitions(topic, []api.PartitionState{ps})
	})
}

func (c *ctl) fault(verb string, args []string) error {
	sub := "list"
	if verb == "fault" {
		if len(args) == 0 {
			return usagef("fault wants add, list or rm")
		}
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("fault "+sub, flag.ContinueOnError)
	switch sub {
	case "list", "ls":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var fl struct {
			Faults []api.FaultState `json:"faults"`
		}
		return c.show("GET", "/v1/faults", nil, &fl, func() { c.printFaults(fl.Faults) })
	case "rm", "remove", "delete":
		pos, err := c.args(fs, args, 1, 1, "ID")
		if err != nil {
			return err
		}
		var f api.FaultState
		return c.show("DELETE", "/v1/faults/"+url.PathEscape(pos[0]), nil, &f, func() { c.printFaults([]api.FaultState{f}) })
	case "add":
		apiName := fs.String("api", "", "")
		errName := fs.String("error", "", "")
		topic := fs.String("topic", "", "")
		partition := fs.Int("partition", -1, "")
		broker := fs.Int("broker", 0, "")
		clientID := fs.String("client-id", "", "")
		count := fs.Int("count", 0, "")
		delay := fs.Duration("delay", 0, "")
		drop := fs.Bool("drop-connection", false, "")
		afterWork := fs.Bool("after-work", false, "")
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		body := map[string]any{"api": *apiName, "error": *errName, "topic": *topic, "broker": *broker, "client_id": *clientID,
			"count": *count, "delay_ms": delay.Milliseconds(), "drop_connection": *drop, "after_work": *afterWork}
		if *partition >= 0 {
			body["partition"] = *partition
		}
		var f api.FaultState
		return c.show("POST", "/v1/faults", body, &f, func() { c.printFaults([]api.FaultState{f}) })
	}
	return usagef("unknown fault verb %q (add, list, rm)", sub)
}

func (c *ctl) events(ctx context.Context, fs *flag.FlagSet, args []string) error {
	since := fs.Uint64("since", 0, "")
	wait := fs.Duration("wait", 0, "")
	follow := fs.Bool("follow", false, "")
	fs.BoolVar(follow, "f", false, "")
	q := url.Values{}
	for _, k := range []string{"type", "topic", "partition", "broker", "group", "transactional_id", "subject"} {
		fs.Func(k, "", func(v string) error { q.Set(k, v); return nil })
	}
	if _, err := c.args(fs, args, 0, 0, ""); err != nil {
		return err
	}
	q.Set("since", strconv.FormatUint(*since, 10))
	if *wait > 0 {
		// The API holds the answer until a match comes: the HTTP timeout
		// must outlast the wait.
		q.Set("wait_ms", strconv.FormatInt(wait.Milliseconds(), 10))
		c.client.Timeout = 30*time.Second + *wait
	}
	if !*follow {
		var evs struct {
			Events []api.Event `json:"events"`
		}
		matched := true
		err := c.show("GET", "/v1/events?"+q.Encode(), nil, &evs, func() {
			tw := c.table("SEQ", "TIME", "TYPE", "WHAT")
			for _, e := range evs.Events {
				printEvent(tw, e)
			}
			tw.Flush()
			matched = len(evs.Events) > 0
		})
		if err == nil && *wait > 0 && !matched {
			return fmt.Errorf("no matching event after %d within %v", *since, *wait)
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/events/stream?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the control API at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return readAPIError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if c.json {
			fmt.Fprintln(c.out, data)
			continue
		}
		var e api.Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return fmt.Errorf("bad event from the stream: %v", err)
		}
		tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
		printEvent(tw, e)
		tw.Flush()
	}
	if ctx.Err() != nil {
		return nil // interrupted: the normal end of --follow
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the event stream ended (fakekafka stopped?)")
}

// show calls the API and prints the answer: raw JSON with --json, else
// decoded into v and printed by table.
func (c *ctl) show(method, path string, body, v any, table func()) error {
	raw, err := c.call(method, path, body)
	if err != nil {
		return err
	}
	if c.json {
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "", "  ") != nil {
			buf.Write(raw)
		}
		fmt.Fprintln(c.out, strings.TrimSpace(buf.String()))
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("unexpected answer from %s %s: %v", method, path, err)
	}
	table()
	return nil
}

func (c *ctl) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, usagef("control URL %q: %v", c.base, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.client.Timeout == 0 {
		c.client.Timeout = 30 * time.Second
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the control API at %s (is fakekafka running? set --control or FAKEKAFKA_CONTROL): %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, readAPIError(resp)
	}
	return io.ReadAll(resp.Body)
}

func readAPIError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(string(raw))
	}
	return &apiError{resp.StatusCode, e.Error}
}
