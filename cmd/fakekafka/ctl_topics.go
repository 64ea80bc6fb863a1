package main

// fakekafka ctl verbs for topics: list, create, describe, delete and
// configs, over /v1/topics.

import (
	"flag"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/fakekafka/fakekafka/api"
)

// topicVerb runs verb if it is one of this file's; handled is false
// otherwise.
func (c *ctl) topicVerb(verb string, fs *flag.FlagSet, args []string) (handled bool, err error) {
	switch verb {
	case "topics":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return true, err
		}
		var tl struct {
			Topics []api.TopicState `json:"topics"`
		}
		return true, c.show("GET", "/v1/topics", nil, &tl, func() { c.printTopics(tl.Topics) })
	case "topic":
		if len(args) == 0 {
			return true, usagef("topic wants create, delete, describe or config")
		}
		return true, c.topic(args[0], args[1:])
	}
	return false, nil
}

func (c *ctl) topic(sub string, args []string) error {
	fs := flag.NewFlagSet("topic "+sub, flag.ContinueOnError)
	switch sub {
	case "create":
		partitions := fs.Int("partitions", 0, "")
		rf := fs.Int("replication-factor", 0, "")
		assignment := fs.String("replica-assignment", "", "")
		configs := keyValues(fs, "config")
		pos, err := c.args(fs, args, 1, 1, "NAME [--partitions N] [--replication-factor N] [--config KEY=VALUE]... [--replica-assignment 1:2,2:3]")
		if err != nil {
			return err
		}
		body := api.CreateTopicRequest{Name: pos[0], Configs: configs}
		if *partitions != 0 {
			body.Partitions = api.Int32(int32(*partitions))
		}
		if *rf != 0 {
			n := int16(*rf)
			body.ReplicationFactor = &n
		}
		if *assignment != "" {
			// Kafka's kafka-topics.sh form: partitions by commas, replicas by colons.
			for _, p := range strings.Split(*assignment, ",") {
				replicas, err := brokerIDList(strings.Split(p, ":"))
				if err != nil {
					return err
				}
				body.Assignment = append(body.Assignment, replicas)
			}
		}
		var ts api.TopicState
		return c.show("POST", "/v1/topics", body, &ts, func() { c.printTopic(ts) })
	case "describe", "delete":
		pos, err := c.args(fs, args, 1, 1, "NAME")
		if err != nil {
			return err
		}
		method := map[string]string{"describe": "GET", "delete": "DELETE"}[sub]
		var ts api.TopicState
		return c.show(method, "/v1/topics/"+url.PathEscape(pos[0]), nil, &ts, func() {
			if sub == "delete" {
				fmt.Fprintf(c.out, "deleted topic %s (%d partitions)\n", ts.Name, len(ts.Partitions))
				return
			}
			c.printTopic(ts)
		})
	case "config", "configs":
		set := keyValues(fs, "set")
		var del []string
		fs.Func("delete", "", func(v string) error { del = append(del, v); return nil })
		pos, err := c.args(fs, args, 1, 1, "NAME [--set KEY=VALUE]... [--delete KEY]...")
		if err != nil {
			return err
		}
		method, body := "GET", any(nil)
		if len(set) > 0 || len(del) > 0 {
			method, body = "PATCH", api.TopicConfigRequest{Set: set, Delete: del}
		}
		var cs api.TopicConfigState
		return c.show(method, "/v1/topics/"+url.PathEscape(pos[0])+"/configs", body, &cs, func() { c.printTopicConfigs(cs) })
	}
	return usagef("unknown topic verb %q (create, delete, describe, config)", sub)
}

// keyValues registers a repeatable --name KEY=VALUE flag.
func keyValues(fs *flag.FlagSet, name string) map[string]string {
	m := map[string]string{}
	fs.Func(name, "", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		m[k] = val
		return nil
	})
	return m
}

func (c *ctl) printTopics(ts []api.TopicState) {
	tw := c.table("TOPIC", "PARTITIONS", "RF", "CONFIGS")
	for _, t := range ts {
		rf := 0
		if len(t.Partitions) > 0 {
			rf = len(t.Partitions[0].Replicas)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", t.Name, len(t.Partitions), rf, configList(t.Configs))
	}
	tw.Flush()
}

// printTopic is a topic's configs, then its partitions as ctl state
// shows them.
func (c *ctl) printTopic(ts api.TopicState) {
	fmt.Fprintf(c.out, "topic %s  id %s  configs %s\n\n", ts.Name, ts.ID, or(configList(ts.Configs), "(defaults)"))
	c.printPartitions(ts.Name, ts.Partitions)
}

func (c *ctl) printTopicConfigs(cs api.TopicConfigState) {
	tw := c.table("CONFIG", "VALUE", "SOURCE")
	for _, e := range cs.Configs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Value, e.Source)
	}
	tw.Flush()
}

func configList(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, ",")
}
