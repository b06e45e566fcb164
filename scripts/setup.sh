#!/usr/bin/env bash
# Installs what agebloom needs from Debian 12 packages (idempotently: only the
# missing ones, with one apt-get update), then configures and builds build/.
# Called by scripts/test.sh and scripts/demo.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ clang meson ninja-build pkg-config
  libxxhash-dev libpcap-dev nlohmann-json3-dev
  libgtest-dev libbenchmark-dev
  libdpdk-dev dpdk-dev
  tcpreplay tcpdump
  python3-matplotlib
  python3-distributed
  valgrind
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
    echo "setup: missing packages (${missing[*]}) and not root; install them and re-run" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build=${AGEBLOOM_BUILD_DIR:-build}
if [[ ! -f "$build/build.ninja" ]]; then
  meson setup "$build" --buildtype=release
fi
ninja -C "$build"
