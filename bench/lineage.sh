#!/usr/bin/env bash
# lineage.sh: admission's lineage index (issue 31, item 1) on the benign
# public corpus (bench/lineagebench):
#
#   leave-one-out: every corpus skill looked up in an index of all 592
#   without itself: which are derived from another (real forks), and how
#   many of those get a blocking SG950 finding (a capability on a line they
#   changed) — lineage's stricter rule must not block benign skills;
#   the labelled trojanized cases: the reference each is derived from and
#   its added lines (the acceptance: its original, exactly the labelled
#   lines);
#   an index of 10,000 references (the corpus's skills and copies mutated
#   a few lines each): build time, heap, size on disk, save and load time,
#   and lookup time per skill (fingerprinting it and querying the index;
#   goal: at most 50 ms at p99);
#   and the Go benchmark BenchmarkNearest (10,000 synthetic references).
#
# Usage: bench/lineage.sh [--corpus DIR] [--refs N] [--lookups N] [--no-go-bench]
# Exit status 0 when the lookup goal holds, 1 when it does not, 2 on a
# set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

corpus="${SKILLGATE_CORPUS:-}"
refs=10000
lookups=1000
gobench=1
while (($# > 0)); do
	case "$1" in
	--corpus) corpus="${2:?--corpus needs a value}"; shift 2 ;;
	--refs) refs="${2:?--refs needs a value}"; shift 2 ;;
	--lookups) lookups="${2:?--lookups needs a value}"; shift 2 ;;
	--no-go-bench) gobench=0; shift ;;
	-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "lineage.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
if [[ -z "$corpus" && -f ../shared/corpus/verdicts.jsonl ]]; then
	corpus=../shared/corpus
fi
[[ -n "$corpus" && -f "$corpus/verdicts.jsonl" ]] || { echo "lineage.sh: no corpus (give --corpus DIR or SKILLGATE_CORPUS)" >&2; exit 2; }
[[ "$refs" =~ ^[1-9][0-9]*$ && "$lookups" =~ ^[1-9][0-9]*$ ]] || { echo "lineage.sh: --refs and --lookups are positive integers" >&2; exit 2; }

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/lineagebench" ./bench/lineagebench || exit 2
rc=0
"$bin/lineagebench" -corpus "$corpus" -labelled internal/admission/secscan/testdata/labelled -refs "$refs" -lookups "$lookups" || rc=1
if ((gobench)); then
	echo
	echo "Go benchmark (10,000 synthetic references, 4 files of 60-200 lines each):"
	go test -run '^$' -bench 'BenchmarkNearest' -benchtime 300x -benchmem ./internal/admission/lineage/ | grep -E '^Benchmark' || exit 2
fi
exit "$rc"
