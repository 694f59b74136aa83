#!/usr/bin/env bash
# Installs the Debian 12 packages Arbiter builds with, when any is missing.
# Runs as root (CI and the project's machines do); prints what it installs.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev            # Boost.DLL (header-only)
  zlib1g-dev              # CRC-32 and crc32_combine (linear damage recovery)
  liblzma-dev             # the LZMA stream of osu! replays' frames (adapters/osu)
  libsodium-dev           # SHA-256 and Ed25519 signatures of pinned plugin libraries
  minisign                # signs plugin libraries in the signature tests, as authors do
  libseccomp-dev          # the system-call filter of isolated plugins' runner
  libsqlite3-dev          # the review store (store.hpp)
  libpq-dev               # the review store on PostgreSQL
  postgresql-15           # a real PostgreSQL server the store tests start for themselves
  chromium                # a real browser the review page's test drives (headless)
  libflatbuffers-dev flatbuffers-compiler
  libspdlog-dev libfmt-dev
  libtomlplusplus-dev
  libxxhash-dev           # XXH3, the SDK's state seal (word at a time: the reload pause)
  nlohmann-json3-dev      # JSON for evidence checks and the sinks
  libgtest-dev libgmock-dev
  libbenchmark-dev
  python3-flatbuffers     # the Python relay example's batches (examples/python-relay)
  groff-base              # the man page's render check (tests/packaging)
  file                    # cpack -G DEB sorts the packages' binaries with it (tests/packaging)
  python3                 # the real-game tests drive real servers and clients from Python
  minetest-server minetest-data   # a real Luanti server for the Luanti test (adapters/luanti)
  minetest                # real Luanti clients (--random-input) for the same test
  xvfb xauth              # ... which need a display: xvfb-run
  fonts-croscore fonts-droid-fallback   # ... and fonts
  ddnet-server ddnet-data # a real DDNet 16.4 server and its maps (adapters/ddnet/tests/real_server_test.py)
)
# Node runs the DDNet end-to-end test's headless clients (adapters/ddnet/bots, the npm
# package `teeworlds`, installed by the test into the build folder from its lock file). A
# Node installed another way (NodeSource's, which brings its own npm) is kept.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "error: missing packages and not root; install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
