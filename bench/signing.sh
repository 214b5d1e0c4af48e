#!/usr/bin/env bash
# signing.sh: what verifying signatures adds to a cold scan. The same tree
# of N generated skills, each signed (bench/signtree; the generator's
# invalid skills cannot be signed), is scanned cold as an imported root (no
# signature checked), as a first_party root whose key is trusted (every
# per-skill signature read and verified), and as a first_party root signed
# by one index (skillgate sign --root: the index verified once, each skill
# compared with its entry), R times each, alternating. Issue 16's goal:
# verification adds at most 10 % to the cold scan; the index row is gated.
#
# Usage: bench/signing.sh [-n N] [--runs R]     (default 10000 skills, 3 runs)
# Exit status: 0 PASS, 1 FAIL, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=10000
runs=3
while (($# > 0)); do
	case "$1" in
	-n) n="${2:?-n needs a value}"; shift 2 ;;
	--runs) runs="${2:?--runs needs a value}"; shift 2 ;;
	-h | --help) sed -n '2,10p' "$0"; exit 0 ;;
	*) echo "signing.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ "$n" =~ ^[1-9][0-9]*$ && "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "signing.sh: -n and --runs must be positive integers" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/skillgate" ./cmd/skillgate || exit 2
go build -o "$work/gen" ./bench/gen || exit 2
go build -o "$work/signtree" ./bench/signtree || exit 2
"$work/gen" -n "$n" -out "$work/tree" >/dev/null || exit 2
mkdir -p "$work/keys"
read -r signed unsigned indexed < <("$work/signtree" -dir "$work/tree" -keys "$work/keys" -index "$work/index.dsse.json") || exit 2
[[ -n "$indexed" ]] || exit 2
printf 'signing:\n  keys:\n    - name: bench\n      public_key: %s\n      trust: [first_party]\n' "$work/keys/bench.pub" >"$work/config.yaml"

# scan TRUST [index]: a cold scan into a fresh data directory, with the
# signed index in place when asked; prints "ms valid".
scan() {
	if [[ "${2:-}" == index ]]; then
		cp "$work/index.dsse.json" "$work/tree/.skillgate-index.dsse.json"
	else
		rm -f "$work/tree/.skillgate-index.dsse.json"
	fi
	local data="$work/data-$1-$RANDOM"
	local t0 t1 out
	t0=$(date +%s%N)
	out="$("$work/skillgate" --data "$data" --config "$work/config.yaml" scan --root "$work/tree" --trust "$1" --max-dirs 1000000 --json)" || { echo "scan failed" >&2; exit 2; }
	t1=$(date +%s%N)
	rm -rf "$data"
	echo "$(((t1 - t0) / 1000000)) $(echo "$out" | sed -n 's/.*"valid": *\([0-9]*\).*/\1/p' | head -1)"
}

imported=()
first=()
index=()
valid_i=0
valid_f=0
valid_x=0
for ((r = 0; r < runs; r++)); do
	read -r ms valid_i < <(scan imported)
	imported+=("$ms")
	read -r ms valid_f < <(scan first_party)
	first+=("$ms")
	read -r ms valid_x < <(scan first_party index)
	index+=("$ms")
done
rm -f "$work/tree/.skillgate-index.dsse.json"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mi=$(median "${imported[@]}")
mf=$(median "${first[@]}")
mx=$(median "${index[@]}")
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "signing: cold scan of $n skills ($signed signed, $unsigned invalid and unsigned; the index lists $indexed), $runs runs each, load $load"
printf '%-40s %10s %18s %8s %7s\n' "root" "median ms" "runs ms" "valid" "ratio"
ratio() { awk -v a="$mi" -v b="$1" 'BEGIN { printf "%.3f", b / a }'; }
printf '%-40s %10s %18s %8s %7s\n' "imported (no signature checked)" "$mi" "$(IFS=,; echo "${imported[*]}")" "$valid_i" "1.000"
printf '%-40s %10s %18s %8s %7s\n' "first_party (every signature verified)" "$mf" "$(IFS=,; echo "${first[*]}")" "$valid_f" "$(ratio "$mf")"
printf '%-40s %10s %18s %8s %7s\n' "first_party (one signed index)" "$mx" "$(IFS=,; echo "${index[*]}")" "$valid_x" "$(ratio "$mx")"
if [[ "$valid_f" != "$signed" || "$valid_x" != "$indexed" ]]; then
	echo "FAIL: the first_party scans accepted $valid_f and $valid_x skills; $signed are signed, $indexed indexed" >&2
	exit 1
fi
awk -v a="$mi" -v b="$mx" 'BEGIN {
	r = b / a
	v = (r <= 1.10) ? "PASS" : "FAIL"
	printf "target: verifying one signed index adds at most 10%% to a cold scan: ratio %.3f: %s\n", r, v
	exit (v == "PASS") ? 0 : 1
}'
