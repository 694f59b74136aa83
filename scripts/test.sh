#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test with ctest.
# Usage: scripts/test.sh [PRESET]   (release by default; asan for the address and
# undefined-behaviour sanitizers over everything; tsan for ThreadSanitizer over the
# server, its serve tests and the embedding API's)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
bash scripts/build.sh "$preset"
ctest --preset "$preset"
