#!/usr/bin/env bash
# setup-npm.sh installs the third-party MCP servers that the mcpclient tests
# start as real stdio subprocesses, at pinned versions, into one directory.
#
# Usage:
#   eval "$(scripts/setup-npm.sh [DIR])"
#   go test -race ./internal/upstream/mcpclient/...
#
# DIR defaults to .cache/npm at the repository root. The script is idempotent:
# when DIR already holds exactly the pinned versions it installs nothing. The
# only line written to stdout is the export for SKILLGATE_TEST_NPM_DIR; all
# progress goes to stderr, so the output can be eval'ed.
#
# Top-level packages are pinned exactly (--save-exact); their own dependencies
# follow the ranges those packages declare, recorded in DIR/package-lock.json.
set -euo pipefail

# Pinned versions, checked with `npm view <name> version` (2026.8.31 is the
# latest release of all three at the time of writing).
packages=(
	"@modelcontextprotocol/server-everything@2026.8.31"
	"@modelcontextprotocol/server-filesystem@2026.8.31"
	"@modelcontextprotocol/server-memory@2026.8.31"
	# Provider servers of the executor tests (docs/executors.md): they list
	# their tools without network; GitLab's needs GITLAB_PERSONAL_ACCESS_TOKEN
	# set (to anything) to start.
	"@modelcontextprotocol/server-github@2025.4.8"
	"@modelcontextprotocol/server-gitlab@2025.4.25"
)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$repo_root/.cache/npm}"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "setup-npm.sh: $tool is not installed; install Node.js 20 or newer (Debian: apt-get install nodejs npm)" >&2
		exit 1
	fi
done

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# installed_version prints the version of package $1 installed in $dir, or
# nothing when it is absent.
installed_version() {
	local manifest="$dir/node_modules/$1/package.json"
	if [[ -f "$manifest" ]]; then
		node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version || ""))' "$manifest"
	fi
}

missing=()
for spec in "${packages[@]}"; do
	name="${spec%@*}"
	want="${spec##*@}"
	have="$(installed_version "$name")"
	if [[ "$have" != "$want" ]]; then
		missing+=("$spec")
	fi
done

if ((${#missing[@]} > 0)); then
	if [[ ! -f "$dir/package.json" ]]; then
		printf '{\n  "name": "skillgate-test-mcp-servers",\n  "private": true\n}\n' >"$dir/package.json"
	fi
	echo "setup-npm.sh: installing ${missing[*]} into $dir" >&2
	npm install --prefix "$dir" --save-exact --no-audit --no-fund --omit=dev --loglevel=error "${packages[@]}" >&2
	for spec in "${packages[@]}"; do
		name="${spec%@*}"
		want="${spec##*@}"
		have="$(installed_version "$name")"
		if [[ "$have" != "$want" ]]; then
			echo "setup-npm.sh: $name: installed version is '${have}', want $want" >&2
			exit 1
		fi
	done
else
	echo "setup-npm.sh: $dir already holds the pinned versions" >&2
fi

printf 'export SKILLGATE_TEST_NPM_DIR=%q\n' "$dir"
