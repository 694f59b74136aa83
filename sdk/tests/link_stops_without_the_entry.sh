#!/usr/bin/env bash
# Builds a plugin target made with arbiter_add_plugin() whose sources lack the
# ARBITER_PLUGIN line, and passes when its link fails naming arbiter_plugin_entry and
# leaves no library behind.
# Usage: link_stops_without_the_entry.sh BUILD_DIR TARGET LIBRARY
set -uo pipefail
build_dir=$1
target=$2
library=$3

rm -f "$library"
output=$(cmake --build "$build_dir" --target "$target" 2>&1)
status=$?
echo "$output"
if [ "$status" -eq 0 ]; then
  echo "FAIL: $target built, though nothing in it defines arbiter_plugin_entry" >&2
  exit 1
fi
if ! grep -q "arbiter_plugin_entry" <<<"$output"; then
  echo "FAIL: the build of $target failed, but not by naming arbiter_plugin_entry" >&2
  exit 1
fi
# The step that failed is the link of the library itself (ninja's FAILED line, make's
# *** line), not a compile on the way.
name=$(basename "$library")
if ! grep -Eq "(FAILED: |\*\*\* \[).*$name" <<<"$output"; then
  echo "FAIL: the build of $target failed before the link of $name" >&2
  exit 1
fi
if [ -e "$library" ]; then
  echo "FAIL: the failed link left $library behind" >&2
  exit 1
fi
echo "the link stops without the entry: OK"
