package main

import (
	"fmt"
	"sort"
	"strings"
)

// saslUsers parses --sasl-user NAME:PASSWORD, repeatable; one value may
// also list several, comma-separated (FAKEKAFKA_SASL_USERS).
type saslUsers struct{ m *map[string]string }

func (v saslUsers) String() string {
	if v.m == nil {
		return ""
	}
	names := make([]string, 0, len(*v.m))
	for n := range *v.m {
		names = append(names, n+":***")
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func (v saslUsers) Set(s string) error {
	if *v.m == nil {
		*v.m = map[string]string{}
	}
	for _, item := range strings.Split(s, ",") {
		name, pw, ok := strings.Cut(item, ":")
		if !ok || name == "" {
			return fmt.Errorf("want NAME:PASSWORD, got %q", item)
		}
		if pw == "" {
			return fmt.Errorf("user %s has an empty password", name)
		}
		(*v.m)[name] = pw
	}
	return nil
}
