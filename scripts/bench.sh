#!/usr/bin/env bash
# The benchmarks: installs what is missing, builds the `bench` preset (Release, with
# ARBITER_BUILD_BENCHMARKS=ON) and runs the whole pipeline in one run, printing events/s
# per core and ns/event for every item (docs/performance.md).
# Extra arguments go to arbiter-bench (e.g. --reps 5, --quick, --skip reload).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh bench
exec build/bench/bin/arbiter-bench "$@"
