#!/usr/bin/env bash
# scanner.sh: measure skillgate's content scanner (admission layer 4) on the
# labelled set kept in the repository and on the benign public corpus
# (issue 31): recall, precision and F1 per class of case and per rule id,
# the share of benign corpus skills with a blocking finding, the files
# skipped, and the scan time per skill. With --base REF, the scanner of git
# revision REF is measured in the same run on the same data, and the whole
# corpus's scan time is compared (goal: at most 2x REF's).
#
# Usage: bench/scanner.sh [--set labelled|holdout] [--runs R] [--corpus DIR] [--base REF] [--json-out FILE] [-v]
#
# See bench/README.md ("scanner benchmark"). Exit status: 0 when every gate
# passes, 1 when one fails, 2 on a usage or set-up error.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bench/scanner.sh [options]

  --set NAME       the set of cases: labelled (default; the rules are tuned on it) or
                   holdout (held out: never tune a rule on it), a folder of
                   internal/admission/secscan/testdata
  --runs R         timed scans of the corpus, the median is reported (default 3, env BENCH_RUNS)
  --corpus DIR     the benign corpus (default: $SKILLGATE_CORPUS, else ../shared/corpus;
                   skipped when absent, and the corpus gate then fails)
  --base REF       also measure the scanner of git revision REF (e.g. main) on the same
                   labelled set and corpus, alternating with this one, and compare the
                   corpus scan time (gate: at most --time-goal times REF's)
  --time-goal X    the largest ratio of this scan time to REF's (default 2)
  --json-out FILE  also write the results as JSON to FILE
  -v               also list every case and every blocked corpus skill with its findings
  -h, --help       this text

Gates: malicious cases caught (a high or critical finding on a labelled line)
at least 90 %; benign corpus skills with a high or critical finding at most
1 %; with --base, the corpus scan time at most --time-goal times REF's.
EOF
}

set_name=labelled
runs="${BENCH_RUNS:-3}"
corpus="${SKILLGATE_CORPUS:-}"
base=""
time_goal=2
json_out=""
verbose=()
while (($# > 0)); do
	case "$1" in
	--set) set_name="${2:?--set needs a value}"; shift 2 ;;
	--runs) runs="${2:?--runs needs a value}"; shift 2 ;;
	--corpus) corpus="${2:?--corpus needs a value}"; shift 2 ;;
	--base) base="${2:?--base needs a value}"; shift 2 ;;
	--time-goal) time_goal="${2:?--time-goal needs a value}"; shift 2 ;;
	--json-out) json_out="${2:?--json-out needs a value}"; shift 2 ;;
	-v) verbose=(-v); shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "scanner.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
done
[[ "$set_name" == labelled || "$set_name" == holdout ]] || { echo "scanner.sh: --set must be labelled or holdout (got '$set_name')" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "scanner.sh: --runs must be a positive integer (got '$runs')" >&2; exit 2; }
[[ "$time_goal" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "scanner.sh: --time-goal must be a number (got '$time_goal')" >&2; exit 2; }

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
labelled="$repo_root/internal/admission/secscan/testdata/$set_name"
if [[ -z "$corpus" && -f "$repo_root/../shared/corpus/verdicts.jsonl" ]]; then
	corpus="$repo_root/../shared/corpus"
fi

log() { printf 'scanner.sh: %s\n' "$*" >&2; }
die() { printf 'scanner.sh: %s\n' "$*" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-scanner-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v go >/dev/null 2>&1 || die "go is not installed"
(cd "$repo_root" && go build -o "$work/eval" ./bench/scannereval) || die "could not build bench/scannereval"

# The base: REF's tree, with its own bench/scannereval, or this one when REF
# predates it (it uses only secscan.Dir and the report's fields).
if [[ -n "$base" ]]; then
	[[ -n "$corpus" ]] || die "--base compares the corpus scan time: it needs the corpus (--corpus or SKILLGATE_CORPUS)"
	base_commit="$(git -C "$repo_root" rev-parse --verify --quiet --short "$base^{commit}")" || die "--base $base is not a commit"
	mkdir "$work/base"
	git -C "$repo_root" archive --format=tar "$base" | tar -x -C "$work/base" || die "could not export $base"
	if [[ ! -d "$work/base/bench/scannereval" ]]; then
		mkdir -p "$work/base/bench/scannereval"
		cp "$repo_root"/bench/scannereval/*.go "$work/base/bench/scannereval/"
	fi
	# A base without admission's lineage package builds the harness without it.
	tags=()
	[[ -d "$work/base/internal/admission/lineage" ]] || tags=(-tags nolineage)
	(cd "$work/base" && go build "${tags[@]}" -o "$work/base-eval" ./bench/scannereval) || die "could not build the scanner of $base"
fi

corpus_args=()
[[ -n "$corpus" ]] && corpus_args=(-corpus "$corpus")

# evaluate BIN OUT RUNS [ARGS...]: one measurement into OUT.txt and
# OUT.json; its status, 0 or 1 (a gate missed), is left in eval_rc; any
# other status is a set-up error.
eval_rc=0
evaluate() {
	local bin="$1" out="$2" n="$3"
	shift 3
	eval_rc=0
	"$bin" -labelled "$labelled" "${corpus_args[@]}" -runs "$n" -json-out "$out.json" "$@" >"$out.txt" 2>"$out.err" || eval_rc=$?
	if ((eval_rc > 1)); then
		cat "$out.err" >&2
		die "$bin failed (status $eval_rc)"
	fi
}

# total_us FILE: the corpus scan time a result holds ("" without a corpus).
total_us() { grep -o '"total_us": [0-9]*' "$1" | head -1 | grep -o '[0-9]*$' || true; }

# The table: this scanner, R timed runs of the corpus.
evaluate "$work/eval" "$work/this" "$runs" "${verbose[@]}"
cat "$work/this.txt"
rc=$eval_rc

base_json=null
if [[ -n "$base" ]]; then
	# Alternate the two scanners, one corpus scan each per round, so that
	# the machine's other load falls on both alike.
	: >"$work/base.us"
	: >"$work/this.us"
	for ((i = 0; i < runs; i++)); do
		evaluate "$work/base-eval" "$work/b$i" 1
		total_us "$work/b$i.json" >>"$work/base.us"
		evaluate "$work/eval" "$work/t$i" 1
		total_us "$work/t$i.json" >>"$work/this.us"
	done
	median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	b_us="$(median "$work/base.us")"
	t_us="$(median "$work/this.us")"
	b_recall="$(grep -o '"recall": [0-9.e-]*' "$work/b0.json" | tail -1 | grep -o '[0-9.e-]*$')"
	read -r ratio pass <<<"$(awk -v b="$b_us" -v t="$t_us" -v g="$time_goal" 'BEGIN { r = t / b; printf "%.2f %s\n", r, (r <= g ? "PASS" : "FAIL") }')"
	echo
	awk -v ref="$base ($base_commit)" -v b="$b_recall" -v s="$set_name" 'BEGIN { printf "base %s: malicious cases caught %.1f %% (same %s set)\n", ref, 100 * b, s }'
	awk -v ref="$base ($base_commit)" -v b="$b_us" -v t="$t_us" -v n="$runs" 'BEGIN { printf "corpus scan time, median of %d alternating runs: base %s %.1f ms, this %.1f ms\n", n, ref, b / 1000, t / 1000 }'
	echo "gate: corpus scan time ${ratio}x the base's (goal ≤ ${time_goal}x): $pass"
	[[ "$pass" == PASS ]] || rc=1
	base_json="{\"ref\": \"$base\", \"commit\": \"$base_commit\", \"recall\": $b_recall, \"base_total_us\": $b_us, \"this_total_us\": $t_us, \"ratio\": $ratio, \"goal\": $time_goal, \"pass\": $([[ $pass == PASS ]] && echo true || echo false)}"
fi

if [[ -n "$json_out" ]]; then
	{ printf '{"scanner": '; cat "$work/this.json"; printf ', "time_vs_base": %s}\n' "$base_json"; } >"$json_out" || die "could not write $json_out"
fi
exit "$rc"
