#!/usr/bin/env bash
# Builds the container image from this checkout: a static binary built on
# the host, copied into a FROM scratch image (image/Dockerfile). Nothing is
# pulled. Usage: scripts/image.sh [TAG] (default fakekafka:dev).
#
# The binary is built in workspace mode with only the root module and this
# checkout's api module (go.mod requires a released api version, and
# compat's dependencies are not needed), as the testcontainers module's
# BuildImage does.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-fakekafka:dev}
root=$(pwd)
ctx=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$ctx" "$work"' EXIT
printf 'go %s\n\nuse %s\n\nreplace github.com/fakekafka/fakekafka/api => %s/api\n' \
	"$(awk '$1 == "go" { print $2 }' go.mod)" "$root" "$root" >"$work/go.work"
GOWORK="$work/go.work" CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o "$ctx/fakekafka" ./cmd/fakekafka
cp image/Dockerfile "$ctx/"
mkdir "$ctx/data" # the image's empty /data, for a volume (see image/Dockerfile)
docker build -q -t "$tag" "$ctx"
