#!/usr/bin/env bash
# Installs and builds the other-language clients of the client matrix
# (compat/matrix/clients): a Python venv with confluent-kafka (with its
# schema registry client and Avro serdes), kafka-python and aiokafka;
# node_modules with kafkajs, @kafkajs/confluent-schema-registry and
# @confluentinc/kafka-javascript (npm ci, from the committed
# package-lock.json); the Java adapter with kafka-clients and the Java
# schema registry scenario (Maven, into ~/.m2); the Rust adapter on rdkafka
# (cargo, from the committed Cargo.lock). Everything lands in ignored directories beside
# each adapter, in the tools' own caches (pip, npm, ~/.m2, ~/.cargo) and in
# $MATRIX_CLIENTS_CACHE (default ~/.cache/fakekafka-matrix), which keeps the
# two slow builds (librdkafka, twice) for the next clone on this machine: a
# second run only checks.
#
#   bash scripts/matrix-clients.sh [python] [js] [java] [rust]   # default: all
set -euo pipefail
cd "$(dirname "$0")/../compat/matrix/clients"
cache=${MATRIX_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fakekafka-matrix}
mkdir -p "$cache"

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

# apt_install PACKAGE: installs a Debian package (as root; otherwise says
# which is needed).
apt_install() {
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "matrix-clients: apt-get install $1"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
	else
		echo "matrix-clients: $1 is needed: sudo apt-get install $1" >&2
		exit 1
	fi
}

# apt_dev HEADER PACKAGE: installs a -dev package when its header is missing.
apt_dev() { [ -e "/usr/include/$1" ] || apt_install "$2"; }

# apt_cmd COMMAND PACKAGE: installs a package when its program is missing.
apt_cmd() { command -v "$1" >/dev/null 2>&1 || apt_install "$2"; }

js_clients() {
	local stamp=js/node_modules/.installed
	# node_modules, native build included, is kept per lock file, Node and
	# build settings (librdkafka with OpenSSL since the SASL_SSL scenario).
	local key
	key=$(cat js/package-lock.json <(node --version) <(echo "librdkafka with ssl") | sha256sum | cut -c1-16)
	if ! { [ -f "$stamp" ] && cmp -s js/package-lock.json "$stamp"; }; then
		if [ -f "$cache/js-$key/node_modules/.installed" ]; then
			rm -rf js/node_modules
			cp -a "$cache/js-$key/node_modules" js/
			return
		fi
		# @confluentinc/kafka-javascript builds librdkafka from the sources in
		# its package (its prebuilt binaries and the static build's own
		# dependencies would be downloaded from outside the registries).
		# Linked "dynamic", its configure uses the system's zlib and zstd, for
		# gzip and zstd batches, and OpenSSL, for SSL and SCRAM (the SASL_SSL
		# scenario).
		apt_dev zlib.h zlib1g-dev
		apt_dev zstd.h libzstd-dev
		apt_dev openssl/ssl.h libssl-dev
		(cd js && CKJS_LINKING=dynamic npm ci --no-audit --no-fund --loglevel=error)
		cp js/package-lock.json "$stamp"
	fi
	if [ ! -f "$cache/js-$key/node_modules/.installed" ]; then
		rm -rf "$cache/js-$key.tmp"
		mkdir -p "$cache/js-$key.tmp"
		cp -a js/node_modules "$cache/js-$key.tmp/"
		rm -rf "$cache/js-$key"
		mv "$cache/js-$key.tmp" "$cache/js-$key"
	fi
}

java_client() {
	local class=java/target/classes/fakekafka/matrix/Adapter.class
	if ! { [ -f "$class" ] && [ -d java/target/lib ] && [ -d java/target/streams-lib ] && [ -z "$(find java/pom.xml java/src -newer "$class" -print -quit)" ]; }; then
		rm -rf java/target/lib java/target/streams-lib # jars of an older pom
		(cd java && mvn -q -B -Dstyle.color=never package -DskipTests)
	fi
	# The schema registry scenario (Spring Cloud Stream's Confluent client),
	# a module of its own so that Spring stays off the adapter's class path.
	class=java-registry/target/classes/fakekafka/registry/SchemaRegistry.class
	if ! { [ -f "$class" ] && [ -d java-registry/target/lib ] && [ -z "$(find java-registry/pom.xml java-registry/src -newer "$class" -print -quit)" ]; }; then
		rm -rf java-registry/target/lib
		(cd java-registry && mvn -q -B -Dstyle.color=never package -DskipTests)
	fi
}

rust_client() {
	# The target directory lives in the cache, so a fresh clone rebuilds
	# only what changed; the binary is copied to where the harness runs it.
	# rdkafka's "ssl" feature links the system's OpenSSL, found by
	# pkg-config.
	apt_dev openssl/ssl.h libssl-dev
	apt_cmd pkg-config pkg-config
	(cd rust && CARGO_TARGET_DIR="$cache/rust-target" cargo build -q --release --locked)
	install -D "$cache/rust-target/release/matrix-rdkafka" rust/target/release/matrix-rdkafka
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
