#!/usr/bin/env bash
# The Debian packages CPack makes from a build folder (cmake/ArbiterPackage.cmake), made
# and then installed into an empty root (never the running system), as an operator and a
# plugin author get them:
#   - arbiter (the runtime) is small: under 15 MB, its binaries stripped (their debug
#     information in arbiter-dbgsym, by build ID, where gdb finds it), no static library,
#     no header; its Depends read from the binaries; the systemd unit and
#     /etc/arbiter/server_config.toml (a conffile) are in it;
#   - arbiter-dev Depends on arbiter of the same version and on the -dev packages its
#     headers and libraries need (not Suggests), and shares no file with arbiter;
#   - dpkg installs all three into another empty root (its database there, the maintainer
#     scripts told the root by DPKG_ROOT), keeps an edited config over an upgrade, and
#     purges them, config and state included;
#   - unpacked, the binary replays the sample, and `arbiter serve` runs the packaged config
#     (its folders moved into the root) and answers a relay and `arbiter ctl`;
#   - the plugin template from share/arbiter/examples builds against the SDK in the root
#     (find_package(ArbiterSDK) with CMAKE_PREFIX_PATH there) and passes its own tests; the
#     C relay from the examples builds against the root and runs; pkg-config resolves there;
#   - relay.py, run where the package put it with no option, takes the root's library,
#     schema and sample config;
#   - the unit runs what the package installs, as the user arbiter, hardened; it passes
#     `systemd-analyze verify` where systemd-analyze is installed (the fields are checked
#     here either way: systemd is not needed to build or test Arbiter).
# The packages are compressed with gzip here, not xz as `cpack` makes them: xz takes four
# minutes over the 300 MB of debug information, gzip a few seconds, and a gzip'd package is
# the larger, so the size bound holds a fortiori (ARBITER_DEB_COMPRESSION=xz tests the
# packages as shipped, in about 5 minutes). Takes 1 to 2 minutes on two cores, most of it
# cpack and the template's build.
# Usage: deb_packages.sh BUILD_DIR
set -euo pipefail
build_dir=$(realpath "$1")
compression=${ARBITER_DEB_COMPRESSION:-gzip}
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { echo "== $* ($(date +%T))"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

for tool in dpkg-deb dpkg-shlibdeps file objcopy readelf; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is missing (apt-get install dpkg-dev file binutils)"
    exit 77
  fi
done

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")
[ -n "$version" ] || fail "no CMAKE_PROJECT_VERSION in $build_dir/CMakeCache.txt"
triplet=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=lib\///p' "$build_dir/CMakeCache.txt")
libdir=usr/lib${triplet:+/$triplet}

step "cpack -G DEB, compressed with $compression"
started=$SECONDS
(cd "$build_dir" && cpack -G DEB -D CPACK_DEBIAN_COMPRESSION_TYPE="$compression" -B "$work/out" \
  >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }
echo "cpack took $((SECONDS - started)) s"
runtime_deb=$work/out/arbiter_${version}_amd64.deb
dev_deb=$work/out/arbiter-dev_${version}_amd64.deb
dbgsym_deb=$work/out/arbiter-dbgsym_${version}_amd64.ddeb
ls -l "$work/out"/*.deb "$work/out"/*.ddeb
for deb in "$runtime_deb" "$dev_deb" "$dbgsym_deb"; do
  [ -f "$deb" ] || fail "cpack made no $(basename "$deb")"
done

step "sizes"
printf '%-40s %12s %18s\n' package ".deb bytes" "Installed-Size KiB"
for deb in "$runtime_deb" "$dev_deb" "$dbgsym_deb"; do
  printf '%-40s %12s %18s\n' "$(basename "$deb")" "$(stat -c %s "$deb")" "$(dpkg-deb --field "$deb" Installed-Size)"
done
runtime_bytes=$(stat -c %s "$runtime_deb")
[ "$runtime_bytes" -lt $((15 * 1024 * 1024)) ] || fail "the runtime package is $runtime_bytes bytes, 15 MB or more"

step "control fields"
field() { dpkg-deb --field "$1" "$2"; }
[ "$(field "$runtime_deb" Package)" = arbiter ] || fail "the runtime package is not named arbiter"
[ "$(field "$dev_deb" Package)" = arbiter-dev ] || fail "the dev package is not named arbiter-dev"
[ "$(field "$dbgsym_deb" Package)" = arbiter-dbgsym ] || fail "the debug package is not named arbiter-dbgsym"
runtime_depends=$(field "$runtime_deb" Depends)
echo "arbiter Depends: $runtime_depends"
for need in libc6 libstdc++6 libseccomp2 libsodium23 adduser; do
  grep -q "\b$need\b" <<<"$runtime_depends" || fail "arbiter does not depend on $need"
done
dev_depends=$(field "$dev_deb" Depends)
echo "arbiter-dev Depends: $dev_depends"
grep -qF "arbiter (= $version)" <<<"$dev_depends" || fail "arbiter-dev does not depend on arbiter (= $version)"
for need in libflatbuffers-dev libxxhash-dev libboost-dev libspdlog-dev libfmt-dev libtomlplusplus-dev \
  nlohmann-json3-dev zlib1g-dev libsodium-dev; do
  grep -q "\b$need\b" <<<"$dev_depends" || fail "arbiter-dev does not depend on $need"
done
if field "$dev_deb" Suggests | grep -q -- "-dev"; then
  fail "arbiter-dev suggests a -dev package instead of depending on it: $(field "$dev_deb" Suggests)"
fi
grep -qF "arbiter (= $version)" <<<"$(field "$dbgsym_deb" Depends)" || fail "arbiter-dbgsym does not depend on arbiter (= $version)"

step "maintainer files of arbiter"
mkdir -p "$work/control"
dpkg-deb --control "$runtime_deb" "$work/control"
ls -l "$work/control"
grep -qx "/etc/arbiter/server_config.toml" "$work/control/conffiles" ||
  fail "/etc/arbiter/server_config.toml is not a conffile"
for script in postinst prerm postrm; do
  [ -x "$work/control/$script" ] || fail "no executable $script"
  sh -n "$work/control/$script" || fail "$script is not valid sh"
  grep -q 'DPKG_ROOT' "$work/control/$script" || fail "$script does not honour DPKG_ROOT"
done
grep -q "adduser --system" "$work/control/postinst" || fail "postinst creates no system user"

step "contents"
for deb in "$runtime_deb" "$dev_deb" "$dbgsym_deb"; do
  dpkg-deb --contents "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$work/$(basename "$deb").files"
done
runtime_files=$work/$(basename "$runtime_deb").files
dev_files=$work/$(basename "$dev_deb").files
dbgsym_files=$work/$(basename "$dbgsym_deb").files
for path in /usr/bin/arbiter "/$libdir/libarbiter-host.so" /usr/lib/arbiter/arbiter-plugin-runner \
  /usr/lib/arbiter/plugins/arbiter-reference.so /usr/lib/arbiter/plugins/arbiter-accounts.so \
  /usr/lib/arbiter/plugins/arbiter-lagpool.so /usr/lib/arbiter/plugins/arbiter-kaladin.so \
  /usr/lib/arbiter/plugins/arbiter-luanti.so \
  /usr/share/arbiter/samples/server_config.toml /usr/share/arbiter/samples/sample-match.arbev \
  /usr/share/man/man1/arbiter.1.gz /usr/share/bash-completion/completions/arbiter \
  /usr/share/doc/arbiter/README.md /usr/share/doc/arbiter/docs/writing-a-plugin.md \
  /usr/share/doc/arbiter/docs/operating.md \
  /usr/lib/systemd/system/arbiter.service /etc/arbiter/server_config.toml; do
  grep -qxF "$path" "$runtime_files" || fail "$path is not in arbiter"
done
if grep -E '\.a$|^/usr/include/' "$runtime_files"; then fail "arbiter holds static libraries or headers"; fi
for path in /usr/include/arbiter/arbiter_plugin.h /usr/include/arbiter/arbiter_host.h \
  /usr/include/arbiter/events_generated.h /usr/include/arbiter/sdk.hpp \
  "/$libdir/pkgconfig/arbiter-sdk.pc" "/$libdir/cmake/ArbiterSDK/ArbiterSDKConfig.cmake" \
  "/$libdir/libarbiter_host_core.a" /usr/share/arbiter/schema/events.fbs \
  /usr/share/arbiter/examples/plugin-template/CMakeLists.txt \
  /usr/share/arbiter/examples/c-relay/relay.c /usr/share/arbiter/examples/python-relay/relay.py; do
  grep -qxF "$path" "$dev_files" || fail "$path is not in arbiter-dev"
done
# dpkg refuses to install two packages that hold the same file.
shared=$(comm -12 <(grep -v '/$' "$runtime_files" | sort) <(grep -v '/$' "$dev_files" | sort))
[ -z "$shared" ] || fail "arbiter and arbiter-dev both hold: $shared"
grep -qE '^/usr/lib/debug/\.build-id/[0-9a-f]{2}/[0-9a-f]+\.debug$' "$dbgsym_files" ||
  fail "arbiter-dbgsym has no usr/lib/debug/.build-id/xx/yyyy.debug"

step "installed into an empty root, $work/root"
root=$work/root
for deb in "$runtime_deb" "$dev_deb" "$dbgsym_deb"; do
  dpkg-deb -x "$deb" "$root"
done
du -sh "$root/usr/bin/arbiter" "$root/usr/lib/arbiter" "$root/$libdir" "$root/usr/lib/debug"

step "dpkg installs, upgrades and purges them in another empty root, $work/dpkg-root"
# dpkg itself, with its database in that root; the maintainer scripts run here, not in a
# chroot, told the root by DPKG_ROOT, which they honour (no user is made on this system).
# The packages they depend on are not in that database: --force-depends.
dpkg_root=$work/dpkg-root
mkdir -p "$dpkg_root/var/lib/dpkg/info" "$dpkg_root/var/lib/dpkg/updates" "$dpkg_root/var/lib/dpkg/triggers"
touch "$dpkg_root/var/lib/dpkg/status" "$dpkg_root/var/lib/dpkg/available"
in_root() {
  dpkg --root="$dpkg_root" --force-script-chrootless --force-depends --force-not-root \
    --log="$work/dpkg.log" "$@" >"$work/dpkg.out" 2>&1 || { cat "$work/dpkg.out"; fail "dpkg $*"; }
}
in_root -i "$runtime_deb" "$dev_deb" "$dbgsym_deb"
dpkg --root="$dpkg_root" -l | grep -E '^ii +arbiter(-dev|-dbgsym)? ' || fail "dpkg did not install the three packages"
dpkg --root="$dpkg_root" -s arbiter | grep -q "^ /etc/arbiter/server_config.toml [0-9a-f]\{32\}$" ||
  fail "dpkg did not register /etc/arbiter/server_config.toml as a conffile"
echo "# the operator's edit" >>"$dpkg_root/etc/arbiter/server_config.toml"
in_root -i "$runtime_deb"
grep -q "the operator's edit" "$dpkg_root/etc/arbiter/server_config.toml" || fail "an upgrade lost the operator's edit of the config"
mkdir -p "$dpkg_root/var/lib/arbiter" && touch "$dpkg_root/var/lib/arbiter/arbiter.db"
in_root --purge arbiter-dbgsym arbiter-dev arbiter
[ ! -e "$dpkg_root/etc/arbiter" ] || fail "purging arbiter left /etc/arbiter"
[ ! -e "$dpkg_root/var/lib/arbiter" ] || fail "purging arbiter left /var/lib/arbiter"
[ ! -e "$dpkg_root/usr/bin/arbiter" ] || fail "removing arbiter left /usr/bin/arbiter"

step "the runtime's binaries are stripped, their debug information in arbiter-dbgsym by build ID"
while IFS= read -r path; do
  [ -f "$root$path" ] && [ ! -L "$root$path" ] || continue
  description=$(file -b "$root$path")
  case "$description" in
    ELF*) ;;
    *) continue ;;
  esac
  case "$description" in
    *"not stripped"*) fail "$path is not stripped: $description" ;;
  esac
  sections=$(readelf -S "$root$path")
  if grep -q '\.debug_info' <<<"$sections"; then fail "$path still has .debug_info"; fi
  grep -q '\.gnu_debuglink' <<<"$sections" || fail "$path has no .gnu_debuglink to its debug file"
  build_id=$(readelf -n "$root$path" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
  [ -n "$build_id" ] || fail "$path has no build ID"
  debug=$root/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug
  [ -f "$debug" ] || fail "no debug file for $path (build ID $build_id)"
  sections=$(readelf -S "$debug" 2>/dev/null)
  grep -q '\.debug_info' <<<"$sections" || fail "$debug holds no .debug_info"
  echo "  $path: stripped, $(stat -c %s "$root$path") bytes; debug information $(stat -c %s "$debug") bytes"
done <"$runtime_files"

if command -v gdb >/dev/null; then
  # What the package is for: gdb finds the stripped binary's source lines by its build ID.
  gdb -batch -nx -iex "set debug-file-directory $root/usr/lib/debug" -ex "info line main" \
    "$root/usr/bin/arbiter" >"$work/gdb.txt" 2>&1 || true
  grep -q 'host/cli/main.cpp' "$work/gdb.txt" || { cat "$work/gdb.txt"; fail "gdb finds no debug information for arbiter"; }
  echo "  gdb: $(grep 'main.cpp' "$work/gdb.txt")"
fi

step "the unpacked binary replays the sample"
usr=$root/usr
"$usr/bin/arbiter" replay "$usr/share/arbiter/samples/server_config.toml" \
  "$usr/share/arbiter/samples/sample-match.arbev" | tee "$work/replay.txt"
grep -Eq " mallory +FlagForReview " "$work/replay.txt" || fail "mallory is not flagged"
grep -Eq " dave +Clear " "$work/replay.txt" || fail "dave is not Clear"

step "/etc/arbiter/server_config.toml: its plugins load, and arbiter serve runs it"
# The folders the unit gives the server (/run, /var/lib, /var/log arbiter), in the root.
mkdir -p "$root/run/arbiter" "$root/var/lib/arbiter" "$root/var/log/arbiter"
chmod 700 "$root/run/arbiter"
sed -e "s|\"/run/arbiter/|\"$root/run/arbiter/|; s|\"/var/lib/arbiter/|\"$root/var/lib/arbiter/|" \
  -e "s|\"/var/log/arbiter/|\"$root/var/log/arbiter/|" \
  "$root/etc/arbiter/server_config.toml" >"$root/etc/arbiter/serve_test.toml"
grep -q "$root/run/arbiter/relays.sock" "$root/etc/arbiter/serve_test.toml" || fail "the config names no relay socket"
"$usr/bin/arbiter" plugins "$root/etc/arbiter/serve_test.toml" | tee "$work/plugins.txt"
for plugin in reference accounts lagpool kaladin; do
  grep -q "^$plugin " "$work/plugins.txt" || fail "the packaged config does not load $plugin"
done
"$usr/bin/arbiter" serve "$root/etc/arbiter/serve_test.toml" >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  [ -S "$root/run/arbiter/control.sock" ] && [ -S "$root/run/arbiter/relays.sock" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log"; fail "arbiter serve exited"; }
  sleep 0.1
done
[ -S "$root/run/arbiter/relays.sock" ] || { cat "$work/serve.log"; fail "arbiter serve made no relay socket"; }
[ "$(stat -c %a "$root/run/arbiter/relays.sock")" = 660 ] || fail "the relay socket is not mode 660"
"$usr/bin/arbiter" send "$usr/share/arbiter/samples/sample-match.arbev" "$root/run/arbiter/relays.sock" \
  >"$work/send.txt" || { cat "$work/send.txt" "$work/serve.log"; fail "arbiter send failed"; }
grep -Eq "mallory +FlagForReview" "$work/send.txt" || { cat "$work/send.txt"; fail "the server did not flag mallory"; }
"$usr/bin/arbiter" ctl "$root/etc/arbiter/serve_test.toml" status >"$work/status.txt" ||
  { cat "$work/status.txt"; fail "arbiter ctl status failed"; }
head -n 5 "$work/status.txt"
kill -TERM "$server_pid"
wait "$server_pid" || { cat "$work/serve.log"; fail "arbiter serve did not exit cleanly on SIGTERM"; }
server_pid=
[ -s "$root/var/lib/arbiter/arbiter.db" ] || fail "the server wrote no store in /var/lib/arbiter"
[ -s "$root/var/log/arbiter/security-events.jsonl" ] || fail "the server wrote no security log in /var/log/arbiter"

step "the plugin template from share/arbiter/examples builds against the root's SDK"
cp -r "$usr/share/arbiter/examples/plugin-template" "$work/template"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$work/template" -B "$work/template/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$usr" >"$work/template.log" 2>&1 || { cat "$work/template.log"; fail "the template does not configure"; }
sdk_dir=$(sed -n 's/^ArbiterSDK_DIR:PATH=//p' "$work/template/build/CMakeCache.txt")
[ "$sdk_dir" = "$usr/$(sed "s|^usr/||" <<<"$libdir")/cmake/ArbiterSDK" ] || fail "the template took the SDK from $sdk_dir, not the root"
nice cmake --build "$work/template/build" -j1 >>"$work/template.log" 2>&1 || { cat "$work/template.log"; fail "the template does not build"; }
ctest --test-dir "$work/template/build" --output-on-failure >"$work/template-tests.log" 2>&1 ||
  { cat "$work/template-tests.log"; fail "the template's tests fail against the root's SDK"; }
tail -n 3 "$work/template-tests.log"
"$usr/bin/arbiter" check-plugin "$work/template/build/arbiter-order-rate.so" >"$work/check.txt" 2>&1 ||
  { cat "$work/check.txt"; fail "check-plugin refuses the template's plugin"; }

step "pkg-config resolves into the root"
export PKG_CONFIG_PATH="$root/$libdir/pkgconfig"
for variable in includedir libdir version_script plugindir; do
  value=$(realpath -m "$(pkg-config --variable="$variable" arbiter-sdk)")
  case "$value" in "$root"/*) ;; *) fail "pkg-config's $variable is $value, outside the root" ;; esac
  [ -e "$value" ] || fail "pkg-config's $variable ($value) does not exist"
  echo "  $variable = $value"
done

step "the C relay from share/arbiter/examples, built against the root, runs from elsewhere"
mkdir -p "$work/c-relay"
cc -std=c99 -Wall -Wextra -Werror -o "$work/c-relay/relay" "$usr/share/arbiter/examples/c-relay/relay.c" \
  -I"$usr/include" -L"$root/$libdir" -larbiter-host -Wl,-rpath,"$root/$libdir"
(cd "$work/c-relay" && ./relay "$usr/share/arbiter/samples/server_config.toml" \
  "$usr/share/arbiter/samples/sample-match.arbev") >"$work/c-relay.txt"
grep -q "player 5 (mallory): FlagForReview" "$work/c-relay.txt" || { cat "$work/c-relay.txt"; fail "the C relay did not flag mallory"; }

step "relay.py where the package put it, with no option"
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -c "import flatbuffers" 2>/dev/null || ! command -v flatc >/dev/null; then
  # What examples.python_relay skips on too; the rest of the packages is still checked.
  echo "skipped: needs python3 with python3-flatbuffers, and flatc"
else
  (cd "$work" && "$python" "$usr/share/arbiter/examples/python-relay/relay.py") >"$work/python-relay.txt" 2>&1 ||
    { cat "$work/python-relay.txt"; fail "the installed relay.py failed"; }
  head -n 3 "$work/python-relay.txt"
  grep -qxF "schema: $usr/share/arbiter/schema/events.fbs" "$work/python-relay.txt" ||
    fail "relay.py did not take the root's schema"
  grep -qxF "library: $root/$libdir/libarbiter-host.so" "$work/python-relay.txt" ||
    fail "relay.py did not take the root's library"
  grep -qxF "config: $usr/share/arbiter/samples/server_config.toml" "$work/python-relay.txt" ||
    fail "relay.py did not take the root's sample config"
  grep -q "player 2 (speeder): FlagForReview" "$work/python-relay.txt" || fail "relay.py did not flag speeder"
fi

step "the systemd unit"
unit=$root/usr/lib/systemd/system/arbiter.service
grep -v -e '^#' -e '^$' "$unit"
unit_value() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }
[ "$(unit_value ExecStart)" = "/usr/bin/arbiter serve /etc/arbiter/server_config.toml" ] ||
  fail "ExecStart is '$(unit_value ExecStart)'"
[ -x "$root/usr/bin/arbiter" ] && [ -f "$root/etc/arbiter/server_config.toml" ] ||
  fail "the unit's program or config is not in the packages"
[ "$(unit_value User)" = arbiter ] || fail "the unit does not run as the user arbiter"
for setting in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes PrivateDevices=yes \
  RuntimeDirectory=arbiter StateDirectory=arbiter LogsDirectory=arbiter "CapabilityBoundingSet=" \
  RestrictNamespaces=yes WantedBy=multi-user.target; do
  grep -qxF "$setting" "$unit" || fail "the unit lacks $setting"
done
# The user and folders the unit names are those the config uses and postinst makes.
grep -q '"/run/arbiter/' "$root/etc/arbiter/server_config.toml" || fail "the config's sockets are not in /run/arbiter"
grep -q -- "--home /var/lib/arbiter" "$work/control/postinst" || fail "postinst's user has another home"
if command -v systemd-analyze >/dev/null; then
  # verify checks that ExecStart's program exists on this system: the copy it reads names
  # the root's (the unit itself is unchanged otherwise).
  mkdir -p "$work/verify"
  sed "s|^\(Exec[A-Za-z]*=\)/usr/bin/|\1$root/usr/bin/|" "$unit" >"$work/verify/arbiter.service"
  systemd-analyze verify --man=no "$work/verify/arbiter.service" >"$work/verify.log" 2>&1 ||
    { cat "$work/verify.log"; fail "systemd-analyze verify refuses the unit"; }
  if [ -s "$work/verify.log" ]; then cat "$work/verify.log"; fail "systemd-analyze verify warns about the unit"; fi
  echo "systemd-analyze verify: OK"
  if systemd-analyze security --offline=yes "$work/verify/arbiter.service" >"$work/security.log" 2>&1; then
    tail -n 1 "$work/security.log"
  fi
else
  echo "systemd-analyze is not installed: the unit's fields were checked above, not verified by systemd"
fi

echo "deb packages: OK"
