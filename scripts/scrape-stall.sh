#!/usr/bin/env bash
# Whether scrapes of /metrics hold up a relay (issue 39): `arbiter serve` with the
# reference plugin and the test plugin arbiter-test-many-metrics making SERIES series of
# its own (default 400,000); three scrapes timed, then `arbiter send` of a simulated
# 120 s match (8 players, 2,400 batches) timed alone and while a loop scrapes /metrics
# back to back. ARBITER is the binary to measure (default build/release/bin/arbiter); the
# plugins come from build/release.
#
#   cmake --build build/release -j2 --target arbiter test_plugin_many_metrics arbiter_reference
#   bash scripts/scrape-stall.sh [ARBITER] [SERIES]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$PWD/build/release
arbiter=$(realpath "${1:-$build/bin/arbiter}")
series=${2:-400000}
dir=$(mktemp -d)
server=""
scraper=""
cleanup() {
  if [ -n "$scraper" ]; then kill "$scraper" 2> /dev/null || true; fi
  if [ -n "$server" ]; then
    kill -TERM "$server" 2> /dev/null || true
    wait "$server" || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"
cat > server_config.toml << CONF
[host]
server_id = "scrape-stall"
log_level = "warn"
[sinks]
security_log = "security.jsonl"
[serve]
unix_socket = "$dir/relays.sock"
metrics_listen = "127.0.0.1:0"
[plugins.reference]
library = "$build/lib/arbiter/plugins/arbiter-reference.so"
[plugins.many]
library = "$build/test-plugins/arbiter-test-many-metrics.so"
max_metric_names = $series
[plugins.many.config]
series = $series
CONF
for match in 1 2 3; do
  duration=$([ $match = 1 ] && echo 2 || echo 120)
  "$arbiter" simulate "match-$match.arbev" --players honest=6,speed_hack=2 --quiet \
    --duration-s "$duration" --seed "$match" --match "$match" > /dev/null 2>&1
done
"$arbiter" serve server_config.toml --ready-file ready.json 2> server.log &
server=$!
for _ in $(seq 100); do [ -f ready.json ] && break; sleep 0.2; done
metrics=$(python3 -c 'import json; print(json.load(open("ready.json"))["metrics"])')
# The first match's first batch makes the series.
"$arbiter" send match-1.arbev "$dir/relays.sock" > /dev/null 2>&1 || true
for _ in 1 2 3; do
  curl -s -o /dev/null -w "scrape: %{time_total} s, %{size_download} bytes\n" "http://$metrics/metrics"
done
timed_send() {
  local start end
  start=$(date +%s.%N)
  "$arbiter" send "$1" "$dir/relays.sock" > /dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
echo "send alone: $(timed_send match-2.arbev) s"
(while true; do curl -s -o /dev/null "http://$metrics/metrics"; done) &
scraper=$!
echo "send while /metrics is scraped back to back: $(timed_send match-3.arbev) s"
