#!/usr/bin/env bash
# The install as an operator and a relay host get it, moved after installing (a prefix is
# not always where it was built for, and a .deb unpacks into any root):
#   - every bundled plugin is installed, and the installed sample config replays the
#     installed sample from the moved prefix with the expected verdicts;
#   - the pkg-config file resolves against where it now stands;
#   - a C relay built against the moved prefix and run from a third folder finds the
#     bundled plugins beside libarbiter-host.so, not beside itself;
#   - the Python relay, copied out of the checkout, finds the installed schema and sample
#     config from the library it is given, with no --schema or --config.
# Usage: installed_tree.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "install into $work/first, then move it to $work/moved"
cmake --install "$build_dir" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
prefix="$work/moved"
# The libraries' folder: lib/<multiarch triplet> on Debian (CMAKE_INSTALL_LIBDIR).
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build_dir/CMakeCache.txt")
[ -n "$libdir" ] || fail "no CMAKE_INSTALL_LIBDIR in $build_dir/CMakeCache.txt"
[ -f "$prefix/$libdir/libarbiter-host.so" ] || fail "libarbiter-host.so is not in $libdir"

step "the Debian package's files stay out of a plain install"
[ ! -e "$prefix/etc" ] || fail "a plain install has an etc/ folder"
[ ! -e "$prefix/lib/systemd" ] || fail "a plain install has a systemd unit"

step "every bundled plugin is installed"
for plugin in reference accounts lagpool kaladin luanti; do
  [ -f "$prefix/lib/arbiter/plugins/arbiter-$plugin.so" ] || fail "arbiter-$plugin.so is not installed"
done

step "the installed sample config replays the installed sample"
"$prefix/bin/arbiter" replay "$prefix/share/arbiter/samples/server_config.toml" \
  "$prefix/share/arbiter/samples/sample-match.arbev" | tee "$work/replay.txt"
for honest in alice bob carol dave; do
  grep -Eq "^sample-relay +1 +[0-9]+ +$honest +Clear " "$work/replay.txt" || fail "$honest is not Clear"
done
for cheater in mallory trent; do
  grep -Eq "^sample-relay +1 +[0-9]+ +$cheater +FlagForReview " "$work/replay.txt" || fail "$cheater is not flagged"
done

step "pkg-config resolves the moved prefix"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
for variable in includedir plugindir version_script; do
  value=$(pkg-config --variable="$variable" arbiter-sdk)
  resolved=$(realpath -m "$value")
  case "$resolved" in
    "$(realpath "$prefix")"/*) echo "$variable = $resolved" ;;
    *) fail "pkg-config's $variable is $value, outside the moved prefix" ;;
  esac
  [ -e "$resolved" ] || fail "pkg-config's $variable ($resolved) does not exist"
done
pkg-config --cflags arbiter-sdk | grep -q -- "-I$prefix/$libdir/pkgconfig/$(realpath -m --relative-to="/p/$libdir/pkgconfig" /p)/include" ||
  fail "pkg-config --cflags does not point into the moved prefix: $(pkg-config --cflags arbiter-sdk)"

step "a C relay built against the moved prefix runs from elsewhere"
mkdir -p "$work/relay-home"
cc -std=c99 -Wall -Wextra -o "$work/relay-home/relay" "$source_dir/examples/c-relay/relay.c" \
  -I"$prefix/include" -L"$prefix/$libdir" -larbiter-host -Wl,-rpath,"$prefix/$libdir"
(cd "$work/relay-home" && ./relay "$prefix/share/arbiter/samples/server_config.toml" \
  "$prefix/share/arbiter/samples/sample-match.arbev") | tee "$work/relay.txt"
grep -q "player 5 (mallory): FlagForReview" "$work/relay.txt" || fail "the C relay did not flag mallory"
grep -q "player 1 (alice): Clear" "$work/relay.txt" || fail "the C relay did not clear alice"

step "the Python relay, copied out of the checkout, runs on the moved prefix alone"
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -c "import flatbuffers" 2>/dev/null || ! command -v flatc >/dev/null; then
  # What examples.python_relay skips on too; the rest of the install is still checked.
  echo "skipped: needs python3 with python3-flatbuffers, and flatc"
else
  mkdir -p "$work/python-relay-home"
  cp "$source_dir/examples/python-relay/relay.py" "$work/python-relay-home/"
  (cd "$work/python-relay-home" && "$python" relay.py --lib "$prefix/$libdir/libarbiter-host.so") \
    | tee "$work/python-relay.txt" || fail "the copied Python relay failed"
  real_prefix=$(realpath "$prefix")
  grep -qxF "schema: $real_prefix/share/arbiter/schema/events.fbs" "$work/python-relay.txt" ||
    fail "the copied Python relay did not take the installed schema"
  grep -qxF "config: $real_prefix/share/arbiter/samples/server_config.toml" "$work/python-relay.txt" ||
    fail "the copied Python relay did not take the installed sample config"
  grep -q "player 2 (speeder): FlagForReview" "$work/python-relay.txt" ||
    fail "the copied Python relay did not flag speeder"
fi

echo "installed tree: OK"
