#!/usr/bin/env bash
# The pipeline figure: dedup_fwd's cycles per packet (receive, parse, hash,
# filter, forward) beside testpmd's io and 5tswap forwarding modes, on the
# same virtual ports in the same run. Ratios only: the machine is shared.
#
#   scripts/bench_pipeline.sh [--seconds S] [--packets N]
#
# Ports: net_pcap replaying a generated capture in a loop (infinite_rx: 4096
# UDP/IPv4 frames, source IPs drawn from 2^20 addresses) paired with net_null,
# one forwarding core each. dedup_fwd runs in src-ip mode at W = 1M with
# --action count, so it transmits every packet as testpmd does and the
# difference is its per-packet work. Cycles: testpmd's --record-core-cycles
# (busy cycles of the forwarding core / packets) and dedup_fwd's own
# cycles_per_packet (busy cycles around each burst / packets), both TSC.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=5
packets=30000000
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --packets) packets=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds S] [--packets N]" >&2; exit 2 ;;
  esac
done

scripts/setup.sh >/dev/null
build=${AGEBLOOM_BUILD_DIR:-build}
fwd="$build/dpdk_app/dedup_fwd"
testpmd=$(command -v dpdk-testpmd || true)
[[ -x "$fwd" ]] || { echo "bench_pipeline: $fwd not built (libdpdk-dev missing?)" >&2; exit 1; }
[[ -n "$testpmd" ]] || { echo "bench_pipeline: dpdk-testpmd not found (package dpdk)" >&2; exit 1; }

out="$build/bench-results/pipeline"
mkdir -p "$out"
trace="$out/pipeline.pcap"
# A capture small enough for net_pcap's infinite_rx to hold in dedup_fwd's
# 8192-mbuf pool. Its 4096 keys repeat every 4096 packets: at W = 1M every
# key after the first pass is a duplicate, and the filter lines it touches
# stay cached; insertions still rotate epochs (every W/r packets, each
# rotation sweeping the whole filter), so that cost is in the figure.
python3 - "$trace" <<'PY'
import random, struct, sys
random.seed(20261121)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i in range(4096):
        src = 0x0A000000 | random.randrange(1 << 20)
        udp = struct.pack("!HHHH", 1024 + i, 53, 26, 0) + bytes(18)
        ip = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, src, 0xC0A80001)
        frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + udp
        f.write(struct.pack("<IIII", 0, i, len(frame), len(frame)) + frame)
PY

eal=(--no-huge --no-pci -m 1024 --log-level=lib.eal:error
     --vdev "net_pcap0,rx_pcap=$trace,infinite_rx=1" --vdev net_null0)

testpmd_cycles() {  # $1 = forward mode
  local log="$out/testpmd-$1.log"
  # testpmd forwards until a line arrives on stdin.
  (sleep "$seconds"; echo) | "$testpmd" -l 0,1 --file-prefix "agebloom-pipe-$$-$1" "${eal[@]}" -- \
    --forward-mode="$1" --record-core-cycles --total-num-mbufs=16384 >"$log" 2>&1 || true
  rm -rf "/var/run/dpdk/agebloom-pipe-$$-$1"
  grep -o 'CPU cycles/packet=[0-9.]*' "$log" | tail -1 | cut -d= -f2
}

dedup_cycles() {  # $1 = filter name
  local json="$out/dedup_fwd-$1.json"
  "$fwd" -l 0 --file-prefix "agebloom-pipe-$$-$1" "${eal[@]}" -- --key src-ip --window 1000000 \
    --fpr 0.01 --filter "$1" --action count --seed 1 --max-packets "$packets" --stats-interval 0 \
    --stats-json "$json" >"$out/dedup_fwd-$1.log" 2>&1
  rm -rf "/var/run/dpdk/agebloom-pipe-$$-$1"
  python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["cycles_per_packet"])' "$json"
}

io=$(testpmd_cycles io)
swap=$(testpmd_cycles 5tswap)
echo "pipeline: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), net_pcap (infinite_rx) + net_null"
printf '%-42s %10s %10s\n' "forwarder" "cyc/pkt" "/ 5tswap"
printf '%-42s %10s %10s\n' "testpmd io" "$io" "$(python3 -c "print('%.2f' % ($io / $swap))")"
printf '%-42s %10s %10s\n' "testpmd 5tswap" "$swap" "1.00"
for filter in auto interleaved guarded-epoch-blocked; do
  c=$(dedup_cycles "$filter")
  printf '%-42s %10s %10s\n' "dedup_fwd src-ip W=1M --filter $filter" "$c" "$(python3 -c "print('%.2f' % ($c / $swap))")"
done
echo "target: dedup_fwd src-ip at W = 1M no more cycles per packet than testpmd 5tswap (ratio <= 1.00)"
echo "logs and JSON: $out"
