#!/usr/bin/env bash
# Runs every test of fakekafka: the core module, the compat module (real
# clients other than franz-go) and the testcontainers module's container
# tests (scripts/containers.sh: starts a Docker engine if none answers,
# installing docker.io if needed, when we are root). Installs kcat from
# Debian's packages when it is missing and we are root; otherwise says how.
# FAKEKAFKA_SKIP_CONTAINERS=1 leaves the container tests out.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v kcat >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing kcat (apt-get install kcat)"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat >/dev/null
	else
		echo "kcat is needed by compat tests: sudo apt-get install kcat" >&2
		exit 1
	fi
fi

go test -race -count=1 -timeout 20m ./... ./compat/...

if [ "${FAKEKAFKA_SKIP_CONTAINERS:-}" != 1 ]; then
	bash scripts/containers.sh
fi
