#!/usr/bin/env bash
# Runs every test suite: installs and builds first (scripts/setup.sh), then
# `meson test` over all suites; then the sanitizer builds (scripts/sanitize.sh:
# clang with ASan+UBSan over every suite, each fuzz target for 60 s, and TSan
# over the multi-lcore dedup_fwd tests).
# Non-zero on any failure or if no test ran. AGEBLOOM_NO_SANITIZE=1 skips the
# sanitizer build (a quick local run; CI runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${AGEBLOOM_BUILD_DIR:-build}

count=$(meson test -C "$build" --list 2>/dev/null | grep -c . || true)
if [[ "$count" -eq 0 ]]; then
  echo "test.sh: no tests are defined" >&2
  exit 1
fi
echo "test.sh: running $count tests"
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" "$@"
if [[ "${AGEBLOOM_NO_SANITIZE:-0}" != 1 ]]; then
  echo "test.sh: the sanitizer build (scripts/sanitize.sh)"
  scripts/sanitize.sh
fi
