#!/usr/bin/env bash
# store.sh: a cached policy decision with the engine's store on SQLite and
# on PostgreSQL, in one run (issue 19: PostgreSQL must add nothing to a
# cached decision, as the hot path must not touch the database).
#
# One hot request (an agent calling a read tool with the same arguments,
# allowed by a stored policy) decided again and again by a policy engine
# whose store is a SQLite file, then a PostgreSQL database on loopback;
# the engine's store calls are counted (store-calls/op).
#
# Usage: bench/store.sh [-count N] [-benchtime T]
#   -count N      rounds (default 5); both stores run once per round
#   -benchtime T  per store and round (default 1s)
# PostgreSQL: the server SKILLGATE_TEST_POSTGRES names, else one started
# with scripts/setup-postgres.sh for the run (and stopped after it).
# Gates: 0 store calls per decision on both stores; PostgreSQL's p50 at
# most 1.2x SQLite's (the same work: the difference is noise).
# Exit status 0 when every gate holds, 1 when one does not, 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

count=5
benchtime=1s
while (($# > 0)); do
	case "$1" in
	-count) count="${2:?-count needs a value}"; shift 2 ;;
	-benchtime) benchtime="${2:?-benchtime needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "store.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-store-bench.XXXXXX")"
stop_pg=""
cleanup() {
	[[ -n "$stop_pg" ]] && scripts/setup-postgres.sh stop || true
	rm -rf "$work"
}
trap cleanup EXIT
if [[ -z "${SKILLGATE_TEST_POSTGRES:-}" ]]; then
	eval "$(scripts/setup-postgres.sh)" || exit 2
	stop_pg=1
fi
go test -c -pgo=cmd/skillgate/default.pgo -o "$work/storebench.test" ./bench/storebench/ || exit 2
out="$("$work/storebench.test" -test.run '^$' -test.bench '^BenchmarkCachedDecision$' \
	-test.benchtime "$benchtime" -test.count "$count" -test.benchmem)" || { echo "$out" >&2; exit 2; }
echo "$out" >&2

# stats NAME UNIT: "median min max" of a metric over the rounds.
stats() {
	echo "$out" | awk -v name="$1" -v unit="$2" '$1 ~ "^"name"(-[0-9]+)?$" {
		for (i = 3; i <= NF; i++) if ($i == unit) print $(i-1)
	}' | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "- - -"; else print a[int((NR + 1) / 2)], a[1], a[NR] }'
}
printf '%-10s %14s %14s %10s %16s\n' store "p50 ns (min-max)" "p99 ns" allocs/op store-calls/op
declare -A p50 calls
for s in sqlite postgres; do
	read -r m lo hi <<<"$(stats "BenchmarkCachedDecision/$s" p50-ns)"
	read -r p99 _ _ <<<"$(stats "BenchmarkCachedDecision/$s" p99-ns)"
	read -r al _ _ <<<"$(stats "BenchmarkCachedDecision/$s" allocs/op)"
	read -r _ _ c <<<"$(stats "BenchmarkCachedDecision/$s" store-calls/op)"
	p50[$s]=$m calls[$s]=$c
	printf '%-10s %14s %14s %10s %16s\n' "$s" "$m ($lo-$hi)" "$p99" "$al" "$c"
done
[[ "${p50[sqlite]}" != - && "${p50[postgres]}" != - ]] || { echo "store.sh: no benchmark results" >&2; exit 2; }
ratio="$(awk -v a="${p50[postgres]}" -v b="${p50[sqlite]}" 'BEGIN { printf "%.2f", a / b }')"
echo "PostgreSQL/SQLite p50: ${ratio}x"
fail=0
for s in sqlite postgres; do
	if [[ "${calls[$s]}" != 0 ]]; then
		echo "FAIL: $s: ${calls[$s]} store calls per cached decision (want 0)"
		fail=1
	fi
done
if awk -v r="$ratio" 'BEGIN { exit !(r > 1.2) }'; then
	echo "FAIL: PostgreSQL adds to a cached decision (p50 ratio $ratio > 1.2)"
	fail=1
fi
((fail == 0)) && echo "PASS: a cached decision does not touch the store, on SQLite or PostgreSQL"
exit "$fail"
