#!/usr/bin/env bash
# test.sh runs skillgate's whole test suite with every real component the
# tests use: it installs what is missing (Debian packages, the npm MCP
# servers, the versitygw S3 server, PostgreSQL), starts the servers on
# loopback, runs `go test -race ./...`, runs the end-to-end tests once
# more on PostgreSQL, and stops the servers again.
#
# Usage: scripts/test.sh [go test flags...]   e.g. scripts/test.sh -run Corpus
# (the flags apply to both runs: -run TestStdioWalk runs it on both stores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { echo "test.sh: $*" >&2; }

# Debian packages the tests need: Node.js for the npm MCP servers, bubblewrap,
# Chromium, groff, git.
need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# bubblewrap confines the MCP servers an install introspects (package sandbox).
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
# Chromium drives the admin console's browser tests (chromedp).
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# groff checks the man pages 'skillgate man' writes; git serves the
# repositories 'skillgate add' and git installs read (git http-backend).
command -v groff >/dev/null 2>&1 || need_apt+=(groff-base)
command -v git >/dev/null 2>&1 || need_apt+=(git)
if ((${#need_apt[@]} > 0)); then
	log "installing ${need_apt[*]} with apt-get"
	scripts/apt-install.sh "${need_apt[@]}"
fi

# Go modules.
go mod download

# Real third-party MCP servers from npm, for the tests that start a server
# directly (mcpclient, the Inspector) and the benchmarks. Tests that install
# a skill do not use them: skillgate fetches each npx launch from the npm
# registry, as users' installs do.
if [[ -x scripts/setup-npm.sh ]]; then
	eval "$(scripts/setup-npm.sh)"
fi
# The MCP Inspector CLI, the outside client of the e2e tests.
if [[ -x scripts/setup-inspector.sh && -n "${SKILLGATE_TEST_NPM_DIR:-}" ]]; then
	scripts/setup-inspector.sh "$SKILLGATE_TEST_NPM_DIR"
fi

# The servers started below are stopped on exit, whatever happens.
stops=()
cleanup() {
	local s
	for s in "${stops[@]}"; do $s || true; done
}
trap cleanup EXIT

# A real S3-compatible server on loopback.
if [[ -x scripts/setup-s3.sh ]]; then
	eval "$(scripts/setup-s3.sh)"
	stops+=("scripts/setup-s3.sh stop")
fi

# A real PostgreSQL on loopback (docs/deploy.md): the store conformance
# suite runs on it, and the end-to-end run below.
if [[ -x scripts/setup-postgres.sh ]]; then
	eval "$(scripts/setup-postgres.sh)"
	stops+=("scripts/setup-postgres.sh stop")
fi

# The public skill corpus, when it sits beside the checkout (tests skip
# cleanly without it).
if [[ -z "${SKILLGATE_CORPUS:-}" && -f ../shared/corpus/verdicts.jsonl ]]; then
	export SKILLGATE_CORPUS="$(cd ../shared/corpus && pwd)"
fi

go vet ./...
# -pgo=off: the tests of the main package would otherwise build every
# dependency a second time with cmd/skillgate/default.pgo; the profile
# changes how code is compiled, not what it does. -timeout: the end-to-end
# package starts real npm servers and takes longer than go test's default
# ten minutes on a two-core machine.
go test -race -count=1 -pgo=off -timeout 40m "$@" ./...

# The end-to-end tests again, as a scaled-out deployment runs: every
# skillgate process they start on a fresh PostgreSQL database and, when the
# S3 server is up, with its agents' skill trees and workspaces in the bucket
# (--skills-store s3, under a prefix of this run) (docs/deploy.md).
if [[ -n "${SKILLGATE_TEST_POSTGRES:-}" ]]; then
	if [[ -n "${SKILLGATE_TEST_S3_ENDPOINT:-}" ]]; then
		log "end-to-end tests on PostgreSQL and S3"
		SKILLGATE_SKILLS_STORE=s3 SKILLGATE_S3_ENDPOINT="$SKILLGATE_TEST_S3_ENDPOINT" SKILLGATE_S3_BUCKET="$SKILLGATE_TEST_S3_BUCKET" \
			SKILLGATE_S3_REGION="$SKILLGATE_TEST_S3_REGION" SKILLGATE_S3_ACCESS_KEY="$SKILLGATE_TEST_S3_ACCESS_KEY" \
			SKILLGATE_S3_SECRET_KEY="$SKILLGATE_TEST_S3_SECRET_KEY" SKILLGATE_S3_PREFIX="e2e-$$/" \
			SKILLGATE_E2E_STORE=postgres go test -race -count=1 -pgo=off -timeout 40m "$@" ./e2e/
	else
		log "end-to-end tests on PostgreSQL"
		SKILLGATE_E2E_STORE=postgres go test -race -count=1 -pgo=off -timeout 40m "$@" ./e2e/
	fi
fi
