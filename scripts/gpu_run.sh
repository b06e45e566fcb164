#!/usr/bin/env bash
# The device side of scripts/gpu_bundle.sh (copied into the bundle as
# run.sh): on a GPU machine, from the repository root, one call that checks
# and times everything and leaves the logs in $OUT.
#   1. the replay algorithm emulated on the host (no device needed);
#   2. the CUDA backend against the CPU filters, bit for bit (gpu_replay_test:
#      10M-key replays, chunked streaming, snapshots both ways, bulk forms);
#   3. (after 4 and 5) agebloom-replay, CPU and GPU, on every bundled real trace and every
#      filter the GPU takes: verdict files must be identical; seconds of each;
#   4. agebloom-gpu-bench: sizes 8 MiB .. 2 GiB, three layouts, and the configuration of Guarded Epoch Bloom Filters (vs its B200 figure);
#   5. (STEPS has "base", and the bundle an older build's benchmark) that
#      benchmark, BASE_ARGS (default --sizes 8M,1G), for ratios on this machine;
#   6. (STEPS has "ncu") Nsight Compute's speed-of-light section for the
#      one-line layout's kernels at 1 GiB: what bounds each.
#   7. (STEPS has "cpu") the CPU benchmark on this machine's host CPU, for
#      issue [fastpath]: CPU_ROUNDS rounds (default 3) of agebloom-bench over
#      CPU_FILTER (default: bulk test_and_insert of the one- and two-line
#      layouts, their memory floors and rte_member's HT cache at W = 1M and
#      64M, and the in-memory pipeline beside 5tswap, stage by stage too), one process a round,
#      with lscpu and the load beside them; the JSON of each round comes back.
# Knobs: BENCH_ARGS (the benchmark's options), REPLAY_KEYS (step 3's keys,
# default "src-ip flow"), NCU_LAUNCHES (kernels profiled, default 40).
# STEPS (default "emulation test bench base replay") picks steps, to split the
# work over several device calls (each at most 10 minutes). Every step has
# its own time limit (LIMIT_<step> seconds), so one that hangs costs its
# limit, not the call.
set -uo pipefail
steps=${STEPS:-emulation test bench base replay}
want() { [[ " $steps " == *" $1 "* ]]; }
b=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/agebloom-gpu}
mkdir -p "$out"
cudalib=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / {print $NF; exit}')
libpath="$b/lib${cudalib:+:$(dirname "$cudalib")}"
limit() { local v="LIMIT_$1"; echo "${!v:-$2}"; }
timed_run() { local s=$1 d=$2; shift 2; timeout -k 5 "$(limit "$s" "$d")" "$b/lib/ld-linux-x86-64.so.2" --library-path "$libpath" "$@"; }
status=0
step() { echo "== $*" | tee -a "$out/summary.txt"; }

nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
if want emulation; then
step "emulation"
timed_run emulation 120 "$b/bin/gpu_replay_emulation_test" >"$out/emulation.log" 2>&1 || status=1
tail -1 "$out/emulation.log" | tee -a "$out/summary.txt"
fi
if want test; then
step "gpu vs cpu"
timed_run test 240 "$b/bin/gpu_replay_test" >"$out/gpu_replay_test.log" 2>&1
rc=$?
[[ $rc -eq 0 ]] || status=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |device:|W=" "$out/gpu_replay_test.log" | tee -a "$out/summary.txt"
fi
if want bench; then
step "bench"
timed_run bench 240 "$b/bin/agebloom-gpu-bench" ${BENCH_ARGS:-} >"$out/gpu_bench.log" 2>&1 || status=1
cat "$out/gpu_bench.log" | tee -a "$out/summary.txt"
fi
if want base && [[ -x $b/bin/agebloom-gpu-bench-base ]]; then
step "base"
# shellcheck disable=SC2086
timed_run base 120 "$b/bin/agebloom-gpu-bench-base" ${BASE_ARGS:---sizes 8M,1G} >"$out/gpu_bench_base.log" 2>&1 || status=1
cat "$out/gpu_bench_base.log" | tee -a "$out/summary.txt"
fi
if want replay; then
step "agebloom-replay cpu vs gpu on real traces"
# One comparison: CPU and GPU verdict files of one trace, filter, key and
# window must be identical. Eight at a time (the machine has 16 cores).
compare() {
  local t=$1 filter=$2 mode=$3 window=$4 n=$5
  local c="$out/tmp/$n.cpu" g="$out/tmp/$n.gpu" jc jg r
  # shellcheck disable=SC2206
  local args=("$t" --key "$mode" --filter "$filter" $window --seed 1 --json)
  jc=$(timed_run replay_one 60 "$b/bin/agebloom-replay" "${args[@]}" --backend cpu --verdicts "$c" 2>&1) || { echo "FAILED cpu $filter $mode ${window// /_} $(basename "$t"): ${jc%%$'\n'*}"; return; }
  jg=$(timed_run replay_one 60 "$b/bin/agebloom-replay" "${args[@]}" --backend gpu --verdicts "$g" 2>&1) || {
    # A plan past the backend's documented limits is refused with the reason
    # (and --backend auto replays it on the CPU): not a difference.
    if [[ $jg == *"the GPU backend replays"* ]]; then r=unsupported; else r=FAILED; fi
    echo "$r gpu $filter $mode ${window// /_} $(basename "$t"): ${jg%%$'\n'*}"
    return
  }
  if cmp -s "$c" "$g"; then r=same; else r=DIFFER; fi
  echo "$r $filter $mode ${window// /_} $(basename "$t") cpu=$(echo "$jc" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["packets"], j["seconds"])') gpu=$(echo "$jg" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["backend"], j["seconds"])')"
  rm -f "$c" "$g"
}
mkdir -p "$out/tmp"
: >"$out/replay.log"
n=0
for filter in guarded-epoch guarded-epoch-blocked ring interleaved interleaved-swept apbf apbbf; do
  for t in "$b"/traces/*.pcap "$b"/traces/*.pcapng; do
   [[ -f $t ]] || continue
    for mode in ${REPLAY_KEYS:-src-ip flow}; do
     for window in "--window 1000" "--ttl 50ms --capacity 5000" "--window 1000 --policy insert-on-miss" \
                   "--ttl 50ms --capacity 5000 --policy insert-on-miss"; do
      while (( $(jobs -rp | wc -l) >= 8 )); do wait -n; done
      n=$((n + 1))
      compare "$t" "$filter" "$mode" "$window" "$n" >>"$out/replay.log" &
     done
    done
  done
done
wait
rm -rf "$out/tmp"
same=$(grep -c '^same' "$out/replay.log")
unsupported=$(grep -c '^unsupported' "$out/replay.log")
echo "identical: $same of $n; refused as past the GPU's limits: $unsupported" | tee -a "$out/summary.txt"
grep '^unsupported' "$out/replay.log" | cut -d: -f2- | sort | uniq -c | tee -a "$out/summary.txt"
grep -v '^same\|^unsupported' "$out/replay.log" | head -20 | tee -a "$out/summary.txt"
[[ $((same + unsupported)) -eq $n ]] || status=1
# The one documented limit is APBF/APBBF past 64 slices: any other refusal is a regression.
# (grep -v reads all its input: a -q that quit early could SIGPIPE the first
# grep and, under pipefail, hide the very refusal it found.)
if grep '^unsupported' "$out/replay.log" | grep -v '^unsupported gpu apbb\?f ' >/dev/null; then
  echo "refusals other than APBF/APBBF's slice limit" | tee -a "$out/summary.txt"
  status=1
fi
fi
if want cpu; then
step "cpu benchmarks"
lscpu >"$out/lscpu.txt" 2>&1 || true
grep -m1 'model name' /proc/cpuinfo | tee -a "$out/summary.txt"
filter=${CPU_FILTER:-'^test_and_insert/(two-line|interleaved|interleaved-swept|floor-one-line|floor-two-lines|rte_member_ht_cache)/bulk(_hashed)?/W:(1048576|67108864)/hit:0/real_time$|^pipeline/(5tswap|dedup_fwd_src_ip/(auto|interleaved|two-line)/|dedup_fwd_flow/auto/|stage/)'}
for round in $(seq 1 "${CPU_ROUNDS:-3}"); do
  echo "round $round: load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/summary.txt"
  # The ring mempool driver preloaded: EAL would look for it in Debian's driver folder.
  timeout -k 5 "$(limit cpu 150)" "$b/lib/ld-linux-x86-64.so.2" --library-path "$libpath" \
    --preload "$b/lib/librte_mempool_ring.so" "$b/bin/agebloom-bench" --benchmark_filter="$filter" \
    --benchmark_min_time="${CPU_MIN_TIME:-0.3}" --benchmark_out="$out/cpu_round$round.json" \
    --benchmark_out_format=json --benchmark_counters_tabular=false >"$out/cpu_round$round.log" 2>&1 || status=1
  tail -3 "$out/cpu_round$round.log" | tee -a "$out/summary.txt"
done
fi
if want ncu; then
step "ncu"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [[ -n $ncu ]]; then
  # The loader runs the bench, so the profiled process is the bundle's.
  timeout -k 5 "$(limit ncu 150)" "$ncu" --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --kernel-name-base function -k 'regex:contains_kernel|line_|insert_kernel|first_setter|verdict_kernel|Onesweep|pack_' \
    --launch-count ${NCU_LAUNCHES:-40} "$b/lib/ld-linux-x86-64.so.2" --library-path "$libpath" "$b/bin/agebloom-gpu-bench" \
    --sizes 1G --layouts line64 --keys 16777216 --no-paper >"$out/ncu.log" 2>&1
  echo "ncu rc $?" | tee -a "$out/summary.txt"
else
  echo "no ncu on this machine" | tee -a "$out/summary.txt"
fi
fi
echo "status $status" | tee -a "$out/summary.txt"
exit $status
