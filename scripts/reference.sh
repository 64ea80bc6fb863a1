#!/usr/bin/env bash
# Runs compat/reference: Apache Kafka 4.x itself beside fakekafka, the
# differential scenarios, the request corpus and the ACL table (TestACLTable,
# on a second, secured one-broker Kafka cluster it starts for that test:
# about a minute more), and checks the tables
# in docs/reference.md (pass -update-reference to rewrite them; other arguments go to go test). Needs Java 17+
# (a JDK: scripts/gen-configs.sh compiles a small program) and Maven: installs them from Debian's packages when missing and we are
# root. The Kafka jars go to ~/.m2 and their classpath to
# ~/.cache/fakekafka-reference (outside the repository); a warm run takes
# about 5-6 minutes, most of it Kafka's own failover timeouts. TestClients
# also drives the client matrix's other-language adapters against both
# clusters: build them first (scripts/matrix-clients.sh, as .ci/run does),
# or set REFERENCE_SKIP_ABSENT=1 to leave out those that are not built.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing Java and Maven (apt-get install openjdk-17-jdk-headless maven)"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless maven >/dev/null
	else
		echo "compat/reference needs Java 17+ and Maven: sudo apt-get install openjdk-17-jdk-headless maven" >&2
		exit 1
	fi
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/fakekafka-reference"
mkdir -p "$cache"
timeout 15m mvn -q -B -f compat/reference/pom.xml dependency:build-classpath -Dmdep.outputFile="$cache/classpath.txt"

cd compat
FAKEKAFKA_REFERENCE=1 timeout 40m go test -race -count=1 -timeout 35m ./reference/ "$@"
