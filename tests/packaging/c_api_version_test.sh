#!/usr/bin/env bash
# Every text that names the embedding C API's version (arbiter_host.h) names the one the
# header defines, ARBITER_HOST_API_VERSION, so that a new version cannot leave a relay
# author reading an old one.
# Usage: c_api_version_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
header="$source_dir/host/include/arbiter/arbiter_host.h"

fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(sed -n 's/^#define ARBITER_HOST_API_VERSION \([0-9][0-9]*\)$/\1/p' "$header")
[ -n "$version" ] || fail "no '#define ARBITER_HOST_API_VERSION N' in $header"
echo "$header: version $version"

# "arbiter_host.h`, version N", "arbiter_host.h, version N", "arbiter_host.h` (API version N)"
pattern='arbiter_host\.h`?,? \(?(API )?version [0-9]+'
failures=0
for file in README.md examples/python-relay/README.md examples/python-relay/relay.py; do
  mentions=$(grep -oE "$pattern" "$source_dir/$file" || true)
  [ -n "$mentions" ] || fail "$file no longer names the C API's version: update this test's list"
  while IFS= read -r mention; do
    if [ "${mention##* }" = "$version" ]; then
      echo "$file: $mention"
    else
      echo "FAIL: $file says \"$mention\", the header defines version $version" >&2
      failures=$((failures + 1))
    fi
  done <<<"$mentions"
done
[ "$failures" -eq 0 ] || exit 1
echo "the C API version agrees: OK"
