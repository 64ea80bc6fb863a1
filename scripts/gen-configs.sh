#!/usr/bin/env bash
# Regenerates configs/catalog_gen.go from Apache Kafka's jars: the broker
# (KafkaConfig), topic (LogConfig) and group (GroupConfig) config
# definitions of the Kafka release compat/reference/pom.xml names. Needs
# Java 17+ and Maven (scripts/reference.sh installs them); the jars come
# from ~/.m2 (Maven resolves them once). `--check` only diffs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v javac >/dev/null 2>&1; then
	echo "gen-configs needs a JDK (java runs GenConfigs.java from source): apt-get install openjdk-17-jdk-headless" >&2
	exit 1
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/fakekafka-reference"
if [ ! -s "$cache/classpath.txt" ]; then
	mkdir -p "$cache"
	timeout 15m mvn -q -B -f compat/reference/pom.xml dependency:build-classpath -Dmdep.outputFile="$cache/classpath.txt"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 5m java -cp "$(cat "$cache/classpath.txt")" scripts/gen-configs/GenConfigs.java >"$out"
gofmt -w "$out"
if [ "${1:-}" = --check ]; then
	diff -u configs/catalog_gen.go "$out"
	exit
fi
cp "$out" configs/catalog_gen.go
echo "configs/catalog_gen.go: $(grep -c '{Name: ' configs/catalog_gen.go) configs"
