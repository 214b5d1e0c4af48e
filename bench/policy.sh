#!/usr/bin/env bash
# policy.sh: policy decision latency against a bare Cedar evaluation, in one run.
#
#   skillgate Evaluate, 1,000 policies, 10,000 capabilities, typed constraints checked
#   skillgate Evaluate, 1,000 policies, a distinct argument value per call (context cache missed)
#   skillgate Evaluate, 10 policies (same capabilities)
#   bare cedar.Authorize over the same 1,000 policies, entities and request
#   bare cedar.Authorize over the same 10 policies
#
# Usage: bench/policy.sh [-count N] [-benchtime T]  (default 5 rounds of 1s per benchmark)
# Target (the policy issue): skillgate at 1,000 policies p50 <= 2 µs and p99 <= 10 µs.
# Exit status 0 when both hold, 1 when one does not, 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

count=5
benchtime=1s
while (($# > 0)); do
	case "$1" in
	-count) count="${2:?-count needs a value}"; shift 2 ;;
	-benchtime) benchtime="${2:?-benchtime needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,12p' "$0"; exit 0 ;;
	*) echo "policy.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-policy-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The decision code is compiled as it is in the skillgate binary: with the
# profile-guided optimisation profile `go build` uses (bench/pgo.sh).
go test -c -pgo=cmd/skillgate/default.pgo -o "$work/policy.test" ./policy/ || exit 2
# The rows are measured in rounds (every benchmark once per round, COUNT
# rounds) rather than each benchmark COUNT times in a row, so that the
# machine's slower and faster periods weigh on every row alike and the ratios
# to bare Cedar stay meaningful.
out=""
for ((round = 1; round <= count; round++)); do
	r="$("$work/policy.test" -test.run '^$' -test.bench '^Benchmark(Decision|BareCedar)(1000|10)(Uncached)?$' \
		-test.benchtime "$benchtime" -test.count 1 -test.benchmem)" || { echo "$r" >&2; exit 2; }
	out+="$r"$'\n'
done
echo "$out" >&2

# median of a metric (the value before its unit) of a benchmark over its runs
median() {
	echo "$out" | awk -v name="$1" -v unit="$2" '$1 ~ "^"name"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }' |
		sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print 0; else print a[int((NR + 1) / 2)] }'
}
row() { echo "$(median "$1" p50-ns) $(median "$1" p99-ns) $(median "$1" allocs/op) $(median "$1" ns/op)"; }
read -r s1k50 s1k99 s1ka s1kn <<<"$(row BenchmarkDecision1000)"
read -r u50 u99 ua un <<<"$(row BenchmarkDecision1000Uncached)"
read -r s10_50 s10_99 s10a s10n <<<"$(row BenchmarkDecision10)"
read -r c1k50 c1k99 c1ka c1kn <<<"$(row BenchmarkBareCedar1000)"
read -r c10_50 c10_99 c10a c10n <<<"$(row BenchmarkBareCedar10)"
[[ "$s1k50" != 0 && "$c10_50" != 0 ]] || { echo "policy.sh: no benchmark results" >&2; exit 2; }

awk -v s1k50="$s1k50" -v s1k99="$s1k99" -v s1ka="$s1ka" -v s1kn="$s1kn" \
	-v u50="$u50" -v u99="$u99" -v ua="$ua" -v un="$un" \
	-v s10_50="$s10_50" -v s10_99="$s10_99" -v s10a="$s10a" -v s10n="$s10n" \
	-v c1k50="$c1k50" -v c1k99="$c1k99" -v c1ka="$c1ka" -v c1kn="$c1kn" \
	-v c10_50="$c10_50" -v c10_99="$c10_99" -v c10a="$c10a" -v c10n="$c10n" 'BEGIN {
	printf "\n| decision | policies | p50 | p99 | mean | allocs | p50 vs skillgate 1,000 |\n|---|---|---|---|---|---|---|\n"
	printf "| skillgate Evaluate (sliced, constraints) | 1,000 | %.2f µs | %.2f µs | %.2f µs | %d | 1.00x |\n", s1k50/1000, s1k99/1000, s1kn/1000, s1ka
	printf "| skillgate Evaluate, argument values never repeat | 1,000 | %.2f µs | %.2f µs | %.2f µs | %d | %.2fx |\n", u50/1000, u99/1000, un/1000, ua, u50/s1k50
	printf "| skillgate Evaluate (sliced, constraints) | 10 | %.2f µs | %.2f µs | %.2f µs | %d | %.2fx |\n", s10_50/1000, s10_99/1000, s10n/1000, s10a, s10_50/s1k50
	printf "| bare cedar.Authorize | 1,000 | %.2f µs | %.2f µs | %.2f µs | %d | %.2fx |\n", c1k50/1000, c1k99/1000, c1kn/1000, c1ka, c1k50/s1k50
	printf "| bare cedar.Authorize | 10 | %.2f µs | %.2f µs | %.2f µs | %d | %.2fx |\n", c10_50/1000, c10_99/1000, c10n/1000, c10a, c10_50/s1k50
	p50ok = s1k50 <= 2000; p99ok = s1k99 <= 10000
	printf "\n| target | measured | result |\n|---|---|---|\n"
	printf "| p50 <= 2 µs at 1,000 policies | %.2f µs | %s |\n", s1k50/1000, (p50ok ? "PASS" : "FAIL")
	printf "| p99 <= 10 µs at 1,000 policies | %.2f µs | %s |\n", s1k99/1000, (p99ok ? "PASS" : "FAIL")
	printf "| (not gated) the same with arguments that never repeat | p50 %.2f µs, p99 %.2f µs | %s |\n", u50/1000, u99/1000, (u50 <= 2000 && u99 <= 10000 ? "within target" : "above target")
	printf "\nskillgate at 1,000 policies is %.1fx faster than bare Cedar at 1,000 (p50), %.2fx bare Cedar at 10.\n", c1k50/s1k50, s1k50/c10_50
	exit (p50ok && p99ok) ? 0 : 1
}'
