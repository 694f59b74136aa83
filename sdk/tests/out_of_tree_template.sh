#!/usr/bin/env bash
# Installs the SDK into a temporary prefix, builds examples/plugin-template against that
# prefix alone, runs the template's own tests, builds the plugin again with the host's
# dependencies hidden (a plugin-only build needs the sdk component alone), and runs the sample match through the
# installed `arbiter` with the template's plugin loaded beside the bundled one.
# Usage: out_of_tree_template.sh BUILD_DIR SOURCE_DIR CXX_FLAGS
set -euo pipefail
build_dir=$1
source_dir=$2
cxx_flags=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { echo "== $*"; }

step "install the SDK into $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null

step "build the template against the installed SDK only"
# CMAKE_FIND_USE_PACKAGE_REGISTRY/SYSTEM paths stay on (GTest and the SDK's Debian
# dependencies come from there); the SDK itself can only come from the prefix.
cmake -S "$source_dir/examples/plugin-template" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_FLAGS="$cxx_flags" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

step "the template's own tests"
ctest --test-dir "$work/build" --output-on-failure

step "a plugin alone builds with the host's dependencies hidden (COMPONENTS sdk)"
# As on a machine without the host's -dev packages: CMake finds none of them.
hidden=()
for package in Boost spdlog fmt tomlplusplus nlohmann_json ZLIB; do
  hidden+=("-DCMAKE_DISABLE_FIND_PACKAGE_$package=ON")
done
cmake -S "$source_dir/examples/plugin-template" -B "$work/plugin-only" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DORDER_RATE_TESTS=OFF "${hidden[@]}" \
  -DCMAKE_CXX_FLAGS="$cxx_flags" >"$work/plugin-only.log" 2>&1 || { cat "$work/plugin-only.log"; exit 1; }
cmake --build "$work/plugin-only" >>"$work/plugin-only.log" 2>&1 || { cat "$work/plugin-only.log"; exit 1; }
[ -f "$work/plugin-only/arbiter-order-rate.so" ] || { echo "FAIL: no plugin built"; exit 1; }
# The same hiding does stop the host component: the check above proves something.
mkdir -p "$work/wants-host"
cat >"$work/wants-host/CMakeLists.txt" <<'PROJECT'
cmake_minimum_required(VERSION 3.25)
project(wants_host LANGUAGES CXX)
find_package(ArbiterSDK 0.1 REQUIRED COMPONENTS host)
PROJECT
if cmake -S "$work/wants-host" -B "$work/wants-host/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  "${hidden[@]}" >"$work/wants-host.log" 2>&1; then
  echo "FAIL: COMPONENTS host configured with the host's dependencies hidden"; exit 1
fi
grep -q "ArbiterSDK" "$work/wants-host.log" || { cat "$work/wants-host.log"; exit 1; }

plugin="$work/build/arbiter-order-rate.so"
arbiter="$work/prefix/bin/arbiter"

step "check-plugin gives the template a clean verdict"
"$arbiter" check-plugin "$plugin"

step "the installed host runs the sample match with the template loaded"
cat >"$work/server_config.toml" <<CONFIG
[plugins.reference]
library = "reference"
[plugins.order-rate]
library = "$plugin"
[plugins.order-rate.config]
max_per_second = 10.0
CONFIG
"$arbiter" plugins "$work/server_config.toml" | tee "$work/plugins.txt"
grep -q "^order-rate .*order-rate .*1.0.0 .*1.0 " "$work/plugins.txt"
"$arbiter" replay "$work/server_config.toml" "$work/prefix/share/arbiter/samples/sample-match.arbev" \
  | tee "$work/replay.txt"
grep -q "mallory .*FlagForReview" "$work/replay.txt"
grep -q "trent .*FlagForReview" "$work/replay.txt"
grep -q "alice .*Clear" "$work/replay.txt"
echo "out-of-tree template: OK"
