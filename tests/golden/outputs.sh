#!/usr/bin/env bash
# The outputs an operator and a tool read, byte for byte: `replay --json`, the replay table,
# `evaluate` (table and JSON) and the security-event log, on the bundled sample, the
# README's mixed match and the imported real traces. A change of the host's structure must
# leave every one of them as it was; a change of behaviour updates them on purpose
# (`--update`) and says why in its commit.
#
#   outputs.sh ARBITER SOURCE_DIR [--update]
set -euo pipefail

arbiter=$1
source_dir=$2
update=${3:-}
expected_dir=$source_dir/tests/golden/expected
shared_data=$source_dir/../shared/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# Compares (or, with --update, records) one output.
check() {
    local name=$1 actual=$2
    if [[ $update == --update ]]; then
        mkdir -p "$expected_dir"
        cp "$actual" "$expected_dir/$name"
        return
    fi
    if [[ ! -f $expected_dir/$name ]]; then
        echo "FAIL $name: no expected output in $expected_dir (run with --update once)"
        failures=$((failures + 1))
    elif cmp -s "$expected_dir/$name" "$actual"; then
        echo "ok   $name"
    else
        echo "FAIL $name differs from $expected_dir/$name:"
        diff "$expected_dir/$name" "$actual" | head -20
        failures=$((failures + 1))
    fi
}

# The sample's config with the security-event log switched on, into the work folder.
config=$work/server_config.toml
sed "s|^security_log = \"\"|security_log = \"$work/security.jsonl\"|" \
    "$source_dir/samples/server_config.toml" > "$config"
grep -q "^security_log = \"$work/security.jsonl\"" "$config" ||
    { echo "FAIL: samples/server_config.toml has no empty security_log line to set"; exit 1; }

# Runs one event file through replay (table, JSON, security log) and evaluate.
outputs_of() {
    local name=$1 events=$2
    rm -f "$work/security.jsonl"
    "$arbiter" replay "$config" "$events" --json > "$work/replay.jsonl" 2> /dev/null
    check "$name.replay.jsonl" "$work/replay.jsonl"
    check "$name.security.jsonl" "$work/security.jsonl"
    rm -f "$work/security.jsonl"
    "$arbiter" replay "$config" "$events" > "$work/replay.txt" 2> /dev/null
    check "$name.replay.txt" "$work/replay.txt"
    if [[ -f ${events%.arbev}.truth.json ]]; then
        "$arbiter" evaluate "$config" "$events" > "$work/evaluate.txt" 2> /dev/null
        check "$name.evaluate.txt" "$work/evaluate.txt"
        "$arbiter" evaluate "$config" "$events" --json > "$work/evaluate.json" 2> /dev/null
        check "$name.evaluate.json" "$work/evaluate.json"
    fi
}

outputs_of sample "$source_dir/samples/sample-match.arbev"

# The README's mixed match: 40 honest players and 3 of each cheating profile, 2 minutes.
"$arbiter" simulate "$work/mix.arbev" --seed 7 --duration-s 120 --tick-rate 20 --players \
    honest=40,speed_hack=3,teleport=3,clock_speedup=3,fly=3,hit_range=3,hit_through_wall=3,rapid_fire=3,item_dup=3,xp_rate=3,reconnect_spam=3,metronome=3,reaction_bot=3,rate_bot=3,humanised_bot=3 \
    > /dev/null 2>&1
sha256sum < "$work/mix.arbev" > "$work/mix.sha256"
check mix.arbev.sha256 "$work/mix.sha256"
outputs_of mix "$work/mix.arbev"

# Real people's input timings, imported as the README shows.
traces=$shared_data/human-traces/dev-actions.csv
if [[ -f $traces ]]; then
    "$arbiter" import "$traces" "$work/dev.arbev" --tick-rate 22.4 --labels "$work/dev.truth.json" \
        > /dev/null 2>&1
    outputs_of dev "$work/dev.arbev"
else
    echo "skip dev: $traces is absent (../shared/data is not beside the source)"
fi

# Real DDNet players, positions and aim per tick, from a recorded demo.
demo=$shared_data/ddnet-demos/Multeasymap_bench.demo
if [[ -f $demo ]]; then
    "$arbiter" import "$demo" "$work/demo.arbev" > /dev/null 2>&1
    outputs_of ddnet-demo "$work/demo.arbev"
else
    echo "skip ddnet-demo: $demo is absent (../shared/data is not beside the source)"
fi

if [[ $update == --update ]]; then
    echo "recorded in $expected_dir"
    exit 0
fi
if ((failures > 0)); then
    echo "$failures output(s) changed"
    exit 1
fi
