#!/usr/bin/env bash
# The main job: installs what is missing, builds, and replays the bundled sample match
# through the bundled plugins, printing one assessment per player.
# Extra arguments go to `arbiter replay` (e.g. --json).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what this job runs: the command and the bundled plugins (the test command builds
# the rest, the tests among it).
# The build talks on stderr, so that stdout is the assessments alone (--json: JSON Lines).
bash scripts/build.sh release arbiter arbiter_reference arbiter_accounts arbiter_lagpool arbiter_kaladin >&2
exec build/release/bin/arbiter replay samples/server_config.toml samples/sample-match.arbev "$@"
