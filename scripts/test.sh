#!/usr/bin/env bash
# Runs every test of fakekafka: the core module and the compat module (real
# clients other than franz-go). Installs kcat from Debian's packages when it
# is missing and we are root; otherwise says how.
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
