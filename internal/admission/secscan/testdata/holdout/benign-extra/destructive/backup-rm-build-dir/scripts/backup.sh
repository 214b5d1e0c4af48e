#!/usr/bin/env bash
set -euo pipefail
BUILD_DIR="$(pwd)/.backup-build"
rm -rf "$BUILD_DIR"
mkdir -p "$BUILD_DIR"
cp -r site/. "$BUILD_DIR/"
tar -czf "backup-$(date +%F).tgz" -C "$BUILD_DIR" .
rm -rf "$BUILD_DIR"
