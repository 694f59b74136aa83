#!/usr/bin/env bash
# A/B of two builds of the bundled plugins, as docs/performance.md's "alternating the
# plugin builds" figures were taken: the same arbiter-bench, the plugins of BEFORE_DIR and
# AFTER_DIR swapped into build/bench/lib/arbiter/plugins in turn, ROUNDS times (default 4),
# each run `--only players --filter "every, " --reps 3 --seconds 0.5`. Prints, per run,
# ns/event at 1,000 and at 100,000 players and their ratio. Runs one after another share
# the machine's mood, which is why the two builds alternate rather than run in blocks.
#
#   cmake --build build/bench -j2 && mkdir -p /tmp/after && cp build/bench/lib/arbiter/plugins/*.so /tmp/after/
#   (the same from the commit before into /tmp/before)
#   bash scripts/bench-ab.sh /tmp/before /tmp/after 4
#
# The plugins of AFTER_DIR are left in place at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: scripts/bench-ab.sh BEFORE_DIR AFTER_DIR [ROUNDS]" >&2
  exit 2
fi
before=$1 after=$2 rounds=${3:-4}
plugins=build/bench/lib/arbiter/plugins
for dir in "$before" "$after"; do
  if ! ls "$dir"/arbiter-*.so > /dev/null 2>&1; then
    echo "scripts/bench-ab.sh: no arbiter-*.so in $dir" >&2
    exit 2
  fi
done
if [ ! -x build/bench/bin/arbiter-bench ] || [ ! -d "$plugins" ]; then
  echo "scripts/bench-ab.sh: build the bench preset first (cmake --preset bench && cmake --build build/bench -j2)" >&2
  exit 2
fi
echo "build   1k ns/event   100k ns/event   100k/1k"
for _ in $(seq "$rounds"); do
  for side in before after; do
    dir=$before
    [ "$side" = after ] && dir=$after
    cp "$dir"/arbiter-*.so "$plugins"/
    build/bench/bin/arbiter-bench --only players --filter "every, " --reps 3 --seconds 0.5 2>&1 |
      awk -v side="$side" '/every, 1000 players/ {a = $6} /every, 100000 players/ {b = $6}
        END { if (a == "" || b == "") { print side ": no figures (did the run fail?)"; exit 1 }
              printf "%-7s %11s %15s %9.3f\n", side, a, b, b / a }'
  done
done
cp "$after"/arbiter-*.so "$plugins"/
