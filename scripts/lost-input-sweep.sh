#!/usr/bin/env bash
# The whole lost-input sweep: the sample match with 4 KB, 16 KB and 64 KB zeroed at every
# offset (one replay per distinct set of damaged records, at its first and last offset),
# through the bundled plugins; no honest player may be flagged. The suite runs every 20th
# set; this runs them all (about 14,000 replays: several minutes on 2 cores). Prints per
# size the windows replayed and exits non-zero on the first honest player flagged.
#
#   scripts/lost-input-sweep.sh          # builds the release preset first
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release >/dev/null
ARBITER_SWEEP_STRIDE=1 build/release/bin/integration_test --gtest_filter='Sizes/LostInputSweep.*' \
  | grep -E 'zeroed|OK|FAILED|Failure|player'
