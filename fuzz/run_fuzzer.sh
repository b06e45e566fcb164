#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time: first every committed seed and
# every kept regression input (fuzz/corpus/NAME), then new inputs for SECONDS.
# New corpus entries and any crash input go to OUT, never into the repository.
#   run_fuzzer.sh FUZZER SEEDS OUT SECONDS
set -euo pipefail
fuzzer=$1 seeds=$2 out=$3 seconds=$4
mkdir -p "$out/corpus" "$out/artifacts"
# -timeout: an input that takes over 10 s is a hang, reported as a failure.
exec "$fuzzer" "$out/corpus" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$out/artifacts/" -print_final_stats=1
