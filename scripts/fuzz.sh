#!/usr/bin/env bash
# Fuzz one target longer than the test suite does, in the sanitizer build:
#   scripts/fuzz.sh key_extract|pcap_reader|options|snapshot_load [SECONDS=600]
# New inputs accumulate in build-asan/fuzz/NAME-found/corpus; a crash input is
# written to .../artifacts: keep it as a regression seed in fuzz/corpus/NAME.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/fuzz.sh TARGET [SECONDS]}
seconds=${2:-600}
build=${AGEBLOOM_ASAN_DIR:-build-asan}
[[ -f "$build/build.ninja" ]] || { FUZZ_SECONDS=1 scripts/sanitize.sh --suite fuzz >/dev/null || true; }
ninja -C "$build" "fuzz/${name}_fuzz"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
exec fuzz/run_fuzzer.sh "$build/fuzz/${name}_fuzz" "fuzz/corpus/$name" "$build/fuzz/$name-found" "$seconds"
