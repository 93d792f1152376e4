#!/usr/bin/env bash
# Runs every benchmark program in a build folder and prints their tables.
set -euo pipefail
build=${1:-build/bench}
for b in $(find "$build/bench" -maxdepth 1 -type f -executable -name 'koma_*_bench' | sort); do
  echo "== $(basename "$b")"
  "$b" --benchmark_min_time=0.5
done
