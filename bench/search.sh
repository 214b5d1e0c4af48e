#!/usr/bin/env bash
# search.sh: skill search (skill_list's query, 'skillgate search') in one run.
#
#   latency: a ranked first page (limit 100) of skill_list on a catalog
#     snapshot of N generated skills (bench/gen), the labelled queries and
#     single words cycled; p50/p99 wall time and thread CPU time, against
#     the substring filter the query was before (same snapshot, same queries)
#   index: building the BM25F index a snapshot builds
#   relevance: MRR and recall@5 of the ranking on the labelled queries of
#     internal/registry/registry/testdata/search_queries.json over the
#     public corpus (SKILLGATE_CORPUS), against the substring match
#
# Usage: bench/search.sh [-n N] [-queries Q] [-gen-dir DIR]
#   -n N         skills to generate (default 100000)
#   -queries Q   timed queries per measurement (default 3000)
#   -gen-dir DIR where bench/gen writes (or reuses) the tree
#                (default $TMPDIR/skillgate-bench-skills-nN-s1)
# Needs SKILLGATE_CORPUS (the 592-skill corpus) for the relevance rows.
# Goal (issue 32): ranked page p99 <= 10 ms at 100,000 skills.
# Exit status 0 when the gate holds, 1 when it does not, 2 on a set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=100000
queries=3000
gendir=""
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	-queries) queries="${2:?-queries needs a value}"; shift 2 ;;
	-gen-dir) gendir="${2:?-gen-dir needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "search.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done
[[ -n "$gendir" ]] || gendir="${TMPDIR:-/tmp}/skillgate-bench-skills-n$n-s1"

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-search-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
go build -o "$work/gen" ./bench/gen || exit 2
"$work/gen" -n "$n" -out "$gendir" -reuse >&2 || exit 2
go test -c -pgo=cmd/skillgate/default.pgo -o "$work/registry.test" ./internal/registry/registry/ || exit 2

# The test binary reads its testdata relative to the package directory.
cd internal/registry/registry
lat="$(SKILLGATE_BENCH_TREE="$gendir" "$work/registry.test" -test.run '^$' -test.bench '^Benchmark(SearchPage|SubstringPage)$' \
	-test.benchtime "${queries}x" -test.count 1 -test.timeout 60m)" || { echo "$lat" >&2; exit 2; }
idx="$(SKILLGATE_BENCH_TREE="$gendir" "$work/registry.test" -test.run '^$' -test.bench '^BenchmarkSearchIndexBuild$' \
	-test.benchtime 3x -test.count 1 -test.timeout 60m)" || { echo "$idx" >&2; exit 2; }
rel=""
if [[ -n "${SKILLGATE_CORPUS:-}" ]]; then
	rel="$("$work/registry.test" -test.run '^TestSearchRelevance$' -test.count 1 | grep '^RELEVANCE')" || true
fi
echo "$lat"$'\n'"$idx"$'\n'"$rel" >&2

echo "$lat"$'\n'"$idx"$'\n'"$rel" | awk -v n="$n" -v load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" '
function metric(line, unit,   i, f) { split(line, f, /[ \t]+/); for (i = 1; i <= length(f); i++) if (f[i] == unit) return f[i-1]; return 0 }
function ms(x) { return sprintf("%.2f ms", x / 1e6) }
/^BenchmarkSearchPage/ { s50 = metric($0, "p50-ns"); s99 = metric($0, "p99-ns"); sc50 = metric($0, "cpu-p50-ns"); sc99 = metric($0, "cpu-p99-ns"); skills = metric($0, "skills") }
/^BenchmarkSubstringPage/ { b50 = metric($0, "p50-ns"); b99 = metric($0, "p99-ns"); bc50 = metric($0, "cpu-p50-ns"); bc99 = metric($0, "cpu-p99-ns") }
/^BenchmarkSearchIndexBuild/ { build = $3; terms = metric($0, "terms") }
/^RELEVANCE/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); r[kv[1]] = kv[2] } }
END {
	if (s99 == 0) { print "search.sh: no benchmark results" > "/dev/stderr"; exit 2 }
	printf "\n%d generated skills (%d in the T3 pool); load average %s\n\n", n, skills, load
	printf "| query path | p50 wall | p99 wall | p50 CPU | p99 CPU |\n|---|---|---|---|---|\n"
	printf "| ranked page (BM25F index) | %s | %s | %s | %s |\n", ms(s50), ms(s99), ms(sc50), ms(sc99)
	printf "| substring filter (before) | %s | %s | %s | %s |\n", ms(b50), ms(b99), ms(bc50), ms(bc99)
	printf "\nindex build: %s for %d skills, %d terms\n", ms(build), skills, terms
	if ("queries" in r) {
		printf "\nrelevance on %s labelled queries over %s corpus skills\n\n| ranking | MRR | recall@5 | queries with a hit |\n|---|---|---|---|\n", r["queries"], r["skills"]
		printf "| BM25F (skill_list query) | %s | %s | %s |\n", r["ranked_mrr"], r["ranked_recall5"], r["ranked_found"]
		printf "| substring match (before) | %s | %s | %s |\n", r["substring_mrr"], r["substring_recall5"], r["substring_found"]
	}
	g = s99 <= 10e6
	printf "\n| gate | measured | result |\n|---|---|---|\n| ranked page p99 <= 10 ms (wall) | %s | %s |\n", ms(s99), (g ? "PASS" : "FAIL")
	exit g ? 0 : 1
}'
