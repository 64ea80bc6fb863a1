#!/usr/bin/env bash
# Installs and builds the other-language clients of the client matrix
# (compat/matrix/clients): a Python venv with confluent-kafka, kafka-python
# and aiokafka; node_modules with kafkajs and @confluentinc/kafka-javascript
# (npm ci, from the committed package-lock.json); the Java adapter with
# kafka-clients (Maven, into ~/.m2); the Rust adapter on rdkafka (cargo, from
# the committed Cargo.lock). Everything lands in ignored directories beside
# each adapter or in the tools' own caches, so a second run only checks.
#
#   bash scripts/matrix-clients.sh [python] [js] [java] [rust]   # default: all
set -euo pipefail
cd "$(dirname "$0")/../compat/matrix/clients"

langs=("$@")
[ ${#langs[@]} -gt 0 ] || langs=(python js java rust)

step() { # name command...: runs a step and says how long it took
	local name=$1 start=$SECONDS
	shift
	echo "matrix-clients: $name"
	"$@"
	echo "matrix-clients: $name done in $((SECONDS - start)) s"
}

python_clients() {
	# A stamp keyed on the requirements skips pip once the venv is complete.
	local stamp=python/.venv/.installed
	if [ -f "$stamp" ] && cmp -s python/requirements.txt "$stamp"; then
		return
	fi
	python3 -m venv python/.venv
	python/.venv/bin/pip install -q --disable-pip-version-check -r python/requirements.txt
	cp python/requirements.txt "$stamp"
}

js_clients() {
	local stamp=js/node_modules/.installed
	if [ -f "$stamp" ] && cmp -s js/package-lock.json "$stamp"; then
		return
	fi
	(cd js && npm ci --no-audit --no-fund --loglevel=error)
	cp js/package-lock.json "$stamp"
}

java_client() {
	(cd java && mvn -q -B package -DskipTests)
}

rust_client() {
	(cd rust && cargo build -q --release --locked)
}

for l in "${langs[@]}"; do
	case $l in
	python) step "python venv (pip)" python_clients ;;
	js) step "node_modules (npm ci)" js_clients ;;
	java) step "java adapter (mvn package)" java_client ;;
	rust) step "rust adapter (cargo build --release)" rust_client ;;
	*)
		echo "matrix-clients: unknown language $l (python, js, java, rust)" >&2
		exit 2
		;;
	esac
done
