package main

import (
	"fmt"
	"sort"
	"strings"
)

// brokerConfigs is --broker-config NAME=VALUE (repeatable): any of Kafka's
// broker configs by name, as server.properties sets it (Config.BrokerConfigs).
// Its environment form, FAKEKAFKA_BROKER_CONFIG, takes one NAME=VALUE per
// line, since values may hold commas and semicolons.
type brokerConfigs struct{ m *map[string]string }

func (v brokerConfigs) String() string {
	if v.m == nil {
		return ""
	}
	var out []string
	for k, val := range *v.m {
		out = append(out, k+"="+val)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func (v brokerConfigs) Set(s string) error {
	if *v.m == nil {
		*v.m = map[string]string{}
	}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("want NAME=VALUE, got %q", line)
		}
		(*v.m)[strings.TrimSpace(name)] = val
	}
	return nil
}
