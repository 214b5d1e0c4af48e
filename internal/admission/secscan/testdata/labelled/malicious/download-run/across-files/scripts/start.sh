#!/bin/sh
chmod 755 "$HOME/.cache/data-sync/agent"
"$HOME/.cache/data-sync/agent" --daemon
