#!/usr/bin/env bash
# budget.sh: budgeted catalogs (catalog.Budget, behind `skillgate prompt --budget`,
# the disclosure resource and the `skills` prompt) against the implementation it
# replaced, kept as the reference in catalog/reference_test.go, in one run.
#
#   catalog.Budget at 1,000 / 10,000 / 100,000 skills, XML and JSON, budget 8,000
#   the reference (one skill dropped per pass, the list re-rendered each time) at the
#   sizes where it finishes: up to --ref-max skills (default 2,000; it takes about
#   2 s at 1,000 and grows with the square)
#
# Usage: bench/budget.sh [-count N] [--ref-max N]   (default 5 rounds)
# Targets: 10,000 skills in < 100 ms, and 100,000 skills in < 20x the time of
# 10,000 (no quadratic term). Exit status 0 when they hold, 1 when one does not,
# 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

count=5
ref_max=2000
while (($# > 0)); do
	case "$1" in
	-count) count="${2:?-count needs a value}"; shift 2 ;;
	--ref-max) ref_max="${2:?--ref-max needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "budget.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "budget.sh: -count must be a positive integer" >&2; exit 2; }
[[ "$ref_max" =~ ^[0-9]+$ ]] || { echo "budget.sh: --ref-max must be a non-negative integer" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-catalog-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/catalog.test" ./internal/agent/catalog/ || exit 2
# Rounds: every benchmark once per round, so that the machine's slower and
# faster periods weigh on both implementations alike.
out=""
for ((round = 1; round <= count; round++)); do
	r="$(SKILLGATE_BENCH_REF_MAX="$ref_max" "$work/catalog.test" -test.run '^$' \
		-test.bench '^BenchmarkBudget(Reference)?$' -test.benchtime 1x -test.count 1 -test.benchmem)" ||
		{ echo "$r" >&2; exit 2; }
	out+="$r"$'\n'
	echo "budget.sh: round $round/$count done" >&2
done
echo "$out" | grep '^Benchmark' >&2

# median NAME: the median ns/op of a benchmark over the rounds, 0 when absent.
median() {
	echo "$out" | awk -v name="$1" '$1 ~ "^"name"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($i == "ns/op") print $(i-1) }' |
		sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print 0; else print a[int((NR + 1) / 2)] }'
}
spread() {
	echo "$out" | awk -v name="$1" '$1 ~ "^"name"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($i == "ns/op") print $(i-1) }' |
		sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.1f–%.1f", lo/1e6, hi/1e6 }'
}

echo
echo "budgeted catalog, budget 8,000 characters, $count rounds; times are the median (min–max) per call"
echo
echo "| format | skills | catalog.Budget | reference | reference / Budget |"
echo "|---|---|---|---|---|"
ok=1
for f in xml json; do
	for n in 1000 10000 100000; do
		fast="$(median "BenchmarkBudget/format=$f/items=$n")"
		ref="$(median "BenchmarkBudgetReference/format=$f/items=$n")"
		[[ "$fast" != 0 ]] || { echo "budget.sh: no result for $f/$n" >&2; exit 2; }
		if [[ "$ref" != 0 ]]; then
			refcol="$(awk -v r="$ref" 'BEGIN { printf "%.1f ms", r/1e6 }') ($(spread "BenchmarkBudgetReference/format=$f/items=$n"))"
			ratio="$(awk -v r="$ref" -v f="$fast" 'BEGIN { printf "%.0fx", r/f }')"
		else
			refcol="not run (> --ref-max $ref_max)"; ratio=""
		fi
		printf '| %s | %s | %s (%s) | %s | %s |\n' "$f" "$n" "$(awk -v v="$fast" 'BEGIN { printf "%.1f ms", v/1e6 }')" \
			"$(spread "BenchmarkBudget/format=$f/items=$n")" "$refcol" "$ratio"
	done
	t10="$(median "BenchmarkBudget/format=$f/items=10000")"
	t100="$(median "BenchmarkBudget/format=$f/items=100000")"
	awk -v a="$t10" 'BEGIN { exit !(a < 100e6) }' || ok=0
	awk -v a="$t10" -v b="$t100" 'BEGIN { exit !(b < 20 * a) }' || ok=0
	growth="$(awk -v a="$t10" -v b="$t100" 'BEGIN { printf "%.1f", b/a }')"
	echo "| $f: 10,000 skills < 100 ms; 100,000 / 10,000 < 20x | $(awk -v v="$t10" 'BEGIN { printf "%.1f ms", v/1e6 }'); ${growth}x | | |"
done
echo
if ((ok)); then echo "budget.sh: PASS"; else echo "budget.sh: FAIL"; exit 1; fi
