#!/usr/bin/env bash
# Fuzz one target longer than the test suite does, in the sanitizer build:
#   scripts/fuzz.sh key_extract|pcap_reader|options|snapshot_load [SECONDS=600]
# New inputs accumulate in build-asan/fuzz/NAME-found/corpus; a crash input is
# written to .../artifacts: keep it as a regression seed in fuzz/corpus/NAME.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/fuzz.sh key_extract|pcap_reader|options|snapshot_load [SECONDS=600]" >&2; exit 2; }
[[ "${1:-}" == -h || "${1:-}" == --help ]] && { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
(($# >= 1 && $# <= 2)) || usage
name=$1
seconds=${2:-600}
# Checked before any build: a misspelled target built the whole ASan tree
# first, and a SECONDS of 0, -1 or 'abc' reached libFuzzer as no time limit.
[[ -f "fuzz/${name}_fuzz.cpp" ]] || { echo "fuzz.sh: no fuzz target '$name' (fuzz/*_fuzz.cpp)" >&2; usage; }
[[ $seconds =~ ^[1-9][0-9]{0,6}$ ]] || { echo "fuzz.sh: SECONDS must be a positive whole number, not '$seconds'" >&2; usage; }
build=${AGEBLOOM_ASAN_DIR:-build-asan}
[[ -f "$build/build.ninja" ]] || { FUZZ_SECONDS=1 scripts/sanitize.sh --suite fuzz >/dev/null || true; }
ninja -C "$build" "fuzz/${name}_fuzz"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
exec fuzz/run_fuzzer.sh "$build/fuzz/${name}_fuzz" "fuzz/corpus/$name" "$build/fuzz/$name-found" "$seconds"
