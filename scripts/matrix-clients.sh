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

# apt_dev HEADER PACKAGE: installs a Debian -dev package when its header is
# missing (as root; otherwise says which).
apt_dev() {
	[ -e "/usr/include/$1" ] && return
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "matrix-clients: apt-get install $2"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
	else
		echo "matrix-clients: $2 is needed: sudo apt-get install $2" >&2
		exit 1
	fi
}

js_clients() {
	local stamp=js/node_modules/.installed
	if [ -f "$stamp" ] && cmp -s js/package-lock.json "$stamp"; then
		return
	fi
	# @confluentinc/kafka-javascript builds librdkafka from the sources in its
	# package (its prebuilt binaries and the static build's own dependencies
	# would be downloaded from outside the registries). Linked "dynamic", its
	# configure uses the system's zlib and zstd, for gzip and zstd batches.
	apt_dev zlib.h zlib1g-dev
	apt_dev zstd.h libzstd-dev
	(cd js && CKJS_LINKING=dynamic npm ci --no-audit --no-fund --loglevel=error)
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
