#!/usr/bin/env bash
# Proves that fakekafka installs with nothing but the go command and a
# module proxy: no checkout on the path, no workspace. scripts/modproxy
# releases this working tree's modules (api, root, testcontainers) at a
# made-up version into a file-based proxy; third-party modules come from
# the machine's module cache, else from the Go proxy.
#
#   scripts/install-check.sh             go install .../cmd/fakekafka@VERSION into a
#                                        temp dir; --version names VERSION; the binary
#                                        serves on loopback (healthcheck, probe)
#   scripts/install-check.sh containers  a fresh module go gets the testcontainers
#                                        module @VERSION and runs a test that starts a
#                                        container with no image given: the module builds
#                                        the image of VERSION itself (needs a Docker
#                                        engine; scripts/containers.sh runs it)
#
# VERSION is $FAKEKAFKA_CHECK_VERSION, default v0.99.0. Everything goes to
# a temp dir (its own module cache too, so an earlier run's v0.99.0 is
# never reused), removed at the end. About 30 s (a), plus the image build (b).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-install}
version=${FAKEKAFKA_CHECK_VERSION:-v0.99.0}

tmp=$(mktemp -d /tmp/fakekafka-install-check.XXXXXX)
pids=()
rm_image=""
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -z "$rm_image" ] || docker image rm -f "fakekafka:$version" >/dev/null 2>&1 || true
	chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only
	rm -rf "$tmp"
}
trap cleanup EXIT

cache=$(go env GOMODCACHE)
(cd scripts/modproxy && GOWORK=off GOFLAGS=-mod=mod go run . -repo "$root" -version "$version" -out "$tmp/proxy" >/dev/null)

# The released modules from the file proxy, the rest from the module cache
# already here, then the Go proxy. No sumdb for the made-up release.
export GOPROXY="file://$tmp/proxy,file://$cache/cache/download,https://proxy.golang.org"
export GONOSUMDB=github.com/fakekafka
export GOMODCACHE="$tmp/modcache"
export GOWORK=off
export GOFLAGS=-mod=mod
export GOBIN="$tmp/bin"
mkdir -p "$tmp/empty" "$tmp/bin"
cd "$tmp/empty" # no go.mod, no go.work, no checkout

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

case "$mode" in
install)
	start=$(date +%s)
	GOFLAGS= go install "github.com/fakekafka/fakekafka/cmd/fakekafka@$version"
	echo "go install github.com/fakekafka/fakekafka/cmd/fakekafka@$version: $(($(date +%s) - start)) s"
	bin="$GOBIN/fakekafka"
	got=$("$bin" --version)
	echo "$got"
	case "$got" in
	"fakekafka $version "*) ;;
	*) echo "--version does not name $version" >&2; exit 1 ;;
	esac

	port=$(free_port)
	control=$(free_port)
	registry=$(free_port)
	"$bin" --brokers 1 --listen "127.0.0.1:$port" --control "127.0.0.1:$control" --schema-registry "127.0.0.1:$registry" >"$tmp/server.log" 2>&1 &
	pids+=($!)
	ok=""
	for _ in $(seq 1 100); do
		if "$bin" healthcheck --control "127.0.0.1:$control" >/dev/null 2>&1; then ok=1; break; fi
		sleep 0.1
	done
	[ -n "$ok" ] || { echo "the installed binary's control API did not answer /readyz in 10 s" >&2; cat "$tmp/server.log" >&2; exit 1; }
	"$bin" probe --timeout 5s "127.0.0.1:$port"
	kill "${pids[0]}"
	wait "${pids[0]}" 2>/dev/null || true
	pids=()
	echo "install check: ok"
	;;
containers)
	mkdir -p "$tmp/user" && cd "$tmp/user"
	go mod init example.com/user >/dev/null 2>&1
	start=$(date +%s)
	go get "github.com/fakekafka/fakekafka/testcontainers@$version" "github.com/twmb/franz-go@v1.22.3"
	echo "go get github.com/fakekafka/fakekafka/testcontainers@$version: $(($(date +%s) - start)) s"
	cp "$root/scripts/modproxy/testdata/user_test.go" .
	# The image of this made-up version must be built here, not found.
	docker image rm -f "fakekafka:$version" >/dev/null 2>&1 || true
	rm_image=1
	if ! FAKEKAFKA_CHECK_VERSION="$version" go test -count=1 -timeout 12m -v . >"$tmp/test.log" 2>&1; then
		tail -60 "$tmp/test.log" >&2
		echo "containers install check: the user's test failed" >&2
		exit 1
	fi
	grep -E '^(=== RUN|--- |\s+user_test|ok|PASS)' "$tmp/test.log"
	echo "containers install check: ok"
	;;
*)
	echo "usage: $0 [install|containers]" >&2
	exit 2
	;;
esac
