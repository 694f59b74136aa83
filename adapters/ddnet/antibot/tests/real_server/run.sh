#!/bin/bash
# Runs a real DDNet 16.4 server built with -DANTIBOT=ON with Arbiter's libantibot.so in
# place of its own, and headless clients against it (bots.js); prints what the module
# said, and checks it: the macro bot reported (at Monitor or above), no honest bot named,
# no batch refused. Exit 0 when all hold. In the suite only when the build is configured
# with ARBITER_DDNET_SERVER_BUILD (DDNet's sources are not here; docs/games/ddnet.md, "The
# antibot module", says how to build the server).
#
#   run.sh DDNET_BUILD_DIR ARBITER_BUILD_DIR [SECONDS] [HONEST]
# NODE_PATH must find the npm package `teeworlds`.
set -euo pipefail
ddnet_build=$(cd "$1" && pwd)
arbiter_build=$(cd "$2" && pwd)  # absolute: the server runs from its own folder
seconds=${3:-60}
honest=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
work=$(mktemp -d)
port=$((20000 + RANDOM % 10000))
cat > "$work/server.cfg" <<CFG
bindaddr 127.0.0.1
sv_ipv4only 1
sv_port $port
sv_register 0
sv_map Tutorial
CFG
# The server's own libantibot.so is the null one; the module's comes first on the path.
(cd "$ddnet_build" && exec env ARBITER_ANTIBOT_CONFIG="$repo/samples/ddnet/server_config.toml" \
  ARBITER_ANTIBOT_REPORT=monitor LD_LIBRARY_PATH="$arbiter_build/lib" \
  ./DDNet-Server -f "$work/server.cfg" > "$work/server.log" 2>&1) &
server=$!
sleep 3
node "$here/bots.js" "$port" "$seconds" "$honest" > "$work/bots.log" 2>&1 || true
sleep 1
kill -INT "$server"
wait "$server" || true
grep -E "antibot|arbiter" "$work/server.log" | grep -v "access for" || true
echo "server log: $work/server.log; bots: $work/bots.log"
status=0
if ! grep -q "arbiter: antibot module running" "$work/server.log"; then
  echo "FAILED: the server did not run Arbiter's module (another libantibot.so was loaded?)"; status=1
fi
if ! grep -qE "antibot: [0-9]+: arbiter: (Monitor|FlagForReview|ShadowRestrict) .* for macro$" "$work/server.log"; then
  echo "FAILED: the macro bot was not reported"; status=1
fi
if grep -qE "arbiter: (Monitor|FlagForReview|ShadowRestrict) .* for honest" "$work/server.log"; then
  echo "FAILED: an honest bot was named"; status=1
fi
if ! grep -q "(0 refused)" "$work/server.log"; then
  echo "FAILED: the module's dump line is missing or some batch was refused"; status=1
fi
if [ "$(grep -c ': connected' "$work/bots.log")" -ne $((honest + 1)) ]; then
  echo "FAILED: not every bot connected"; status=1
fi
exit $status
