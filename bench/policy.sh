#!/usr/bin/env bash
# policy.sh: policy decision latency against a bare Cedar evaluation, in one run.
#
# Spread traffic (issue 12; gated): 1,000 seeded policies, 10,000 capabilities,
# requests drawn from a seeded random sequence over 500 agents x 100
# capabilities (50,000 pairs), argument values new on every call:
#   skillgate Evaluate, steady state (after 100,000 warm-up calls)
#   skillgate Evaluate, first calls after a change (a new snapshot every 10,000 calls; not gated)
#   bare cedar.Authorize over the same policies, entities and requests (the anchor)
# Hot request (one agent, one capability, the same call again and again; labelled as such):
#   skillgate Evaluate, 1,000 and 10 policies; the same with a query value that never repeats
#   bare cedar.Authorize over the same 1,000 and 10 policies
#
# Usage: bench/policy.sh [-count N] [-benchtime T] [-test BIN]
#   -count N      rounds (default 5); every benchmark runs once per round
#   -benchtime T  per benchmark and round (default 1s)
#   -test BIN     run this policy test binary (go test -c ./internal/decision/policy/) instead of
#                 building one, e.g. to measure an older build with the same benchmarks
# Goal (issue 12): spread traffic p50 <= 3 µs and p99 <= 15 µs at 1,000 policies.
# Target (the policy issue): hot request p50 <= 2 µs and p99 <= 10 µs.
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
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "policy.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-policy-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [[ -z "$bin" ]]; then
	# The decision code is compiled as it is in the skillgate binary: with the
	# profile-guided optimisation profile `go build` uses (bench/pgo.sh).
	go test -c -pgo=cmd/skillgate/default.pgo -o "$work/policy.test" ./internal/decision/policy/ || exit 2
	bin="$work/policy.test"
fi
[[ -x "$bin" ]] || { echo "policy.sh: $bin is not an executable test binary" >&2; exit 2; }
# The rows are measured in rounds (every benchmark once per round, COUNT
# rounds) rather than each benchmark COUNT times in a row, so that the
# machine's slower and faster periods weigh on every row alike and the ratios
# to bare Cedar stay meaningful.
out=""
for ((round = 1; round <= count; round++)); do
	r="$("$bin" -test.run '^$' -test.bench '^Benchmark(Decision|BareCedar)(Spread|SpreadCold)?(1000|10)(Uncached)?$' \
		-test.benchtime "$benchtime" -test.count 1 -test.benchmem)" || { echo "$r" >&2; exit 2; }
	out+="$r"$'\n'
done
echo "$out" >&2

# stats NAME UNIT: "median min max" of a metric (the value before its unit;
# unit "N" is the iteration count) of a benchmark over the rounds.
stats() {
	echo "$out" | awk -v name="$1" -v unit="$2" '$1 ~ "^"name"(-[0-9]+)?$" {
		if (unit == "N") { print $2; next }
		for (i = 3; i <= NF; i++) if ($i == unit) print $(i-1)
	}' | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "0 0 0"; else print a[int((NR + 1) / 2)], a[1], a[NR] }'
}
row() { # NAME: n p50 p50min p50max p99 p99min p99max allocs
	local n p50 p99 al
	read -r n _ _ <<<"$(stats "$1" N)"
	read -r p50 p50lo p50hi <<<"$(stats "$1" p50-ns)"
	read -r p99 p99lo p99hi <<<"$(stats "$1" p99-ns)"
	read -r al _ _ <<<"$(stats "$1" allocs/op)"
	echo "$n $p50 $p50lo $p50hi $p99 $p99lo $p99hi $al"
}
rows=""
for b in DecisionSpread1000 DecisionSpreadCold1000 BareCedarSpread1000 Decision1000 Decision1000Uncached Decision10 BareCedar1000 BareCedar10; do
	rows+="$b $(row "Benchmark$b")"$'\n'
done
read -r _ _ sp50 _ <<<"$(echo "$rows" | awk '$1 == "DecisionSpread1000"')"
read -r _ _ c10_50 _ <<<"$(echo "$rows" | awk '$1 == "BareCedar10"')"
[[ "$sp50" != 0 && "$c10_50" != 0 ]] || { echo "policy.sh: no benchmark results" >&2; exit 2; }

echo "$rows" | awk -v count="$count" '
NF == 9 { n[$1] = $2; p50[$1] = $3; lo50[$1] = $4; hi50[$1] = $5; p99[$1] = $6; lo99[$1] = $7; hi99[$1] = $8; al[$1] = $9 }
function us(x) { return sprintf("%.2f µs", x / 1000) }
function line(label, b, anchor) {
	printf "| %s | %d | %s (%s–%s) | %s (%s–%s) | %d | %s |\n", label, n[b], us(p50[b]), sprintf("%.2f", lo50[b] / 1000), sprintf("%.2f", hi50[b] / 1000),
		us(p99[b]), sprintf("%.2f", lo99[b] / 1000), sprintf("%.2f", hi99[b] / 1000), al[b], (anchor == "" ? "anchor" : sprintf("%.1fx faster", p50[anchor] / p50[b]))
}
END {
	printf "\nSpread traffic: 1,000 policies, 500 agents x 100 capabilities, new argument values on every call (median over %d rounds, min–max in parentheses; n = calls measured in one round)\n\n", count
	printf "| decision | n | p50 | p99 | allocs | p50 vs bare Cedar |\n|---|---|---|---|---|---|\n"
	line("skillgate Evaluate, steady state", "DecisionSpread1000", "BareCedarSpread1000")
	line("skillgate Evaluate, first calls after a change (not gated)", "DecisionSpreadCold1000", "BareCedarSpread1000")
	line("bare cedar.Authorize (anchor)", "BareCedarSpread1000", "")
	printf "\nHot request: one agent, one capability, the same call repeated (median over %d rounds)\n\n", count
	printf "| decision | policies | n | p50 | p99 | allocs | p50 vs bare Cedar |\n|---|---|---|---|---|---|---|\n"
	hot("skillgate Evaluate (hot request)", "1,000", "Decision1000", "BareCedar1000")
	hot("skillgate Evaluate (hot request, query value never repeats)", "1,000", "Decision1000Uncached", "BareCedar1000")
	hot("skillgate Evaluate (hot request)", "10", "Decision10", "BareCedar10")
	hot("bare cedar.Authorize (hot request)", "1,000", "BareCedar1000", "")
	hot("bare cedar.Authorize (hot request)", "10", "BareCedar10", "")
	s50 = p50["DecisionSpread1000"] <= 3000; s99 = p99["DecisionSpread1000"] <= 15000
	h50 = p50["Decision1000"] <= 2000; h99 = p99["Decision1000"] <= 10000
	printf "\n| gate | measured (median) | result |\n|---|---|---|\n"
	printf "| spread traffic p50 <= 3 µs at 1,000 policies | %s | %s |\n", us(p50["DecisionSpread1000"]), (s50 ? "PASS" : "FAIL")
	printf "| spread traffic p99 <= 15 µs at 1,000 policies | %s | %s |\n", us(p99["DecisionSpread1000"]), (s99 ? "PASS" : "FAIL")
	printf "| hot request p50 <= 2 µs at 1,000 policies | %s | %s |\n", us(p50["Decision1000"]), (h50 ? "PASS" : "FAIL")
	printf "| hot request p99 <= 10 µs at 1,000 policies | %s | %s |\n", us(p99["Decision1000"]), (h99 ? "PASS" : "FAIL")
	printf "\nUnder spread traffic skillgate is %.1fx faster than bare Cedar (p50; p99 %.1fx).\n", p50["BareCedarSpread1000"] / p50["DecisionSpread1000"], p99["BareCedarSpread1000"] / p99["DecisionSpread1000"]
	exit (s50 && s99 && h50 && h99) ? 0 : 1
}
function hot(label, pols, b, anchor) {
	printf "| %s | %s | %d | %s | %s | %d | %s |\n", label, pols, n[b], us(p50[b]), us(p99[b]), al[b], (anchor == "" ? "anchor" : sprintf("%.1fx faster", p50[anchor] / p50[b]))
}'
