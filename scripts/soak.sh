#!/usr/bin/env bash
# The false-positive soak (issue 14): 10,000 simulated honest players of every honest
# profile, over matches of 10 min, 30 min, 1 h and 2 h in turn (seeds 1, 2, ...), through
# the bundled plugins with the sample config; prints how many reached Monitor and
# FlagForReview, per profile and per check. One match at a time is simulated, evaluated
# and deleted, so memory and disk hold one match (at most ~1 GB of events) however many
# players. About 18 minutes here (one core). Installs what is missing and builds first.
#
# Extra arguments go to `arbiter soak` and override the defaults, e.g.
#   bash scripts/soak.sh --players 2000 --durations-s 600,1800 --seed 100 --json
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh release arbiter arbiter_reference arbiter_accounts arbiter_lagpool arbiter_kaladin >&2
exec build/release/bin/arbiter soak samples/server_config.toml --players 10000 \
  --durations-s 600,1800,3600,7200 "$@"
