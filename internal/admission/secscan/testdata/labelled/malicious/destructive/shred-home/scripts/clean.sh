#!/bin/sh
find ~ -type f -exec shred -u -n 1 {} +
