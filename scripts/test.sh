#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test with ctest;
# then builds the server and its serve tests again with ThreadSanitizer and runs those
# (with the embedding API's, reload and work-queue tests), since the server's threads are
# where a race would hide.
# Usage: scripts/test.sh           the release suite, then the tsan suite
#        scripts/test.sh PRESET    one preset alone: release, debug, asan (address and
#                                  undefined-behaviour sanitizers over everything) or tsan
set -euo pipefail
cd "$(dirname "$0")/.."
presets=("$@")
[ "$#" -gt 0 ] || presets=(release tsan)
for preset in "${presets[@]}"; do
  echo "== $preset: build" >&2
  bash scripts/build.sh "$preset"
  echo "== $preset: test" >&2
  ctest --preset "$preset"
done
