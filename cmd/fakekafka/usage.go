package main

// fakekafka --help and --version: flags grouped by what they are about,
// each with one default, and the subcommands named up front.

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
)

const helpIntro = `fakekafka is a Kafka test double that replicates for real: one process runs
several brokers on their own ports, speaks the Kafka protocol to any client, and
keeps every partition as real replicas with their own LEO, HW and ISR. Failures
(crashes, lagging followers, elections, injected errors) happen on demand
through the HTTP control API, fakekafka ctl or the Go API.

Usage:
  fakekafka [FLAGS]              run a cluster until interrupted
  fakekafka ctl VERB [ARGS]      drive a running cluster (fakekafka ctl help)
  fakekafka healthcheck [--live] exit 0 once the control API answers /readyz
  fakekafka probe HOST:PORT      Metadata, then reach every advertised broker
  fakekafka --version            print the version

Every flag also reads FAKEKAFKA_ and its name in upper case with dashes as
underscores (FAKEKAFKA_MIN_INSYNC_REPLICAS=2); the command line wins.
`

// flagGroups orders the flags in --help; every flag is in exactly one
// group (a test checks it).
var flagGroups = []struct {
	title string
	names []string
}{
	{"Cluster", []string{"brokers", "listen", "advertise", "listeners", "advertised-listeners",
		"listener-security-protocol-map", "cluster-id", "topics", "num-partitions", "default-replication-factor",
		"auto-create-topics", "message-max-bytes", "socket-request-max-bytes", "broker-config"}},
	{"Replication", []string{"min-insync-replicas", "replica-lag-time-max", "replica-fetch-wait-max",
		"unclean-leader-election", "legacy-min-isr", "legacy-hw-truncation", "producer-id-expiration",
		"producer-id-expiration-check-interval"}},
	{"Failures", []string{"timing", "broker-session-timeout", "chaos", "clock"}},
	{"Groups", []string{"offsets-retention-minutes", "offsets-retention-check-interval", "group-consumer-migration-policy",
		"share-coordinator-state-topic-num-partitions"}},
	{"Transactions", []string{"transaction-version", "transaction-state-log-num-partitions", "transaction-max-timeout",
		"transaction-abort-timed-out-transaction-cleanup-interval", "transactional-id-expiration"}},
	{"Security and quotas", []string{"tls-dir", "tls-client-auth", "ssl-principal-mapping-rules", "sasl-kerberos-principal-to-local-rules", "sasl-user", "sasl-enabled-mechanisms",
		"sasl-session-lifetime", "delegation-token-secret-key", "delegation-token-max-lifetime", "delegation-token-expiry-time",
		"delegation-token-expiry-check-interval", "authorizer", "super-user", "allow-everyone-if-no-acl-found", "quota-window-num",
		"quota-window-size"}},
	{"OAuth (OAUTHBEARER)", []string{"sasl-oauthbearer-jwks-endpoint-url", "sasl-oauthbearer-jwks-endpoint-refresh-ms",
		"sasl-oauthbearer-expected-audience", "sasl-oauthbearer-expected-issuer", "sasl-oauthbearer-allow-unverified-audience",
		"sasl-oauthbearer-allow-unverified-issuer", "sasl-oauthbearer-scope-claim-name",
		"sasl-oauthbearer-sub-claim-name", "sasl-oauthbearer-clock-skew-seconds", "oauth-client", "oauth-issuer",
		"oauth-audience", "oauth-token-lifetime", "oauth-signing-algorithm", "oauth-signing-key"}},
	{"Storage", []string{"data-dir", "log-flush-interval-messages", "log-flush-interval", "hw-checkpoint-interval",
		"log-retention-check-interval", "log-cleaner-backoff"}},
	{"Control and logs", []string{"control", "schema-registry", "await-advertised", "log-level", "log-requests", "version"}},
}

// defaultText is the default --help shows where the flag's zero value
// stands for something computed or Kafka's own default.
var defaultText = map[string]string{
	"advertise":                                                "the listen host",
	"default-replication-factor":                               "min(3, brokers)",
	"replica-fetch-wait-max":                                   "min(500ms, replica-lag-time-max)",
	"sasl-enabled-mechanisms":                                  "all four",
	"sasl-session-lifetime":                                    "none",
	"delegation-token-secret-key":                              "none: tokens disabled",
	"delegation-token-max-lifetime":                            "168h",
	"delegation-token-expiry-time":                             "24h",
	"delegation-token-expiry-check-interval":                   "1h",
	"ssl-principal-mapping-rules":                              "DEFAULT",
	"sasl-kerberos-principal-to-local-rules":                   "DEFAULT",
	"broker-session-timeout":                                   "at once",
	"log-flush-interval-messages":                              "never",
	"log-flush-interval":                                       "never",
	"log-retention-check-interval":                             "5m",
	"producer-id-expiration":                                   "24h",
	"producer-id-expiration-check-interval":                    "10m",
	"log-cleaner-backoff":                                      "15s",
	"offsets-retention-minutes":                                "168h (10080)",
	"offsets-retention-check-interval":                         "10m",
	"transaction-max-timeout":                                  "15m",
	"transaction-abort-timed-out-transaction-cleanup-interval": "10s",
	"transactional-id-expiration":                              "168h",
	"data-dir":                                                 "memory only",
	"sasl-oauthbearer-jwks-endpoint-url":                       "none: unsecured tokens, or the built-in issuer's keys",
	"sasl-oauthbearer-jwks-endpoint-refresh-ms":                "1h",
	"sasl-oauthbearer-expected-audience":                       "the built-in issuer's, else none",
	"sasl-oauthbearer-expected-issuer":                         "the built-in issuer's, else none",
	"oauth-issuer":                                             "fakekafka",
	"oauth-audience":                                           "kafka",
	"oauth-token-lifetime":                                     "1h",
	"oauth-signing-algorithm":                                  "RS256",
	"oauth-signing-key":                                        "generated at start",
}

// printHelp writes the whole --help text.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, helpIntro)
	grouped := map[string]bool{}
	for _, g := range flagGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			grouped[name] = true
			if f := fs.Lookup(name); f != nil {
				printFlag(w, f)
			}
		}
	}
	// A flag added without a group still shows (a test wants none here).
	var other []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !grouped[f.Name] {
			other = append(other, f)
		}
	})
	if len(other) > 0 {
		fmt.Fprint(w, "\nOther:\n")
		for _, f := range other {
			printFlag(w, f)
		}
	}
}

func printFlag(w io.Writer, f *flag.Flag) {
	arg, usage := flag.UnquoteUsage(f)
	switch {
	case isBoolFlag(f):
		arg = ""
	case reflect.TypeOf(f.Value) == reflect.TypeFor[durationMs]():
		arg = "DURATION"
	case arg == "value" || arg == "string":
		arg = "VALUE"
	case arg == "int":
		arg = "N"
	}
	head := "  --" + f.Name
	if arg != "" {
		head += " " + arg
	}
	def, ok := defaultText[f.Name]
	if !ok && f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
		def, ok = f.DefValue, true
	}
	if ok {
		usage += " (default " + def + ")"
	}
	fmt.Fprintf(w, "%s\n      %s\n", head, usage)
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// versionText is what --version prints: the fakekafka module's version
// ("(devel)" when built from a checkout; v1.2.0 when installed with go
// install ...@v1.2.0, or built as a dependency of another module, as the
// testcontainers module builds its image), the VCS revision when the
// build recorded one, and the Go version and platform.
func versionText(info *debug.BuildInfo, ok bool) string {
	version := "(unknown)"
	var rev, modified string
	if ok {
		if m := fakekafkaModule(info); m != nil && m.Version != "" {
			version = m.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
	}
	out := "fakekafka " + version
	if rev != "" {
		out += " (" + rev + modified + ")"
	}
	return out + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// fakekafkaModule is the module this binary was built from: the main
// module, or a dependency when another module built the package (then its
// replacement, if any, which carries the version).
func fakekafkaModule(info *debug.BuildInfo) *debug.Module {
	const path = "github.com/fakekafka/fakekafka"
	if info.Main.Path == path || info.Main.Path == "" {
		return &info.Main
	}
	for _, m := range info.Deps {
		if m.Path == path {
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace
			}
			return m
		}
	}
	return &info.Main
}

// flagError turns the flag package's parse errors into one line that
// points at --help.
func flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + strings.TrimPrefix(name, "-")
	}
	return fmt.Errorf("%s (see fakekafka --help)", msg)
}
