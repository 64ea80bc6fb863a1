#!/usr/bin/env bash
# Runs every test of fakekafka: the core module, the compat module (real
# clients other than franz-go, and the dashboard in headless Chromium) and the
# testcontainers module's container tests (scripts/containers.sh: starts a
# Docker engine if none answers, installing docker.io if needed, when we are
# root). Installs kcat, chromium and firefox-esr from Debian's packages when
# they are missing and we are root; otherwise says how.
# FAKEKAFKA_SKIP_CONTAINERS=1 leaves the container tests out;
# FAKEKAFKA_SKIP_BROWSER=1 skips the browser tests instead of needing
# chromium and firefox-esr.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
if [ "${FAKEKAFKA_SKIP_BROWSER:-}" != 1 ] && ! command -v chromium >/dev/null 2>&1; then
	missing+=(chromium)
fi
if [ "${FAKEKAFKA_SKIP_BROWSER:-}" != 1 ] && ! command -v firefox-esr >/dev/null 2>&1; then
	missing+=(firefox-esr)
fi
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing ${missing[*]} (apt-get install ${missing[*]})"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	else
		echo "compat tests need ${missing[*]}: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
fi

go test -race -count=1 -timeout 20m ./... ./api/... ./compat/...

if [ "${FAKEKAFKA_SKIP_CONTAINERS:-}" != 1 ]; then
	bash scripts/containers.sh
fi
