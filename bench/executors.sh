#!/usr/bin/env bash
# executors.sh: what executors add to a call and to a listing, in one run.
#
# 1,000 executors x 3 backends (github-, gitlab- and gitea-style tools;
# every ninth backend off for a missing credential), executors drawn from a
# seeded random sequence:
#   resolution + mapping: the resolver (liveness of the executor's three
#     backends, the tenant's then the global preference) and the argument
#     mapping (CEL programs, the tool's schema, JSON encoding)
#   resolution alone
#   listing the live executors of one principal (every tools/list)
# One mapping (GitHub's create_issue: two splits, two copies) against the
# anchor: the same arguments written by hand in Go, checked by the
# jsonschema library and encoded by encoding/json.
#
# Usage: bench/executors.sh [-count N] [-benchtime T] [-test BIN]
#   -count N      rounds (default 5); every benchmark runs once per round
#   -benchtime T  per benchmark and round (default 1s)
#   -test BIN     run this executor test binary (go test -c ./internal/decision/executor/)
#                 instead of building one
# Goal (issue 14): resolution + mapping p50 <= 5 µs; listing <= 1 ms (p50).
# Exit status 0 when every gate holds, 1 when one does not, 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

count=5
benchtime=1s
bin=""
while (($# > 0)); do
	case "$1" in
	-count) count="${2:?-count needs a value}"; shift 2 ;;
	-benchtime) benchtime="${2:?-benchtime needs a value}"; shift 2 ;;
	-test) bin="${2:?-test needs a test binary}"; shift 2 ;;
	-h | --help) sed -n '2,26p' "$0"; exit 0 ;;
	*) echo "executors.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-executors-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [[ -z "$bin" ]]; then
	go test -c -pgo=cmd/skillgate/default.pgo -o "$work/executor.test" ./internal/decision/executor/ || exit 2
	bin="$work/executor.test"
fi
[[ -x "$bin" ]] || { echo "executors.sh: $bin is not an executable test binary" >&2; exit 2; }
# The test binary reads its testdata relative to the package directory.
out=""
for ((round = 1; round <= count; round++)); do
	r="$(cd executor && "$bin" -test.run '^$' -test.bench '^Benchmark(ResolveAndMap|ResolveAndMapDistinct|Resolve|ListLive|Apply|ApplyByHand)$' \
		-test.benchtime "$benchtime" -test.count 1 -test.benchmem)" || { echo "$r" >&2; exit 2; }
	out+="$r"$'\n'
done
echo "$out" >&2

# stats NAME UNIT: "median min max" of a metric over the rounds (unit "N":
# the iteration count).
stats() {
	echo "$out" | awk -v name="$1" -v unit="$2" '$1 ~ "^"name"(-[0-9]+)?$" {
		if (unit == "N") { print $2; next }
		for (i = 3; i <= NF; i++) if ($i == unit) print $(i-1)
	}' | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "0 0 0"; else print a[int((NR + 1) / 2)], a[1], a[NR] }'
}
row() { # NAME: n p50 p50min p50max p99 p99min p99max allocs nsop
	local n p50 p99 al ns
	read -r n _ _ <<<"$(stats "$1" N)"
	read -r p50 p50lo p50hi <<<"$(stats "$1" p50-ns)"
	read -r p99 p99lo p99hi <<<"$(stats "$1" p99-ns)"
	read -r al _ _ <<<"$(stats "$1" allocs/op)"
	read -r ns _ _ <<<"$(stats "$1" ns/op)"
	echo "$n $p50 $p50lo $p50hi $p99 $p99lo $p99hi $al $ns"
}
rows=""
for b in ResolveAndMap ResolveAndMapDistinct Resolve ListLive Apply ApplyByHand; do
	rows+="$b $(row "Benchmark$b")"$'\n'
done
read -r _ _ rp50 _ <<<"$(echo "$rows" | awk '$1 == "ResolveAndMap"')"
[[ "$rp50" != 0 ]] || { echo "executors.sh: no benchmark results" >&2; exit 2; }

echo "$rows" | awk -v count="$count" -v load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" '
NF == 10 { n[$1] = $2; p50[$1] = $3; lo50[$1] = $4; hi50[$1] = $5; p99[$1] = $6; lo99[$1] = $7; hi99[$1] = $8; al[$1] = $9; ns[$1] = $10 }
function us(x) { return sprintf("%.2f µs", x / 1000) }
function line(label, b) {
	printf "| %s | %d | %s (%.2f–%.2f) | %s (%.2f–%.2f) | %d |\n", label, n[b], us(p50[b]), lo50[b] / 1000, hi50[b] / 1000, us(p99[b]), lo99[b] / 1000, hi99[b] / 1000, al[b]
}
END {
	printf "\n1,000 executors x 3 backends (median over %d rounds, min–max in parentheses; n = operations in one round; load average %s)\n\n", count, load
	printf "| operation | n | p50 | p99 | allocs |\n|---|---|---|---|---|\n"
	line("resolution + mapping", "ResolveAndMap")
	line("resolution + mapping, no expression shared (not gated)", "ResolveAndMapDistinct")
	line("resolution alone", "Resolve")
	line("listing the live executors of a principal", "ListLive")
	printf "\nOne mapping against its anchor (mean per operation)\n\n| mapping | time | allocs | vs anchor |\n|---|---|---|---|\n"
	printf "| skillgate Mapping.Apply (CEL) | %s | %d | %.1fx faster |\n", us(ns["Apply"]), al["Apply"], ns["ApplyByHand"] / ns["Apply"]
	printf "| by hand in Go + jsonschema + encoding/json (anchor) | %s | %d | anchor |\n", us(ns["ApplyByHand"]), al["ApplyByHand"]
	g1 = p50["ResolveAndMap"] <= 5000; g2 = p50["ListLive"] <= 1000000
	printf "\n| gate | measured (median) | result |\n|---|---|---|\n"
	printf "| resolution + mapping p50 <= 5 µs | %s | %s |\n", us(p50["ResolveAndMap"]), (g1 ? "PASS" : "FAIL")
	printf "| listing p50 <= 1 ms | %s | %s |\n", us(p50["ListLive"]), (g2 ? "PASS" : "FAIL")
	exit (g1 && g2) ? 0 : 1
}'
