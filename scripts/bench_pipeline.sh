#!/usr/bin/env bash
# The pipeline figure: dedup_fwd's cycles per packet (receive, parse, hash,
# filter, forward) beside testpmd's io and 5tswap forwarding modes, on the
# same virtual ports in the same run. Ratios only: the machine is shared.
#
#   scripts/bench_pipeline.sh [--seconds S (default 5)] [--frames F] [--rounds R (default 5)]
#                             [--window W (default 1000000)] [--memory 4k|huge|auto (default 4k)]
#                             [--profile]
#
# --window: dedup_fwd's W, the target's 1M by default. Another W is for
# experiments on the filter's footprint (a smaller filter competes less with
# net_pcap for the caches: docs/PERFORMANCE.md, "A fourth machine: Zen 4");
# the table's rows name it.
#
# --profile: every run also sampled by perf's software clock (cpu-clock,
# 999 Hz: no hardware counters needed; ~10% slower runs), and each
# forwarder's cycles per packet of the last round split by where they went
# (shared object, then function), over the forwarding part of the run.
#
# Memory: 4 KB pages (EAL's --no-huge) by default, which any machine has
# without root, as every documented figure so far; `huge` runs both programs
# on 2 MB hugepages, as DPDK runs in production (a mounted hugetlbfs with
# enough free pages: as root, `echo 512 > /proc/sys/vm/nr_hugepages` and
# `mount -t hugetlbfs nodev /dev/hugepages`); `auto` takes hugepages when
# there are enough. The mode is printed with the figures, since it moves
# them: hugepages made receive and transmit ~10 cycles per packet cheaper
# here, but not dedup_fwd's ratio to 5tswap (docs/PERFORMANCE.md,
# "Hugepages and the pipeline figure").
#
# Port: one net_pcap vdev replaying a generated capture in a loop
# (infinite_rx: F UDP/IPv4 frames, default 2^14, each with its own source IP;
# with no tx_pcap its Tx frees what it is given), one forwarding core each,
# every packet sent back out of the port it came in on. One port and one
# stream on purpose: with a second port (say net_null, whose Rx makes packets
# out of nothing) both programs would also forward that port's cheap empty
# frames and average them into the figure. dedup_fwd runs in src-ip mode at
# W = 1M (and in flow mode beside it) with --action count, so it transmits
# every packet as testpmd does and the difference is its per-packet work. Cycles: testpmd's --record-core-cycles
# (busy cycles of the forwarding core / packets) and dedup_fwd's own
# cycles_per_packet (busy cycles around each burst / packets), both TSC.
# Both run S seconds, start-up included, and are then told to stop (testpmd
# by a line on stdin, dedup_fwd by SIGINT, its orderly shutdown that writes
# the stats JSON): no packet budget, since --max-packets would add an atomic
# per burst (the budget shared by all workers) that no production run pays.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=5
frames=16384
rounds=5
target_window=1000000  # the window of the target the table is read against
window=$target_window
memory=4k
profile=0
usage() { echo "usage: scripts/bench_pipeline.sh [--seconds S] [--frames F] [--rounds R] [--window W] [--memory 4k|huge|auto] [--profile] | --help" >&2; exit 2; }
# An option's value: present, and for the counts a positive decimal integer.
value() { [[ $# -ge 2 && -n "$2" ]] || { echo "bench_pipeline: $1 needs a value" >&2; usage; }; }
count() {
  value "$@"
  [[ $2 =~ ^[1-9][0-9]{0,9}$ ]] || { echo "bench_pipeline: $1 must be a positive integer, not '$2'" >&2; usage; }
}
declare -A given  # an option given twice is refused (the last one won without a word)
while (($#)); do
  if [[ "$1" == --* && "$1" != --help && -n "${given[$1]:-}" ]]; then
    echo "bench_pipeline: $1 given twice" >&2
    usage
  fi
  given[$1]=1
  case "$1" in
    --seconds) count "$@"; seconds=$2; shift 2 ;;
    --frames) count "$@"; frames=$2
      # The capture is written, then held in the mbuf pool (2 KiB a frame):
      # 9999999999 frames wrote hundreds of GB before anything said no.
      ((frames <= 1048576)) || { echo "bench_pipeline: --frames must be at most 1048576 (2 GiB of mbufs), not '$2'" >&2; usage; }
      shift 2 ;;
    --rounds) count "$@"; rounds=$2; shift 2 ;;
    --window) count "$@"; window=$2; shift 2 ;;
    --memory) value "$@"; memory=$2; shift 2 ;;
    --profile) profile=1; shift ;;
    --help | -h) sed -n '2,/^set -euo/p' scripts/bench_pipeline.sh | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_pipeline: unknown option '$1'" >&2; usage ;;
  esac
done
# The window as the table names it: 1M, 64K, or the plain number.
if ((window % 1000000 == 0)); then wname="$((window / 1000000))M"
elif ((window % 1000 == 0)); then wname="$((window / 1000))K"
else wname=$window; fi

mbufs=$((frames + 16384))  # the pool: net_pcap keeps the capture's F frames in it (below)
megabytes=$((512 + mbufs / 256))
# Free 2 MB pages on a mounted hugetlbfs (0 when there is none).
free_huge=0
if grep -qs ' hugetlbfs ' /proc/mounts; then
  free_huge=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
  [[ "$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo)" == 2048 ]] || free_huge=0
fi
case "$memory" in
  auto) if ((free_huge * 2 >= megabytes)); then memory=huge; else memory=4k; fi ;;
  huge) ((free_huge * 2 >= megabytes)) || {
          echo "bench_pipeline: --memory huge needs $megabytes MB of free 2 MB hugepages on a mounted hugetlbfs; $((free_huge * 2)) MB free" >&2
          exit 1
        } ;;
  4k) ;;
  *) echo "bench_pipeline: --memory must be huge, 4k or auto, not '$memory'" >&2; exit 2 ;;
esac

scripts/setup.sh >/dev/null
build=${AGEBLOOM_BUILD_DIR:-build}
fwd="$build/dpdk_app/dedup_fwd"
testpmd=$(command -v dpdk-testpmd || true)
[[ -x "$fwd" ]] || { echo "bench_pipeline: $fwd not built (libdpdk-dev missing?)" >&2; exit 1; }
if ((profile)) && ! command -v perf >/dev/null; then
  echo "bench_pipeline: --profile needs perf (package linux-perf)" >&2
  exit 1
fi
[[ -n "$testpmd" ]] || { echo "bench_pipeline: dpdk-testpmd not found (package dpdk-dev)" >&2; exit 1; }

out="$build/bench-results/pipeline"
mkdir -p "$out"
trace="$out/pipeline.pcap"
# The capture: F frames with F distinct source IPs (an odd multiplier is a
# bijection mod 2^24). net_pcap's infinite_rx loads all of it into the mbuf
# pool, so both programs get a pool of F + 16384 mbufs. At W = 1M the keys
# repeat every F packets, so after the first pass every packet is a duplicate
# (insert-always refreshes it: the same filter work as a fresh key) and its
# line is one of F random lines of the filter's ~54K: with the default
# F = 2^14 about a quarter of the 3.5 MB filter (1 MB of lines) is touched,
# more than the core's L2. A larger F touches all of it, but net_pcap then
# copies every received frame out of F stored mbufs (2 lines each) streaming
# through the cache, which inflates everyone's receive cost (testpmd io: ~63
# cycles at 2^14, ~100 at 2^17) and evicts the filter; a NIC's Rx recycles a
# few hot buffers instead. Epoch rotations, each a sweep of the whole filter
# every W/r packets, are in the figure either way.
python3 - "$trace" "$frames" <<'PY'
import struct, sys
frames = int(sys.argv[2])
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i in range(frames):
        src = 0x0A000000 | ((i * 2654435761) & 0xFFFFFF)
        udp = struct.pack("!HHHH", 1024 + (i & 0x7FFF), 53, 26, 0) + bytes(18)
        ip = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, src, 0xC0A80001)
        frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + udp
        f.write(struct.pack("<IIII", i // 1000000, i % 1000000, len(frame), len(frame)) + frame)
PY

if [[ $memory == huge ]]; then mem=(-m "$megabytes" --in-memory); else mem=(--no-huge -m "$megabytes"); fi
eal=("${mem[@]}" --no-pci --log-level=lib.eal:error --vdev "net_pcap0,rx_pcap=$trace,infinite_rx=1")

# Runs a command, under --profile sampled into $out/$1.perf.data.
sampled() {  # $1 = run stem, then the command
  local name=$1
  shift
  if ((profile)); then perf record -q -e cpu-clock -F 999 -o "$out/$name.perf.data" -- "$@"; else "$@"; fi
}

testpmd_cycles() {  # $1 = forward mode, $2 = run stem (its files' names)
  local log="$out/$2.log" rc=0 figure
  # testpmd forwards until a line arrives on stdin.
  (sleep "$seconds"; echo) | sampled "$2" "$testpmd" -l 0,1 --file-prefix "agebloom-pipe-$$-$2" "${eal[@]}" -- \
    --forward-mode="$1" --record-core-cycles --total-num-mbufs=$mbufs >"$log" 2>&1 || rc=$?
  rm -rf "/var/run/dpdk/agebloom-pipe-$$-$2"
  figure=$(grep -o 'CPU cycles/packet=[0-9.]*' "$log" | tail -1 | cut -d= -f2 || true)
  # A testpmd that failed (or printed no figure) is said with its log, as
  # dedup_fwd is: the script died here without a word.
  if [[ -z "$figure" ]]; then
    echo "bench_pipeline: testpmd $1 printed no cycles per packet (exit status $rc); its log: $log" >&2
    return 1
  fi
  echo "$figure"
}

dedup_cycles() {  # $1 = key mode, $2 = filter name, $3 = run stem (its files' names)
  local json="$out/$3.json"
  local rc=0
  sampled "$3" timeout --preserve-status -s INT "$seconds" "$fwd" -l 1 --file-prefix "agebloom-pipe-$$-$3" "${eal[@]}" -- \
    --key "$1" --window "$window" --fpr 0.01 --filter "$2" --action count --seed 1 --mbufs "$mbufs" \
    --stats-interval 0 --stats-json "$json" >"$out/$3.log" 2>&1 || rc=$?
  if ((rc != 0)); then
    echo "bench_pipeline: dedup_fwd $1 $2 exited with status $rc; its log: $out/$3.log" >&2
    return 1
  fi
  rm -rf "/var/run/dpdk/agebloom-pipe-$$-$3"
  python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["cycles_per_packet"])' "$json"
}

# R rounds (5 by default), each running every forwarder once, so drift on
# this shared machine hits all of them; odd rounds go in table order, even
# rounds in reverse, so that neither side always runs first (a warm-up or a
# neighbour's burst would otherwise favour one). The table gives each one's
# median, and the ratio range over rounds.
# dedup_fwd: the target's case (src-ip, auto), the layouts auto chooses
# between, and flow mode (the 5-tuple key, 14 bytes) beside them; the frames'
# 5-tuples are as distinct as their source addresses.
# Each row's name in the table and its run stem: the names of its log, JSON
# and profile files.
names=("testpmd io" "testpmd 5tswap")
stems=(testpmd-io testpmd-5tswap)
dedup_runs=("src-ip auto" "src-ip interleaved" "src-ip guarded-epoch-blocked" "flow auto")
for d in "${dedup_runs[@]}"; do
  names+=("dedup_fwd ${d% *} W=$wname --filter ${d#* }")
  stems+=("dedup_fwd-${d% *}-${d#* }")
done
run_one() {  # $1 = row index
  if (($1 == 0)); then testpmd_cycles io "${stems[0]}"
  elif (($1 == 1)); then testpmd_cycles 5tswap "${stems[1]}"
  else
    local key filter
    read -r key filter <<< "${dedup_runs[$1 - 2]}"
    dedup_cycles "$key" "$filter" "${stems[$1]}"
  fi
}
declare -A runs
loads=()
for ((r = 1; r <= rounds; ++r)); do
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  order=($(seq 0 $((${#names[@]} - 1))))
  ((r % 2 == 0)) && order=($(seq $((${#names[@]} - 1)) -1 0))
  for i in "${order[@]}"; do runs[$i,$r]=$(run_one "$i"); done
done
table=$(for ((i = 0; i < ${#names[@]}; ++i)); do
  line="${names[$i]}"
  for ((r = 1; r <= rounds; ++r)); do line+=$'\t'"${runs[$i,$r]}"; done
  echo "$line"
done)
# Every round's figure, kept beside the logs: the table below gives medians and ratio ranges only.
printf 'forwarder\t%s\n' "$(seq -s $'\t' 1 "$rounds")" >"$out/rounds.tsv"
echo "$table" >>"$out/rounds.tsv"
# The machine, so a figure is never read without it: CPU model, TSC rate (the
# kernel's, as DPDK's rte_get_tsc_hz would find it), cores, and the 1-minute
# load before each round.
tsc=$(dmesg 2>/dev/null | grep -oE 'tsc: (Refined TSC clocksource calibration: |Detected )[0-9.]+ MHz' | tail -1 |
      grep -oE '[0-9.]+ MHz' || true)
[[ -n "$tsc" ]] || tsc="$(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') MHz (cpu MHz: dmesg unreadable)"
echo "pipeline: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), TSC $tsc, $(nproc) cores, load before each round: ${loads[*]}"
echo "one net_pcap port (infinite_rx, $frames frames), Rx and Tx on it, $rounds rounds, order alternating between rounds"
if [[ $memory == huge ]]; then echo "memory: 2 MB hugepages"; else echo "memory: 4 KB pages (EAL --no-huge; --memory huge for 2 MB hugepages)"; fi
python3 - "$rounds" <<PY
import statistics, sys
rows = [l.split("\t") for l in """$table""".splitlines()]
vals = {r[0]: [float(x) for x in r[1:]] for r in rows}
med = {k: statistics.median(v) for k, v in vals.items()}
io, swap = med["testpmd io"], med["testpmd 5tswap"]
print("%-54s %9s %9s %15s %9s" % ("forwarder", "cyc/pkt", "/ 5tswap", "per round", "over io"))
for name, v in vals.items():
    per = [a / b for a, b in zip(v, vals["testpmd 5tswap"])]
    print("%-54s %9.1f %9.2f %7.2f-%-7.2f %9.1f" % (name, med[name], med[name] / swap, min(per), max(per), med[name] - io))
PY
echo "target: dedup_fwd src-ip at W = 1M no more cycles per packet than testpmd 5tswap (ratio <= 1.00)"
((window == target_window)) || echo "(this run's W is $wname, not the target's: its rows do not measure the target)"
echo "cyc/pkt: median over rounds; per round: that round's ratio to 5tswap, lowest-highest;"
echo "over io: cycles per packet beyond testpmd io (receive + transmit only), each forwarder's own work"
echo "logs and JSON (last round): $out; every round's cycles per packet: $out/rounds.tsv"

if ((profile)); then
  echo
  echo "where each forwarder's cycles per packet went (--profile, last round): perf cpu-clock samples from the"
  echo "PMD's 5th-percentile sample to its last (the forwarding part; start-up loads the capture before it),"
  echo "each shared object's and function's share of them times the run's cycles per packet"
  for ((i = 0; i < ${#names[@]}; ++i)); do
    python3 - "${names[$i]}" "$out/${stems[$i]}.perf.data" "${runs[$i,$rounds]}" <<'PY'
import collections, re, subprocess, sys
name, data, cycles = sys.argv[1], sys.argv[2], float(sys.argv[3])
script = subprocess.run(["perf", "script", "-i", data, "-F", "time,ip,sym,dso"],
                        capture_output=True, text=True, check=True).stdout
rows = []
for line in script.splitlines():
    m = re.match(r"\s*([\d.]+):\s+[0-9a-f]+\s+(.*)\((.*)\)\s*$", line)
    if m:
        rows.append((float(m.group(1)), m.group(2).strip() or "[unknown]", m.group(3).rsplit("/", 1)[-1]))
pmd = sorted(t for t, _, dso in rows if "net_pcap" in dso)
if len(pmd) < 100:
    print(f"  {name}: only {len(pmd)} samples in the PMD, no split")
    sys.exit(0)
lo, hi = pmd[len(pmd) // 20], pmd[-1]
window = [(sym, dso) for t, sym, dso in rows if lo <= t <= hi]
share = cycles / len(window)
print(f"  {name}: {cycles:.1f} cycles/packet, {len(window)} samples")
for dso, c in collections.Counter(dso for _, dso in window).most_common(4):
    print(f"    {dso:40s} {c * share:6.1f}")
for (sym, dso), c in collections.Counter(window).most_common(5):
    print(f"      {sym[:60]:60s} {c * share:6.1f}  ({dso})")
PY
  done
fi
