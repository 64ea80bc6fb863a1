package main

import (
	"bytes"
	"context"
	"io"
	"runtime/debug"
	"strings"
	"testing"
)

func TestHelpIsGroupedWithOneDefaultPerFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, env(nil), &stdout, &stderr); code != 0 {
		t.Fatalf("--help: exit %d, stderr %q", code, stderr.String())
	}
	help := stdout.String()
	if !strings.HasPrefix(help, "fakekafka is a Kafka test double") {
		t.Errorf("--help starts %q; want what the program is first", help[:min(len(help), 60)])
	}
	for _, want := range []string{"fakekafka ctl VERB", "fakekafka healthcheck", "fakekafka probe", "fakekafka --version",
		"\nCluster:\n", "\nReplication:\n", "\nFailures:\n", "\nTransactions:\n", "\nSecurity and quotas:\n", "\nStorage:\n", "\nControl and logs:\n",
		"PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if strings.Contains(help, "only PLAINTEXT") {
		t.Error("--help still says only PLAINTEXT is served")
	}
	for _, line := range strings.Split(help, "\n") {
		if n := strings.Count(line, "(default"); n > 1 {
			t.Errorf("%d defaults on one line: %q", n, line)
		}
	}

	// Every flag is listed exactly once, in a group: an ungrouped one would
	// show under "Other".
	if strings.Contains(help, "\nOther:\n") {
		t.Errorf("flags outside every group: %s", help[strings.Index(help, "\nOther:\n"):])
	}
	seen := map[string]int{}
	for _, line := range strings.Split(help, "\n") {
		if name, ok := strings.CutPrefix(line, "  --"); ok {
			seen[strings.Fields(name)[0]]++
		}
	}
	for _, g := range flagGroups {
		for _, n := range g.names {
			if seen[n] != 1 {
				t.Errorf("flag --%s is listed %d times (not defined, or in two groups)", n, seen[n])
			}
		}
	}
}

func TestUnknownFlagIsOneLine(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--brokerz", "3"}, env(nil), &stdout, &stderr)
	if code != 2 || stdout.Len() != 0 || stderr.String() != "fakekafka: unknown flag --brokerz (see fakekafka --help)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestVersion(t *testing.T) {
	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, env(map[string]string{"FAKEKAFKA_BROKERS": "0"}), &stdout, io.Discard); code != 0 ||
		!strings.HasPrefix(stdout.String(), "fakekafka ") {
		t.Fatalf("--version: exit %d, %q", code, stdout.String())
	}
	info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/fakekafka/fakekafka", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "208a245"}, {Key: "vcs.modified", Value: "true"}}}
	if got := versionText(info, true); !strings.HasPrefix(got, "fakekafka v0.4.0 (208a245, modified) go") {
		t.Errorf("versionText = %q", got)
	}
	if got := versionText(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true); !strings.HasPrefix(got, "fakekafka (devel) go") {
		t.Errorf("versionText from a checkout = %q", got)
	}
	// Built as a dependency, as the testcontainers module builds its image.
	dep := &debug.BuildInfo{Main: debug.Module{Path: "fakekafka-image", Version: "(devel)"},
		Deps: []*debug.Module{{Path: "github.com/fakekafka/fakekafka/api", Version: "v0.99.0"}, {Path: "github.com/fakekafka/fakekafka", Version: "v0.99.0"}}}
	if got := versionText(dep, true); !strings.HasPrefix(got, "fakekafka v0.99.0 go") {
		t.Errorf("versionText as a dependency = %q", got)
	}
	if got := versionText(nil, false); !strings.HasPrefix(got, "fakekafka (unknown) go") {
		t.Errorf("versionText without build info = %q", got)
	}
}

func TestCtlUsageErrorIsOneLine(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"ctl", "--bogus", "state"}, env(nil), &stdout, &stderr)
	if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasSuffix(stderr.String(), "(see fakekafka ctl help)\n") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
