#!/usr/bin/env bash
# The embedding library stops at the host's core: a relay that links libarbiter-host.so
# pulls in no database client, no seccomp and no web server. (The store, the review page
# and `arbiter serve` are the arbiter command's; the runner alone loads seccomp.)
# Usage: embed_library_needs.sh LIBARBITER_HOST_SO
set -euo pipefail
library=$1
needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "FAIL: readelf found no NEEDED entry in $library"; exit 1; }
echo "$library needs:"
echo "$needed" | sed 's/^/  /'
for forbidden in libpq libsqlite3 libseccomp libboost; do
  if echo "$needed" | grep -q "^$forbidden"; then
    echo "FAIL: $library needs $forbidden"
    exit 1
  fi
done
echo "embedding library: OK"
