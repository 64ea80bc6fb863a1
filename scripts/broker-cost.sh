#!/usr/bin/env bash
# Counts the instructions the brokers spend per record on Produce and Fetch
# (server/broker_cost_test.go, BenchmarkBrokerCost), with valgrind's
# callgrind, which counts only between the benchmark's two markers. Wall
# time on a shared machine is noisy; these counts are not (GC cycles still
# move them by a few percent). GOMAXPROCS=1: with more, idle threads
# spinning in the scheduler under valgrind swamp the count.
#
#   scripts/broker-cost.sh [OPS] [BENCH-REGEXP]
#
# OPS is the number of requests measured (default 200); BENCH-REGEXP picks
# sub-benchmarks (default all four: produce and fetch, 100 B and 1 KiB
# records). TOP=N also prints the N functions with the most self cost.
# Needs valgrind (apt-get install valgrind). Prints instructions
# per record and allocations per request; the callgrind files stay in
# $TMPDIR/broker-cost (callgrind_annotate misreads the measured part alone:
# use TOP).
set -euo pipefail
cd "$(dirname "$0")/.."
ops=${1:-200}
filter=${2:-.}
command -v valgrind >/dev/null || { echo "needs valgrind: apt-get install valgrind" >&2; exit 1; }
dir=${TMPDIR:-/tmp}/broker-cost
mkdir -p "$dir"
go test -c -o "$dir/server.test" ./server
# selfcost prints the TOP functions by self cost in PART. callgrind_annotate
# cannot read a later part file alone (it names functions by ids defined in
# the parts before it, and charges everything to one), so the ids are
# resolved over all the parts, in order.
selfcost() {
	local part=$1 top=$2
	shift 2
	awk -v part="$part" '
		FNR == 1 { cur = ""; skip = 0 }
		match($0, /^c?fn=\([0-9]+\)/) {
			id = substr($0, RSTART, RLENGTH); sub(/^c?fn=/, "", id)
			rest = substr($0, RLENGTH + 1); sub(/^ /, "", rest)
			if (rest != "") name[id] = rest
			if ($0 ~ /^fn=/) cur = id
			next
		}
		/^calls=/ { skip = 1; next }
		/^[0-9+*-]/ {
			if (skip) { skip = 0; next }
			if (FILENAME == part && NF >= 2) { self[cur] += $2; total += $2 }
		}
		END { for (id in self) printf "%6.2f%%  %s\n", 100 * self[id] / total, name[id] }
	' $(ls "$@" | sort -t. -k3 -n) | sort -rn | head -"$top"
}

for bench in produce/record=100B produce/record=1KiB fetch/record=100B fetch/record=1KiB; do
	echo "$bench" | grep -Eq -- "$filter" || continue
	out=$dir/$(echo "$bench" | tr '/=' '__')
	rm -f "$out".cg*
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
		--zero-before='*brokerCostStart' --dump-before='*brokerCostStop' \
		--callgrind-out-file="$out.cg" "$dir/server.test" -test.run '^$' \
		-test.bench "BrokerCost/$bench\$" -test.benchtime "${ops}x" -test.benchmem -test.cpu 1 \
		>"$out.log" 2>&1
	# The testing package runs the benchmark with b.N=1, then with OPS:
	# the last dump taken at the stop marker is the measured run.
	part=$(grep -l 'Trigger: --dump-before' "$out".cg.* | sort -t. -k3 -n | tail -1)
	ir=$(awk '/^totals:/ {print $2}' "$part")
	records=$(grep -o '[0-9.]* records/op' "$out.log" | awk '{print $1}')
	allocs=$(grep -o '[0-9]* allocs/op' "$out.log" | awk '{print $1}')
	awk -v b="$bench" -v ir="$ir" -v ops="$ops" -v r="$records" -v a="$allocs" -v f="$part" \
		'BEGIN { printf "%-20s %6.0f instructions/record  %3d allocs/request  (%s)\n", b, ir / (ops * r), a, f }'
	if [ -n "${TOP:-}" ]; then
		selfcost "$part" "$TOP" "$out".cg "$out".cg.*
	fi
done
