#!/usr/bin/env bash
# The .deb that CPack makes from a build folder: its control fields, that it holds the
# whole install (lagpool and the man page too), and that what it unpacks runs: the sample
# replayed with the packaged binary, plugins and config, from a root that is not /.
# Usage: deb_package.sh BUILD_DIR
set -euo pipefail
build_dir=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
  echo "SKIP: dpkg-deb or dpkg-shlibdeps is missing (apt-get install dpkg-dev)"
  exit 77
fi

step "cpack -G DEB"
(cd "$build_dir" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(find "$work/out" -maxdepth 1 -name 'arbiter_*.deb' | head -n 1)
[ -n "$deb" ] || fail "no arbiter_*.deb in $work/out"
echo "made $(basename "$deb")"

step "control fields"
dpkg-deb --field "$deb" Package Version Architecture Depends | tee "$work/fields.txt"
grep -q "^Package: arbiter$" "$work/fields.txt" || fail "the package is not named arbiter"
grep -q "^Depends: .*libc6" "$work/fields.txt" || fail "dpkg-shlibdeps found no run-time dependencies"

step "contents"
dpkg-deb --contents "$deb" >"$work/contents.txt"
for path in ./usr/bin/arbiter ./usr/lib/libarbiter-host.so ./usr/lib/arbiter/plugins/arbiter-reference.so \
  ./usr/lib/arbiter/plugins/arbiter-accounts.so \
  ./usr/lib/arbiter/plugins/arbiter-lagpool.so ./usr/lib/arbiter/plugins/arbiter-kaladin.so \
  ./usr/lib/arbiter/plugins/arbiter-luanti.so \
  ./usr/share/arbiter/samples/server_config.toml ./usr/share/arbiter/samples/sample-match.arbev \
  ./usr/include/arbiter/arbiter_plugin.h ./usr/lib/pkgconfig/arbiter-sdk.pc \
  ./usr/share/man/man1/arbiter.1 ./usr/share/bash-completion/completions/arbiter; do
  grep -q " $path\$" "$work/contents.txt" || fail "$path is not in the package"
done

step "unpacked into $work/root, it runs"
dpkg-deb -x "$deb" "$work/root"
root="$work/root/usr"
"$root/bin/arbiter" replay "$root/share/arbiter/samples/server_config.toml" \
  "$root/share/arbiter/samples/sample-match.arbev" | tee "$work/replay.txt"
grep -Eq " mallory +FlagForReview " "$work/replay.txt" || fail "mallory is not flagged"
grep -Eq " dave +Clear " "$work/replay.txt" || fail "dave is not Clear"

echo "deb package: OK"
