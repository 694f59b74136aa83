#!/usr/bin/env bash
# A fuzzing campaign: installs clang if it is missing, builds the `fuzz` preset (libFuzzer
# with ASan and UBSan) and runs each harness (all of them, or those named) for SECONDS
# (default 60), one after another. Each starts from a scratch copy of its committed
# corpus in fuzz/corpus/<harness> (the committed corpus does not grow), and writes any
# crash to build/fuzz/artifacts/<harness>/ (emptied at the start of its run). Prints per
# harness the seconds run, the executions and the findings; exits 1 if anything was found.
#
#   scripts/fuzz.sh               # every harness, 60 s each
#   scripts/fuzz.sh 3600          # an hour each (docs/reliability.md)
#   scripts/fuzz.sh 600 config    # one harness
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
# Every harness has a committed corpus (ctest replays it, fuzz/CMakeLists.txt), so the
# corpus folders are the list: one written here by hand had left review_page out.
all=()
for corpus in fuzz/corpus/*/; do all+=("$(basename "$corpus")"); done
harnesses=("$@")
[ "$#" -gt 0 ] || harnesses=("${all[@]}")

if ! command -v clang++ >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: clang is missing and we are not root; install it with: sudo apt-get install clang" >&2
    exit 2
  fi
  apt-get update -qq && apt-get install -y -qq --no-install-recommends clang
fi
bash scripts/install-deps.sh
cmake --preset fuzz >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build build/fuzz --target "${targets[@]}"

# Inputs each harness takes: batches are capped at 64 KiB in the harnesses, text at less.
max_len() {
  case "$1" in
    event_file|wire_decoder) echo 262144 ;;
    ingest_batch|c_api) echo 65536 ;;
    ddnet_teehistorian) echo 65536 ;;  # the seed DDNet's server wrote is 27 KiB
    *) echo 16384 ;;
  esac
}

found_any=0
printf '%-16s %8s %14s %9s\n' harness seconds executions findings
for h in "${harnesses[@]}"; do
  work="build/fuzz/campaign/$h"
  artifacts="build/fuzz/artifacts/$h"
  # Each run starts with an empty artifacts folder, so that only its own findings are
  # counted: a fixed crash's reproducer belongs in fuzz/corpus/<harness>, not here.
  rm -rf "$work" "$artifacts"
  mkdir -p "$work" "$artifacts"
  cp -r "fuzz/corpus/$h/." "$work/"
  log="build/fuzz/campaign/$h.log"
  started=$(date +%s)
  set +e
  "build/fuzz/bin/fuzz_$h" "$work" -max_total_time="$seconds" -max_len="$(max_len "$h")" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" -timeout=25 -rss_limit_mb=4096 \
    >"$log" 2>&1
  status=$?
  set -e
  elapsed=$(( $(date +%s) - started ))
  executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  # A crash, a leak, a timeout or running out of memory is a finding. A "slow unit" (one
  # input that took over 10 s) is only one if it is slow on its own: each is run again
  # alone, and counted only when it still takes over a second; otherwise it was the
  # machine (the harness niced beside a build) and is reported as such.
  findings=$(find "$artifacts" -type f ! -name 'slow-unit-*' | wc -l)
  slow_machine=0
  for unit in "$artifacts"/slow-unit-*; do
    [ -e "$unit" ] || continue
    ms=$("build/fuzz/bin/fuzz_$h" "$unit" 2>&1 | grep -o 'in [0-9]* ms' | grep -o '[0-9]*' || echo 99999)
    if [ "${ms:-99999}" -ge 1000 ]; then
      findings=$((findings + 1))
    else
      slow_machine=$((slow_machine + 1))
      echo "  $h: $(basename "$unit") took over 10 s in the campaign, ${ms} ms alone: the machine, not the input" >&2
    fi
  done
  if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ] && [ "$slow_machine" -eq 0 ]; then findings=1; fi
  [ "$findings" -eq 0 ] || found_any=1
  printf '%-16s %8s %14s %9s\n' "$h" "$elapsed" "${executions:-?}" "$findings"
  [ "$findings" -eq 0 ] || echo "  see $log and $artifacts/" >&2
done
exit "$found_any"
