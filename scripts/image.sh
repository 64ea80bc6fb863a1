#!/usr/bin/env bash
# Builds the container image from this checkout: a static binary built on
# the host, copied into a FROM scratch image (image/Dockerfile). Nothing is
# pulled. Usage: scripts/image.sh [TAG] (default fakekafka:dev).
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-fakekafka:dev}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
GOWORK=off CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o "$ctx/fakekafka" ./cmd/fakekafka
cp image/Dockerfile "$ctx/"
mkdir "$ctx/data" # the image's empty /data, for a volume (see image/Dockerfile)
docker build -q -t "$tag" "$ctx"
