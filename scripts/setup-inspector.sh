#!/usr/bin/env bash
# setup-inspector.sh installs the MCP Inspector (its CLI is the outside MCP
# client of the e2e tests) at a pinned version into the npm test directory
# that scripts/setup-npm.sh prepared.
#
# Usage:
#   eval "$(scripts/setup-npm.sh)"
#   scripts/setup-inspector.sh "$SKILLGATE_TEST_NPM_DIR"
#   go test ./e2e/ -run Inspector
#
# DIR defaults to $SKILLGATE_TEST_NPM_DIR, else .cache/npm at the repository
# root. Idempotent: nothing is installed when DIR already holds the pinned
# version. Everything is written to stderr; nothing needs to be eval'ed.
#
# The version is pinned exactly (checked with `npm view
# @modelcontextprotocol/inspector version`: 2.12.0). Its package.json asks
# for Node >= 22.19 (for the web UI); the --cli mode the tests use runs on
# Node 20, so npm's EBADENGINE warning is expected and harmless.
set -euo pipefail

spec="@modelcontextprotocol/inspector@2.12.0"
name="${spec%@*}"
want="${spec##*@}"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-${SKILLGATE_TEST_NPM_DIR:-$repo_root/.cache/npm}}"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "setup-inspector.sh: $tool is not installed; install Node.js 20 or newer (Debian: apt-get install nodejs npm)" >&2
		exit 1
	fi
done

mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
manifest="$dir/node_modules/$name/package.json"
have=""
if [[ -f "$manifest" ]]; then
	have="$(node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version || ""))' "$manifest")"
fi
if [[ "$have" == "$want" && -x "$dir/node_modules/.bin/mcp-inspector" ]]; then
	echo "setup-inspector.sh: $dir already holds $spec" >&2
	exit 0
fi
if [[ ! -f "$dir/package.json" ]]; then
	printf '{\n  "name": "skillgate-test-mcp-servers",\n  "private": true\n}\n' >"$dir/package.json"
fi
echo "setup-inspector.sh: installing $spec into $dir" >&2
npm install --prefix "$dir" --save-exact --no-audit --no-fund --omit=dev --loglevel=error "$spec" >&2
have="$(node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version || ""))' "$manifest")"
if [[ "$have" != "$want" ]]; then
	echo "setup-inspector.sh: $name: installed version is '$have', want $want" >&2
	exit 1
fi
