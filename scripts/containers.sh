#!/usr/bin/env bash
# Runs the testcontainers module's tests (testcontainers/): go vet, then the
# container tests against a Docker engine on this machine. When no engine
# answers and we are root, installs Debian's docker.io if dockerd is
# missing and starts dockerd in the background, and stops it again at the
# end. Ryuk (an image to pull) is disabled; nothing is pulled: the image is
# built from this checkout. Idempotent; bounded by timeouts.
#
# Every container this run starts is labelled fakekafka.test-run=$run_id
# (they all come from a per-run image carrying the label, which containers
# inherit), and the cleanup removes only those: another run's containers on
# the same engine are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

export TESTCONTAINERS_RYUK_DISABLED=true
export TESTCONTAINERS_HOST_OVERRIDE=${TESTCONTAINERS_HOST_OVERRIDE:-127.0.0.1}
export FAKEKAFKA_REQUIRE_DOCKER=1
export GOWORK="$(pwd)/testcontainers/go.work" # the module and the api module, never the root one

run_id="$(date +%s)-$$"
run_label="fakekafka.test-run=$run_id"
run_image="fakekafka:tc-test-$run_id"
compose_project="fakekafka-compose-check-$run_id"

(cd testcontainers && go vet ./...)

started_dockerd=""
cleanup() {
	# This run's containers that a failed or killed test left behind (Ryuk,
	# which would remove them, is off); only this run's, by its label.
	if docker info >/dev/null 2>&1; then
		docker ps -aq --filter "label=$run_label" | xargs -r docker rm -f >/dev/null 2>&1 || true
		docker ps -aq --filter "label=com.docker.compose.project=$compose_project" | xargs -r docker rm -f >/dev/null 2>&1 || true
		docker image rm "$run_image" >/dev/null 2>&1 || true
		# Earlier builds of the test image, untagged by the latest one.
		docker image prune -f --filter label=org.opencontainers.image.title=fakekafka >/dev/null 2>&1 || true
	fi
	if [ -n "$started_dockerd" ]; then
		echo "stopping the dockerd this script started (pid $started_dockerd)"
		kill "$started_dockerd" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "$started_dockerd" 2>/dev/null || break
			sleep 0.1
		done
	fi
}
trap cleanup EXIT

if ! docker info >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ]; then
		echo "no Docker engine answers; the container tests need one (run as root to have this script start one)" >&2
		exit 1
	fi
	if ! command -v dockerd >/dev/null 2>&1; then
		echo "installing docker.io (apt-get install docker.io)"
		export DEBIAN_FRONTEND=noninteractive
		timeout 600 apt-get update -qq
		timeout 900 apt-get install -y -qq docker.io >/dev/null
	fi
	log=$(mktemp /tmp/fakekafka-dockerd.XXXXXX.log)
	echo "starting dockerd (log: $log)"
	dockerd --iptables=false --ip-forward=false >"$log" 2>&1 &
	started_dockerd=$!
	for _ in $(seq 1 600); do
		docker info >/dev/null 2>&1 && break
		if ! kill -0 "$started_dockerd" 2>/dev/null; then
			echo "dockerd exited:" >&2
			tail -20 "$log" >&2
			exit 1
		fi
		sleep 0.1
	done
	docker info >/dev/null 2>&1 || { echo "dockerd did not answer within 60 s" >&2; tail -20 "$log" >&2; exit 1; }
fi

# The Go tests' TestMain builds fakekafka:tc-test from this checkout (and
# keeps it); -run '^$' runs only that build. Then this run's image: the
# same with the run's label, so that every container started from it below
# carries the label.
(cd testcontainers && timeout 900 go test -count=1 -run '^$' -timeout 14m ./...)
printf 'FROM fakekafka:tc-test\nLABEL %s\n' "$run_label" | timeout 120 docker build -q -t "$run_image" - >/dev/null
export FAKEKAFKA_IMAGE="$run_image"
(cd testcontainers && timeout 900 go test -race -count=1 -timeout 14m ./...)

# Without a checkout: a fresh module go gets the testcontainers module from
# a file-based proxy of this tree released at a made-up version and runs a
# test with no image given, so the module builds the image of that version
# itself (about 1 min; scripts/install-check.sh). Its containers carry this
# run's label.
FAKEKAFKA_RUN_LABEL="$run_label" timeout 900 bash scripts/install-check.sh containers

# The same image from Testcontainers for Python: a generic container, one
# PUT with the mapped ports, a wait on /readyz (testcontainers/python).
venv=${XDG_CACHE_HOME:-$HOME/.cache}/fakekafka/tc-python
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import testcontainers, kafka' 2>/dev/null; then
	if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
		echo "installing python3-venv (apt-get install python3-venv)"
		export DEBIAN_FRONTEND=noninteractive
		timeout 600 apt-get update -qq
		timeout 600 apt-get install -y -qq python3-venv >/dev/null
	fi
	rm -rf "$venv"
	python3 -m venv "$venv"
	timeout 600 "$venv/bin/pip" install -q testcontainers==4.15.0 kafka-python==3.0.12
fi
timeout 300 "$venv/bin/python" testcontainers/python/test_fakekafka.py

# And from Testcontainers for Node (testcontainers/node), where npm exists.
if command -v npm >/dev/null 2>&1; then
	nodedir=${XDG_CACHE_HOME:-$HOME/.cache}/fakekafka/tc-node
	mkdir -p "$nodedir"
	cp testcontainers/node/package.json testcontainers/node/test.mjs "$nodedir/"
	(cd "$nodedir" && timeout 600 npm install --no-audit --no-fund --silent)
	timeout 300 node "$nodedir/test.mjs"
else
	echo "no npm: the Testcontainers for Node check is skipped"
fi

# And from Testcontainers for Java (testcontainers/java), where Maven and a
# JDK exist: Maven only resolves the classpath; javac compiles the check.
if command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
	javadir=$(mktemp -d)
	timeout 600 mvn -q -B -f testcontainers/java/pom.xml dependency:build-classpath -Dmdep.outputFile="$javadir/cp.txt" >/dev/null
	javac -d "$javadir/classes" -cp "$(cat "$javadir/cp.txt")" testcontainers/java/FakeKafkaCheck.java
	timeout 300 java -cp "$javadir/classes:$(cat "$javadir/cp.txt")" dev.fakekafka.FakeKafkaCheck
	rm -rf "$javadir"
else
	echo "no mvn or javac: the Testcontainers for Java check is skipped"
fi

# And the Compose example of docs/containers.md (testcontainers/compose): the image's
# HEALTHCHECK gates a second service that probes every broker by name.
if ! command -v docker-compose >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing docker-compose (apt-get install docker-compose)"
	export DEBIAN_FRONTEND=noninteractive
	timeout 600 apt-get update -qq
	timeout 600 apt-get install -y -qq docker-compose >/dev/null
fi
if command -v docker-compose >/dev/null 2>&1; then
	# A project of this run's own: down removes only its containers.
	compose=(docker-compose -f testcontainers/compose/docker-compose.yml -p "$compose_project")
	status=0
	timeout 180 "${compose[@]}" up --abort-on-container-exit --exit-code-from app || status=$?
	timeout 60 "${compose[@]}" down >/dev/null 2>&1 || true
	[ "$status" = 0 ] || { echo "the Compose check failed" >&2; exit 1; }
else
	echo "no docker-compose: the Compose check is skipped"
fi
