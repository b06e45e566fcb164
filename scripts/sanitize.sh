#!/usr/bin/env bash
# The sanitizer build: clang with AddressSanitizer and UndefinedBehaviorSanitizer
# over the whole library, tools and test suite, plus the libFuzzer targets
# (fuzz/), each run for a bounded time. Any sanitizer report fails the run.
#   scripts/sanitize.sh            build-asan/: every suite (the fuzzers included)
#   FUZZ_SECONDS=300 scripts/sanitize.sh   longer fuzzing
# Builds in its own folder (AGEBLOOM_ASAN_DIR, default build-asan); needs
# scripts/setup.sh's packages (clang is among them).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${AGEBLOOM_ASAN_DIR:-build-asan}
seconds=${FUZZ_SECONDS:-30}
if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ meson setup "$build" --buildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true -Dfuzz_seconds="$seconds" \
    -Dgpu=disabled -Dbenchmarks=disabled
else
  meson configure "$build" -Dfuzz_seconds="$seconds" >/dev/null
fi
ninja -C "$build"
# halt_on_error: a UBSan report is a failure, not a line in a log.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# DPDK's EAL maps memory ASan cannot see through; its leak report is noise,
# every other report fails.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" "$@"
