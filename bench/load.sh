#!/usr/bin/env bash
# load.sh: skillgate's whole-system load test (issue 12's acceptance).
# 100 agents over streamable HTTP against `skillgate serve` on a registry of
# 10,000 generated skills, on 127.0.0.1 only: connect, then, pausing before
# each call as a model's turn would (-think, mean 1s), page through
# skill_list, load a skill, read_file and grep, call a capability (npm
# server-filesystem's read_text_file through an imported, approved skill).
# Prints per-operation p50/p99, the server's peak RSS, errors, and checks
# that the audit log holds one record per capability call and verifies.
# Goals: 100 agents connected < 2 s, skill_list page p99 < 20 ms, RSS < 500 MB.
#
# Usage: bench/load.sh [-agents N] [-skills N] [-think 1s] [-timeout 10m] [-json FILE]
# -think 0: no pause, all agents at once (saturation: throughput, not latency).
# The generated registry is kept in $TMPDIR/skillgate-load-skills-nN and
# reused. SKILLGATE_BIN=PATH runs a given build. Needs Go, Node.js and npm.
# Exit status: 0 every goal and check holds, 1 one fails, 2 set-up error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${1:-}" in -h | --help) sed -n '2,16p' "$0"; exit 0 ;; esac
eval "$(scripts/setup-npm.sh)" || exit 2
exec go run ./bench/load "$@"
