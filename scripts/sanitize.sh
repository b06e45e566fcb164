#!/usr/bin/env bash
# The sanitizer builds. First clang with AddressSanitizer and
# UndefinedBehaviorSanitizer over the whole library, tools and test suite,
# plus the libFuzzer targets (fuzz/), each run for a bounded time. Then
# ThreadSanitizer over dedup_fwd and the tests that run it on more than one
# lcore (workers, the software dispatcher, telemetry). Any sanitizer report
# fails the run.
#   scripts/sanitize.sh            build-asan/: every suite (the fuzzers included);
#                                  build-tsan/: the multi-lcore tests
#   FUZZ_SECONDS=300 scripts/sanitize.sh   longer fuzzing
# Builds in its own folders (AGEBLOOM_ASAN_DIR, AGEBLOOM_TSAN_DIR); needs
# scripts/setup.sh's packages (clang is among them). Arguments go to the
# ASan+UBSan `meson test`.
set -euo pipefail
cd "$(dirname "$0")/.."
# --help before anything builds (it went to `meson test` after a full ASan build).
[[ "${1:-}" == -h || "${1:-}" == --help ]] && { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
build=${AGEBLOOM_ASAN_DIR:-build-asan}
seconds=${FUZZ_SECONDS:-60}
[[ $seconds =~ ^[1-9][0-9]{0,6}$ ]] || { echo "sanitize.sh: FUZZ_SECONDS must be a positive whole number, not '$seconds'" >&2; exit 2; }
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
# Instrumented code runs 2-5x slower: the planner's model-cli suite took
# 360 s here alone (its limit is 300 s, set for the release build), so each
# test's limit is tripled.
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 3 "$@"

# ThreadSanitizer: only dedup_fwd, agebloom-replay (the tests compare with it)
# and the DPDK test program are built; the 'tsan' suite (tests/dpdk/meson.build)
# runs the multi-lcore tests with halt_on_error, so a report fails them.
tsan=${AGEBLOOM_TSAN_DIR:-build-tsan}
if [[ ! -f "$tsan/build.ninja" ]]; then
  CC=clang CXX=clang++ meson setup "$tsan" --buildtype=debugoptimized \
    -Db_sanitize=thread -Db_lundef=false -Dgpu=disabled -Dbenchmarks=disabled
fi
if [[ -d "$tsan/dpdk_app" ]]; then  # meson configures dpdk_app/ only when libdpdk is found
  meson compile -C "$tsan" dedup_fwd agebloom-replay dedup_fwd_test
  meson test -C "$tsan" --no-rebuild --print-errorlogs --suite tsan
else
  echo "sanitize.sh: no DPDK (libdpdk-dev), so no dedup_fwd: the ThreadSanitizer run is skipped"
fi
