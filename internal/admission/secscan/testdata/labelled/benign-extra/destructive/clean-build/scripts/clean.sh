#!/bin/sh
set -eu
rm -rf ./build ./dist "${TMPDIR:-/tmp}/build-clean-cache"
find . -name '__pycache__' -type d -prune -exec rm -rf {} +
